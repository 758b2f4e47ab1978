"""``./dev lint`` and ``./dev site`` need Python and nothing else: no Java, no test servers,
none of .venv (each makes a venv of its own: .venv-lint, .venv-docs).

It runs here with a PATH holding only the few commands the script itself calls (bash,
dirname, find, touch), so a ``java`` (or anything else) it reached for would fail it. It
makes .venv-lint from requirements-lint.txt (and .venv-docs from requirements-docs.txt) the
first time (a minute); CI has run ``./dev lint`` just before, so there it is only the lint itself.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.paths import ROOT

pytestmark = pytest.mark.slow

COMMANDS = ("bash", "dirname", "find", "touch")
# What requirements-dev.txt adds for the tests: servers, test tools, the site's builder.
TEST_SETUP = ("moto", "flask", "pyftpdlib", "trustme", "hypothesis", "xdist", "mkdocs", "build")


def _bare_env(tmp_path: Path) -> dict[str, str]:
    """A PATH with only the commands the script calls, and the base interpreter (not .venv's):
    what a machine with only Python has."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in COMMANDS:
        found = shutil.which(name)
        assert found, f"{name} is not on PATH"
        (bin_dir / name).symlink_to(found)
    keep = {"HOME", "LANG", "LC_ALL", "PIP_INDEX_URL", "PIP_FIND_LINKS", "PIP_CONFIG_FILE"}
    env = {k: v for k, v in os.environ.items() if k in keep}
    return env | {"PATH": str(bin_dir), "PYTHON": getattr(sys, "_base_executable", sys.executable)}


def _test_setup_in(venv: str) -> list[str]:
    """The modules of the test setup that the venv's Python finds."""
    probe = (
        "import importlib.util as u, json; "
        "print(json.dumps([m for m in MODULES if u.find_spec(m)]))"
    )
    found = subprocess.run(
        [str(ROOT / venv / "bin" / "python"), "-c", f"MODULES = {list(TEST_SETUP)!r}; {probe}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return list(json.loads(found.stdout))


def test_dev_lint_runs_without_java(tmp_path: Path) -> None:
    env = _bare_env(tmp_path)
    result = subprocess.run(
        [str(ROOT / "dev"), "lint"], capture_output=True, text=True, env=env, timeout=1200
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-5000:]
    assert "java" not in output.lower()
    assert "Success: no issues found" in result.stdout  # mypy
    assert "Contracts: " in result.stdout and " 0 broken." in result.stdout  # import-linter
    # None of the test setup went into the lint's environment.
    assert _test_setup_in(".venv-lint") == []


def test_dev_site_builds_in_its_own_venv_and_leaves_venv_alone(tmp_path: Path) -> None:
    """A user's .venv (the README's plain install) is not the place for the site's builder, let
    alone the test setup: ./dev site builds from .venv-docs, without Java."""
    venv = ROOT / ".venv"
    before = {p.name: p.stat().st_mtime_ns for p in venv.rglob("site-packages/*")}
    result = subprocess.run(
        [str(ROOT / "dev"), "site", "--site-dir", str(tmp_path / "site")],
        capture_output=True,
        text=True,
        env=_bare_env(tmp_path),
        timeout=1200,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-5000:]
    assert (tmp_path / "site" / "index.html").is_file()
    after = {p.name: p.stat().st_mtime_ns for p in venv.rglob("site-packages/*")}
    assert after == before, "./dev site changed .venv"
    assert _test_setup_in(".venv-docs") == ["mkdocs"]
