"""The newcomer's path: build the sdist and wheel, install the wheel into a fresh virtual
environment, and use it the way the README says, without activating that environment.

Everything runs from a folder outside the checkout with PYSPARK_PYTHON unset and neither this
environment nor the fresh one on PATH, so Spark's default worker Python is PATH's python3,
which has no pysparksources: importing the package, register(), the demo and doctor must each
name the fix, and with the fix the sources register by themselves.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.demo_output import check_two_batch_demo
from support.paths import ROOT

# The module's fixture builds the sdist and wheel and a fresh venv: about a minute.
pytestmark = [pytest.mark.wheel, pytest.mark.spark, pytest.mark.slow]

# Spark and connect-mode markers an outer session may have left; PYTHONPATH would leak the
# checkout into the fresh environment.
DROPPED = {
    "PYSPARK_PYTHON",
    "PYSPARK_DRIVER_PYTHON",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "SPARK_HOME",
    "SPARK_CONNECT_MODE_ENABLED",
    "SPARK_REMOTE",
    "SPARK_LOCAL_REMOTE",
}


@dataclass(frozen=True)
class FreshInstall:
    venv: Path
    workdir: Path  # outside the checkout
    env: dict[str, str]  # PYSPARK_PYTHON unset, no virtual environment on PATH

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    def run(
        self, *args: str, timeout: float = 300, **extra_env: str
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(args),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=self.workdir,
            env=self.env | extra_env,
        )

    def script(self, code: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
        return self.run(self.python, "-c", textwrap.dedent(code), **extra_env)


def _path_without_virtual_environments(*venvs: Path) -> str:
    bins = {os.path.realpath(Path(sys.executable).parent)} | {
        os.path.realpath(v / "bin") for v in venvs
    }
    kept = [p for p in os.environ["PATH"].split(os.pathsep) if os.path.realpath(p) not in bins]
    return os.pathsep.join(kept)


def _timed(label: str, timings: dict[str, float], cmd: list[str], **kwargs: object) -> None:
    start = time.monotonic()
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    timings[label] = time.monotonic() - start
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FreshInstall]:
    base = tmp_path_factory.mktemp("wheel")
    timings: dict[str, float] = {}
    dist = base / "dist"
    # sdist first, then the wheel built from the sdist: both must be complete.
    _timed(
        "build sdist+wheel",
        timings,
        [sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)],
        timeout=600,
    )
    wheels = sorted(dist.glob("pysparksources-*.whl"))
    assert wheels and sorted(dist.glob("pysparksources-*.tar.gz")), sorted(dist.iterdir())
    venv = base / "venv"
    # No pip inside: this environment's pip installs into it (pip --python), which saves
    # bootstrapping pip. Bytecode is compiled as usual: without it every first Python worker
    # compiles PySpark and can miss Spark's 10 s connect-back deadline on a loaded machine.
    _timed("venv", timings, [sys.executable, "-m", "venv", "--without-pip", str(venv)])
    _timed(
        "install wheel[spark,eventhubs]",
        timings,
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
         "--quiet", f"{wheels[-1]}[spark,eventhubs]"],
        timeout=900,
    )  # fmt: skip
    print("wheel smoke setup:", ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()))
    workdir = base / "work"
    workdir.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in DROPPED}
    env["PATH"] = _path_without_virtual_environments(venv)
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    yield FreshInstall(venv, workdir, env)
    shutil.rmtree(base, ignore_errors=True)


def test_paths_python3_is_not_the_fresh_environment(fresh: FreshInstall) -> None:
    """The premise of the checks below: Spark's default worker Python lacks the package."""
    python3 = shutil.which("python3", path=fresh.env["PATH"])
    assert python3 is not None
    result = fresh.run(python3, "-c", "import pysparksources")
    assert result.returncode != 0 and "No module named 'pysparksources'" in result.stderr


def test_importing_the_package_names_the_fix(fresh: FreshInstall) -> None:
    result = fresh.script("import pysparksources")
    assert result.returncode == 0, result.stderr
    assert f"export PYSPARK_PYTHON={fresh.python} before Spark starts" in result.stderr
    assert "pysparksources doctor" in result.stderr
    assert result.stderr.count("PYSPARK_PYTHON is unset") == 1  # once

    with_fix = fresh.script("import pysparksources", PYSPARK_PYTHON=fresh.python)
    assert with_fix.returncode == 0 and with_fix.stderr == ""


