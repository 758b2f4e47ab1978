"""The warning on import and the command line's check of the Python Spark starts for workers.

Spark's default worker Python is ``python3`` from PATH; here PATH holds only a link to the base
interpreter of this virtual environment, which has no pysparksources -- the situation of a
venv run without activation. (tests/wheel checks the same with a wheel in a fresh venv, and
``register()`` refusing in a real Spark session.)
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pysparksources._core import worker_python as _worker_python

FIX = f"export PYSPARK_PYTHON={sys.executable} before Spark starts"


@pytest.fixture
def base_python_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A PATH whose python3 is the base interpreter, without this environment's packages."""
    monkeypatch.chdir(tmp_path)  # python -c imports from the working folder: not the checkout
    base = Path(sys.base_prefix) / "bin" / "python3"
    assert sys.prefix != sys.base_prefix, "run the tests from the project's virtual environment"
    assert _worker_python.import_failure(str(base)) is not None, f"{base} has pysparksources"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(base)
    return str(bin_dir)


def import_warnings(path: str, **extra: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYSPARK_PYTHON"} | extra
    env["PATH"] = path
    result = subprocess.run(
        [sys.executable, "-c", "import pysparksources, pysparksources.cli"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    return result.stderr


def test_import_warns_once_with_the_fix_when_paths_python3_is_another_environment(
    base_python_path: str,
) -> None:
    stderr = import_warnings(base_python_path)
    assert stderr.count("PYSPARK_PYTHON is unset") == 1, stderr
    assert f"python3 from PATH ({base_python_path}/python3)" in stderr
    assert FIX in stderr and "pysparksources doctor" in stderr


def test_import_is_quiet_when_the_workers_python_is_set_or_is_this_one(
    base_python_path: str,
) -> None:
    assert import_warnings(base_python_path, PYSPARK_PYTHON=sys.executable) == ""
    assert import_warnings(str(Path(sys.executable).parent)) == ""
    # Spark's own workers import the package too: they are the workers' Python.
    assert import_warnings(base_python_path, PYTHON_WORKER_FACTORY_SECRET="x") == ""


def test_import_warns_when_there_is_no_python3_at_all(tmp_path: Path) -> None:
    stderr = import_warnings(str(tmp_path))
    assert "there is no python3 on PATH" in stderr and FIX in stderr


def test_the_command_lines_check_runs_paths_python3(
    base_python_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    monkeypatch.setenv("PATH", base_python_path)
    problem = _worker_python.path_python_problem()
    assert problem is not None
    assert "cannot import pysparksources (ModuleNotFoundError" in problem and FIX in problem
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))
    assert _worker_python.path_python_problem() is None
    monkeypatch.setenv("PYSPARK_PYTHON", "/somewhere/else/python")
    assert _worker_python.path_python_problem() is None  # the user chose; doctor checks it


def test_the_import_warning_is_logged_once_per_process(
    base_python_path: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    monkeypatch.setenv("PATH", base_python_path)
    monkeypatch.setattr(_worker_python, "_warned", False)
    with caplog.at_level(logging.WARNING, logger="pysparksources"):
        _worker_python.warn_at_import()
        _worker_python.warn_at_import()
    assert len(caplog.records) == 1 and FIX in caplog.text
    assert _worker_python.already_warned()
