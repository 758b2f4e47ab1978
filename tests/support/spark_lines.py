"""The older Spark lines' tiers: the tests marked ``lines`` in a venv with that line's PySpark.

Each tier's virtual environment holds one PySpark and everything the tests need, installed once
per machine and kept in ``$PYSPARKSOURCES_CACHE`` (``~/.cache/pysparksources`` by default),
named after the line's PySpark version and a digest of what it installs, so a change to the
requirements or the floors makes a new one. Each run then installs this checkout's two
distributions into it without dependencies (editable, seconds) under an exclusive lock, and runs
pytest there with ``-m lines`` from the checkout. The 4.0 tier installs every dependency at the
lowest version the package claims (tests/lines/floors.txt); the 4.1 tier the newest.

The refusal tier installs PySpark 3.5 alone (none of its extras: nothing needs to run) and checks
that each way in says which Spark is there and which is needed.

``./dev lines [LINE...]`` runs tiers from the command line; tests/lines/test_spark_line_tiers.py
runs them inside the main suite.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from support.paths import EMULATOR, PRODUCT, ROOT, TESTS

__all__ = ["LINES", "REFUSED", "Line", "prepared_venv", "run_tier"]

FLOORS = TESTS / "lines" / "floors.txt"
REQUIREMENTS = ROOT / "requirements-dev.txt"
LINT_REQUIREMENTS = ROOT / "requirements-lint.txt"  # which requirements-dev.txt includes
# What a tier's processes must not inherit from the suite that started it: its Spark layout,
# its Connect server, its virtual environment.
INHERITED = {
    "PYSPARK_PYTHON",
    "PYSPARK_DRIVER_PYTHON",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "SPARK_HOME",
    "SPARK_CONF_DIR",
    "SPARK_SUBMIT_OPTS",
    "SPARK_CONNECT_MODE_ENABLED",
    "SPARK_REMOTE",
    "SPARK_LOCAL_REMOTE",
    "PYTEST_XDIST_WORKER",
    "PYTEST_XDIST_WORKER_COUNT",
    "PYTEST_CURRENT_TEST",
}


@dataclass(frozen=True)
class Line:
    """One Spark line's tier: the PySpark it installs, and whether at the dependency floors."""

    name: str
    pyspark: str
    floors: bool = False

    @property
    def at_floors(self) -> bool:
        """numpy 1.23.2 and PyYAML 6.0.1 have no wheels past Python 3.11 (floors.txt)."""
        return self.floors and sys.version_info < (3, 12)

    def constraints(self) -> str:
        pinned = f"pyspark=={self.pyspark}\n"
        return pinned + (FLOORS.read_text() if self.at_floors else "")


LINES = {
    line.name: line
    for line in (
        # The first release of the first line, with every dependency at its floor.
        Line("4.0", "4.0.0", floors=True),
        Line("4.1", "4.1.4"),
    )
}
REFUSED = Line("3.5", "3.5.8")


def cache_root() -> Path:
    configured = os.environ.get("PYSPARKSOURCES_CACHE")
    root = Path(configured) if configured else Path.home() / ".cache" / "pysparksources"
    return root / "spark-lines"


def _digest(line: Line, full: bool) -> str:
    text = line.constraints()
    if full:
        text += REQUIREMENTS.read_text() + LINT_REQUIREMENTS.read_text()
        text += "".join((p / "pyproject.toml").read_text() for p in (PRODUCT, EMULATOR))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@contextmanager
def _locked(venv: Path) -> Iterator[None]:
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{venv}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _pip(venv: Path, *args: str, constraints: Path | None = None) -> None:
    command = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *args]
    if constraints is not None:
        command += ["-c", str(constraints)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"pip install {' '.join(args)} failed:\n{result.stderr[-4000:]}")


def _create(venv: Path, line: Line, full: bool) -> None:
    """A new venv for ``line`` (in a folder of its own, renamed into place when complete)."""
    building = venv.with_name(venv.name + ".building")
    subprocess.run(["rm", "-rf", str(building)], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(building)], check=True)
    constraints = building / "constraints.txt"
    constraints.write_text(line.constraints())
    _pip(building, "--upgrade", "pip", "setuptools>=68", "wheel")  # editable installs build
    if full:
        _pip(building, "-r", str(REQUIREMENTS), constraints=constraints)
    else:  # PySpark alone (and py4j, its one dependency): only its version is read
        _pip(building, f"pyspark=={line.pyspark}")
    building.rename(venv)


@contextmanager
def prepared_venv(line: Line, full: bool = True) -> Iterator[Path]:
    """``line``'s cached venv with this checkout's distributions in it, held exclusively."""
    venv = cache_root() / f"pyspark-{line.pyspark}-{_digest(line, full)}"
    with _locked(venv):
        if not (venv / "bin" / "python").exists():
            _create(venv, line, full)
        _pip(venv, "--no-deps", "--no-build-isolation", "-e", str(EMULATOR), "-e", str(PRODUCT))
        yield venv


def tier_env(venv: Path) -> dict[str, str]:
    """The environment a tier's pytest runs in: the venv's Python everywhere, nothing of the
    suite that started it."""
    env = {k: v for k, v in os.environ.items() if k not in INHERITED}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    env["PYSPARK_PYTHON"] = str(venv / "bin" / "python")
    return env


def marked_modules() -> list[str]:
    """The test modules that mark a test ``lines``: only those are collected, so a module of
    the main suite that imports what only newer lines have never breaks a tier."""
    return sorted(
        str(path.relative_to(ROOT))
        for path in TESTS.rglob("test_*.py")
        if "mark.lines" in path.read_text()
    )


def run_tier(
    line: Line, *pytest_args: str, timeout: float = 1800
) -> subprocess.CompletedProcess[str]:
    """Run the tests marked ``lines`` on ``line``'s PySpark; the completed pytest process."""
    with prepared_venv(line) as venv:
        env = tier_env(venv)
        env["PYSPARKSOURCES_EXPECTED_PYSPARK"] = line.pyspark
        python = str(venv / "bin" / "python")
        command = [python, "-m", "pytest", "-m", "lines", *pytest_args, *marked_modules()]
        return subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
        )