def test_register_refuses_with_the_fix(fresh: FreshInstall) -> None:
    refused = fresh.script(
        """
        from pyspark.sql import SparkSession
        import pysparksources
        spark = SparkSession.builder.master("local[1]").getOrCreate()
        try:
            print("REGISTERED", pysparksources.register(spark))
        except pysparksources.WorkerPythonError as exc:
            print("REFUSED", exc)
        spark.stop()
        """
    )
    assert refused.returncode == 0, refused.stdout + refused.stderr[-3000:]
    line = next(x for x in refused.stdout.splitlines() if x.startswith(("REFUSED", "REGISTERED")))
    assert line.startswith("REFUSED pysparksources.register: Spark starts this session's Python")
    assert "No module named 'pysparksources'" in line
    assert f"export PYSPARK_PYTHON={fresh.python}" in line
    assert "check_workers=False" in line


def test_with_the_fix_sources_register_by_themselves_and_register_works(
    fresh: FreshInstall,
) -> None:
    """No import of pysparksources and no register(): Spark finds all three formats; then
    register() passes its check of the workers' Python."""
    result = fresh.script(
        """
        import sys, tempfile
        from pyspark.sql import SparkSession
        spark = SparkSession.builder.master("local[1]").getOrCreate()
        tmp = tempfile.mkdtemp()
        hub = "Endpoint=sb://127.0.0.1:1/;SharedAccessKeyName=k;SharedAccessKey=s;EntityPath=h"
        frames = {
            "pyrate": spark.readStream.format("pyrate")
                .options(rowsPerBatch=5, totalRows=10).load(),
            "pyfile": spark.readStream.format("pyfile").schema("a INT")
                .options(format="csv", sourceLogLocation=tmp + "/log").load(tmp + "/in"),
            "pyeventhub": spark.readStream.format("pyeventhub")
                .option("connectionString", hub).load(),
        }
        for name, frame in frames.items():
            print("FORMAT", name, frame.isStreaming, ",".join(frame.columns))
        query = (frames["pyrate"].writeStream.format("memory").queryName("rows")
                 .trigger(availableNow=True).start())
        query.awaitTermination()
        print("ROWS", spark.table("rows").count())
        print("IMPORTED_BY_DRIVER", "pysparksources" in sys.modules)
        import pysparksources
        print("REGISTERED", pysparksources.register(spark))
        spark.stop()
        """,
        PYSPARK_PYTHON=fresh.python,
    )
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert "FORMAT pyrate True timestamp,value" in result.stdout
    assert "FORMAT pyfile True a" in result.stdout
    assert "FORMAT pyeventhub True body,partition,offset,sequenceNumber" in result.stdout
    assert "ROWS 10" in result.stdout
    # The driver never imported the package: registration happened inside Spark's lookup.
    assert "IMPORTED_BY_DRIVER False" in result.stdout
    assert "REGISTERED ['pyeventhub', 'pyfile', 'pyrate']" in result.stdout


def test_the_demo_runs_and_names_the_fix(fresh: FreshInstall) -> None:
    result = fresh.run(str(fresh.venv / "bin" / "pysparksources"), "demo", "--batches", "2")
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert f"export PYSPARK_PYTHON={fresh.python}" in result.stderr
    assert f"this command runs Spark with PYSPARK_PYTHON={fresh.python}" in result.stderr
    check_two_batch_demo(result.stdout)


def test_doctor_names_the_fix(fresh: FreshInstall) -> None:
    # With the fix applied doctor passes: tests/spark/test_cli.py runs it (and the demo above
    # already ran every source from this installation).
    broken = fresh.run(str(fresh.venv / "bin" / "pysparksources"), "doctor")
    assert broken.returncode == 1, broken.stdout + broken.stderr[-3000:]
    assert "[FAIL] worker Python: python3 from PATH (PYSPARK_PYTHON is unset)" in broken.stdout
    assert "No module named 'pysparksources'" in broken.stdout
    assert f"fix: export PYSPARK_PYTHON={fresh.python} before Spark starts" in broken.stdout
    assert "[FAIL] session: skipped" in broken.stdout
