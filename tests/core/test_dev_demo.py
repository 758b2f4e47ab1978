"""``./dev demo`` runs what .venv holds and never turns a user's plain install editable.

The script runs in a copy of its folder whose ``.venv/bin/python`` is a stand-in that logs how
it was called: ``-c`` (the probe for the demo's packages) answers as the scenario says, and a
``-m pip install`` only records its arguments. No package is installed, no Spark starts.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

from support.paths import ROOT

STAND_IN = """#!/bin/bash
echo "$*" >> "{log}"
case "$1" in
  -c) exit {probe} ;;
esac
exit 0
"""


def _run_demo(tmp_path: Path, demo_installed: bool) -> list[str]:
    """The stand-in Python's calls during ``./dev demo --help``."""
    repo = tmp_path / "repo"
    for name in ("dev", "requirements-dev.txt", "requirements-lint.txt", "requirements-docs.txt"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, repo / name)
    for package in ("pysparksources", "pysparksources-emulator"):
        (repo / "packages" / package).mkdir(parents=True)
        shutil.copy(ROOT / "packages" / package / "pyproject.toml", repo / "packages" / package)
    log = tmp_path / "calls.log"
    log.touch()
    bin_dir = repo / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name, text in {
        "python": STAND_IN.format(log=log, probe=0 if demo_installed else 1),
        "pysparksources": f'#!/bin/bash\necho "pysparksources $*" >> "{log}"\n',
    }.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(stat.S_IRWXU)
    java = tmp_path / "tools" / "java"  # ./dev demo asks for Java before Spark starts
    java.parent.mkdir()
    java.write_text("#!/bin/bash\n")
    java.chmod(stat.S_IRWXU)
    env = os.environ | {"PATH": f"{java.parent}:{os.environ['PATH']}"}
    result = subprocess.run(
        [str(repo / "dev"), "demo", "--help"], capture_output=True, text=True, env=env, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return log.read_text().splitlines()


def test_dev_demo_runs_a_plain_install_as_it_is(tmp_path: Path) -> None:
    calls = _run_demo(tmp_path, demo_installed=True)
    assert not [call for call in calls if call.startswith("-m pip")], calls
    assert calls[-1] == "pysparksources demo --help"


def test_dev_demo_installs_what_is_missing_plainly(tmp_path: Path) -> None:
    calls = _run_demo(tmp_path, demo_installed=False)
    installs = [call for call in calls if call.startswith("-m pip install") and "packages" in call]
    assert installs, calls
    assert not [call for call in installs if " -e " in f" {call} "], installs
    assert calls[-1] == "pysparksources demo --help"
