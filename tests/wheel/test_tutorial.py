"""The tutorial, docs/getting-started.md, run start to end as a newcomer runs it: every command
and every Python block of the page, in its order, in the fresh, never activated environment of
the built wheels (support/fresh_install.py).

The page's install commands are not run again here: the fixture installed the same wheels with
the same extras, and tests/wheel/test_readme_install.py runs the README's install lines, which
tests/core/test_docs.py holds equal to the page's. Every other line of a bash block must be one
this test knows how to run, so a command added to the page is run here or fails the test.
"""

from __future__ import annotations

import re
import shlex

import pytest

from support.fresh_install import FreshInstall
from support.paths import DOCS

pytestmark = [pytest.mark.wheel, pytest.mark.spark, pytest.mark.slow]

TUTORIAL = DOCS / "getting-started.md"
_BLOCK = re.compile(r"^```(bash|python)\n(.*?)^```", re.DOTALL | re.MULTILINE)
# What the fixture did already: making the venv, installing, building the wheels.
_INSTALLS = re.compile(r"(-m venv |pip install |-m build |^\s*dist/)")


def _commands(text: str) -> list[str]:
    """A bash block's commands: continuation lines joined, comments and blank lines left out."""
    joined = re.sub(r"\\\n\s*", " ", text)
    lines = (line.split("  #", 1)[0].strip() for line in joined.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def test_the_tutorial_runs_start_to_end(fresh: FreshInstall) -> None:
    blocks = _BLOCK.findall(TUTORIAL.read_text())
    assert [kind for kind, _ in blocks].count("python") >= 2, "the page lost its Python blocks"
    env: dict[str, str] = {}
    script: list[str] = []
    ran: list[str] = []
    for kind, text in blocks:
        if kind == "python":
            script.append(text)
            continue
        for command in _commands(text):
            if _INSTALLS.search(command):
                continue
            words = shlex.split(command)
            if words[0] == "export" and words[1].startswith("PYSPARK_PYTHON="):
                env["PYSPARK_PYTHON"] = fresh.python  # "$PWD/.venv/bin/python" is this venv's
            elif words[0] in (".venv/bin/pysparksources", "pysparksources"):
                done = fresh.run(fresh.command("pysparksources"), *words[1:], timeout=600, **env)
                assert done.returncode == 0, command + done.stdout[-3000:] + done.stderr[-3000:]
                if words[1:] == ["doctor"]:
                    assert "[FAIL]" not in done.stdout, done.stdout
                if words[1:] == ["demo"]:
                    assert "exactly once" in done.stdout, done.stdout[-3000:]
            else:
                pytest.fail(f"the tutorial has a command this test cannot run: {command}")
            ran.append(command)
    assert ran == [
        'export PYSPARK_PYTHON="$PWD/.venv/bin/python"',
        ".venv/bin/pysparksources doctor",
        "pysparksources demo",
    ], ran
    # The page's Python, one script in the page's order (a later block uses `spark`).
    done = fresh.script("\n".join(script), **env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Batch: 1" in done.stdout and "|timestamp" in done.stdout, done.stdout[-3000:]
