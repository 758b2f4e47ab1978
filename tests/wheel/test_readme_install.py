"""The README's install commands, run as written in a clone whose folder is not named after the
project: from the clone's source, then by building both wheels and installing them elsewhere."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.paths import README, ROOT

pytestmark = [pytest.mark.wheel, pytest.mark.slow]

# What a clone holds that the copy leaves out: environments, tools, caches, build output.
NOT_IN_A_CLONE = shutil.ignore_patterns(
    ".git", ".venv*", ".tools", "__pycache__", "*.egg-info", "build", "dist", "site", ".*_cache"
)


def _install_blocks() -> list[str]:
    """The bash blocks of the README's Install section, dedented, continuation lines joined."""
    section = README.read_text().split("## Install", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.DOTALL)
    return [
        re.sub(r"\\\n\s*", "", "\n".join(line.strip() for line in b.splitlines())) for b in blocks
    ]


def test_the_readmes_install_commands_work_in_a_clone_of_any_name(tmp_path: Path) -> None:
    clone = tmp_path / "my-checkout"
    shutil.copytree(ROOT, clone, ignore=NOT_IN_A_CLONE)
    elsewhere = tmp_path / "elsewhere"  # "install them anywhere": another environment
    subprocess.run([sys.executable, "-m", "venv", str(elsewhere)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = f"{elsewhere / 'bin'}{os.pathsep}{env['PATH']}"  # its pip is the bare `pip`
    from_source, from_wheels = _install_blocks()[:2]
    for block in (from_source, from_wheels):
        run = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block],
            cwd=clone,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert run.returncode == 0, f"{block}\n{run.stdout[-2000:]}{run.stderr[-3000:]}"
    probe = "import pysparksources, pysparksources_emulator, pyspark, azure.eventhub"
    for python in (clone / ".venv" / "bin" / "python", elsewhere / "bin" / "python"):
        imported = subprocess.run([str(python), "-c", probe], capture_output=True, text=True)
        assert imported.returncode == 0, (python, imported.stderr[-2000:])
