"""tests/lines/floors.txt, which the 4.0 tier installs, holds exactly the project's floors."""

from __future__ import annotations

import re

from support.paths import PRODUCT, TESTS

# A quoted requirement with a lower bound in pyproject.toml: "name[extras]>=version...".
REQUIREMENT = re.compile(r'"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\s*>=\s*([0-9][0-9.]*)[^"]*"')


def claimed_floors() -> dict[str, str]:
    text = (PRODUCT / "pyproject.toml").read_text()
    section = text[text.index("dependencies = [") : text.index("[project.scripts]")]
    return {
        name.lower(): version
        for name, version in REQUIREMENT.findall(section)
        if name.lower() not in {"pyspark", "pysparksources"}
    }


def pinned_floors() -> dict[str, str]:
    pinned = {}
    for line in (TESTS / "lines" / "floors.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pinned[name.strip().lower()] = version.strip()
    return pinned


def test_the_floors_file_pins_every_lower_bound_the_project_claims() -> None:
    claimed, pinned = claimed_floors(), pinned_floors()
    assert set(pinned) == set(claimed), "floors.txt and pyproject.toml name other packages"
    for name, version in claimed.items():
        padded = version + ".0" * (2 - version.count("."))
        assert pinned[name] in {version, padded}, (
            f"{name}: {pinned[name]} pinned, {version} claimed"
        )
