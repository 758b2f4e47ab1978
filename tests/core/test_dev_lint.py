"""``./dev lint`` needs Python and nothing else: no Java, no test servers, none of .venv.

It runs here with a PATH holding only the few commands the script itself calls (bash,
dirname, find, touch), so a ``java`` (or anything else) it reached for would fail it. It
makes .venv-lint from requirements-lint.txt the first time (a minute); CI has run
``./dev lint`` just before, so there it is only the lint itself.
"""

from __future__ import annotations

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


def test_dev_lint_runs_without_java(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in COMMANDS:
        found = shutil.which(name)
        assert found, f"{name} is not on PATH"
        (bin_dir / name).symlink_to(found)
    keep = {"HOME", "LANG", "LC_ALL", "PIP_INDEX_URL", "PIP_FIND_LINKS", "PIP_CONFIG_FILE"}
    env = {k: v for k, v in os.environ.items() if k in keep}
    # The base interpreter (not .venv's): what a machine with only Python has.
    env |= {"PATH": str(bin_dir), "PYTHON": getattr(sys, "_base_executable", sys.executable)}
    result = subprocess.run(
        [str(ROOT / "dev"), "lint"], capture_output=True, text=True, env=env, timeout=1200
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-5000:]
    assert "java" not in output.lower()
    assert "Success: no issues found" in result.stdout  # mypy
    assert "Contracts: " in result.stdout and " 0 broken." in result.stdout  # import-linter
    # None of the test setup went into the lint's environment.
    probe = "import importlib.util as u; print([m for m in MODULES if u.find_spec(m)])"
    lint_python = ROOT / ".venv-lint" / "bin" / "python"
    found = subprocess.run(
        [str(lint_python), "-c", f"MODULES = {list(TEST_SETUP)!r}; {probe}"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout.strip() == "[]"
