"""The command line's check of the Python Spark starts for workers, and how register() finds
what the session already resolves. (Importing the package says nothing about the workers'
Python: tests/core/test_cli_worker_python.py.)

Spark's default worker Python is ``python3`` from PATH; here PATH holds only a link to the base
interpreter of this virtual environment, which has no pysparksources -- the situation of a
venv run without activation. (tests/wheel checks the same with a wheel in a fresh venv, and
``register()`` refusing in a real Spark session.)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import pysparksources
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


def test_the_session_resolves_the_automatically_registered_classes(spark: Any) -> None:
    """register() leaves alone what Spark already resolves to the same class (no WARN that it
    replaced a registered data source); anything else it registers."""
    from pysparksources._core.probe import ImportProbe
    from pysparksources._core.registry import load_source

    rate = load_source("pyrate")
    assert spark.read.format("pyrate").option("totalRows", 2).load().count() == 2
    assert _worker_python.resolves_to(spark, rate)
    assert all(_worker_python.resolves_to(spark, load_source(n)) for n in ("pyfile", "pyeventhub"))

    class Another(rate):  # type: ignore[misc, valid-type]
        """The same name, another class: register() must put it in place."""

    assert not _worker_python.resolves_to(spark, Another)
    assert not _worker_python.resolves_to(object(), rate)  # no JVM here (Spark Connect)
    pysparksources.register(spark, "pyrate")
    assert _worker_python.resolves_to(spark, ImportProbe)  # the probe is registered once


def test_a_pickled_class_is_read_without_unpickling() -> None:
    import pickle

    from pyspark import cloudpickle

    from pysparksources._core.registry import load_source

    rate = load_source("pyrate")
    expected = ("pysparksources.rate.datasource", "RateDataSource")
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        assert _worker_python._pickled_class(pickle.dumps(rate, protocol)) == expected
    assert _worker_python._pickled_class(cloudpickle.dumps(rate)) == expected

    class Local:
        pass

    by_value = _worker_python._pickled_class(cloudpickle.dumps(Local))
    assert by_value is not None and by_value[0].startswith("pyspark.cloudpickle")
    assert _worker_python._pickled_class(b"not a pickle") is None
