"""What a package index shows of each distribution: ``twine check`` passes on both wheels and
sdists, each carries the license file, and its metadata has the fields a user reads there
(license expression, classifiers PyPI accepts, supported Pythons, a Markdown description
without links that only resolve inside the repository). The builds are the ``fresh`` fixture's,
shared with the other wheel tests."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import zipfile
from email.message import Message
from email.parser import Parser
from pathlib import Path

import pytest
import trove_classifiers

import pysparksources
from support.fresh_install import FreshInstall
from support.paths import EMULATOR, PRODUCT, ROOT

PYTHONS = {"3.10", "3.11", "3.12", "3.13"}

# A Markdown link or image whose target is neither a URL nor an anchor of the same page:
# it points into the repository, which the index's page does not have.
RELATIVE_LINK = re.compile(r"!?\[[^\]]*\]\((?!https?://|#)([^)\s]+)")


def test_one_license_text_everywhere() -> None:
    """The repository's LICENSE is the file each project folder packages (setuptools only
    takes license files from inside the project)."""
    text = (ROOT / "LICENSE").read_bytes()
    assert b"Apache License" in text and b"Version 2.0, January 2004" in text
    for project in (PRODUCT, EMULATOR):
        assert (project / "LICENSE").read_bytes() == text, project


@pytest.mark.slow
def test_twine_check_passes_on_every_artifact(fresh: FreshInstall) -> None:
    dists = fresh.dists
    files = [dists.product_wheel, dists.product_sdist, dists.emulator_wheel, dists.emulator_sdist]
    result = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("PASSED") == len(files), result.stdout


def _wheel_member(wheel: Path, suffix: str) -> bytes:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if ".dist-info/" in n and n.endswith(suffix)]
        return archive.read(name)


def _sdist_member(sdist: Path, name: str) -> bytes:
    with tarfile.open(sdist) as archive:
        (member,) = [m for m in archive.getmembers() if m.name.split("/", 1)[-1] == name]
        extracted = archive.extractfile(member)
        assert extracted is not None, member.name
        return extracted.read()


def _check_metadata(metadata: Message, project: Path) -> None:
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata.get_all("License-File") == ["LICENSE"]
    assert metadata["Requires-Python"] == ">=3.10"
    assert metadata["Description-Content-Type"] == "text/markdown"
    classifiers = metadata.get_all("Classifier") or []
    unknown = [c for c in classifiers if c not in trove_classifiers.classifiers]
    assert unknown == [], unknown
    versions = {c.rsplit(" :: ", 1)[1] for c in classifiers if re.search(r":: 3\.\d+$", c)}
    assert versions == PYTHONS, versions
    assert "Operating System :: OS Independent" in classifiers
    # The long description is the project's README, whole, with no repository-relative link.
    readme = (project / "README.md").read_text(encoding="utf-8")
    body = metadata.get_payload()
    assert isinstance(body, str) and body.strip() == readme.strip()
    assert RELATIVE_LINK.findall(body) == []


@pytest.mark.slow
@pytest.mark.parametrize("which", ["product", "emulator"])
def test_each_wheel_and_sdist_carries_the_license_and_metadata(
    fresh: FreshInstall, which: str
) -> None:
    dists = fresh.dists
    project, wheel, sdist = {
        "product": (PRODUCT, dists.product_wheel, dists.product_sdist),
        "emulator": (EMULATOR, dists.emulator_wheel, dists.emulator_sdist),
    }[which]
    license_text = (ROOT / "LICENSE").read_bytes()
    assert _wheel_member(wheel, ".dist-info/licenses/LICENSE") == license_text
    assert _sdist_member(sdist, "LICENSE") == license_text
    wheel_metadata = Parser().parsestr(_wheel_member(wheel, "METADATA").decode())
    sdist_metadata = Parser().parsestr(_sdist_member(sdist, "PKG-INFO").decode())
    for metadata in (wheel_metadata, sdist_metadata):
        _check_metadata(metadata, project)
    assert wheel_metadata["Version"] == sdist_metadata["Version"]
    assert wheel_metadata.get_all("Classifier") == sdist_metadata.get_all("Classifier")
    if which == "product":  # the version's one place is what the index shows
        assert wheel_metadata["Version"] == pysparksources.__version__
