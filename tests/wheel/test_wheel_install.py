"""The newcomer's path: build both distributions (the product and the Event Hubs emulator,
sdist and wheel each), install the wheels into a fresh virtual environment, and use them the
way the README says, without activating that environment.

The environment grows in three steps, each checked before the next: the product alone (no
pytest; ``pysparksources demo`` names the install it needs at once), with ``[spark,eventhubs]``
(still no pytest), then with ``[demo]``, whose ``pysparksources-emulator`` pip takes from the
emulator's wheel given next to it. Everything runs from a folder outside the checkout with
PYSPARK_PYTHON unset and neither this environment nor the fresh one on PATH, so Spark's default
worker Python is PATH's python3, which has no pysparksources: importing the package,
register(), the demo and doctor must each name the fix, and with the fix the sources register
by themselves.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import textwrap
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path

import pytest

from pysparksources_emulator.testing import bodies, receive, send
from support.demo_output import check_two_batch_demo
from support.paths import EMULATOR, PRODUCT

# The module's fixture builds both distributions and a fresh venv: about a minute.
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

# The installation steps: pip arguments after the product's wheel file's name.
STEPS = {"alone": "", "spark,eventhubs": "[spark,eventhubs]", "demo": "[demo]"}


@dataclass(frozen=True)
class Dists:
    """The four files the builds made."""

    product_wheel: Path
    product_sdist: Path
    emulator_wheel: Path
    emulator_sdist: Path


@dataclass(frozen=True)
class FreshInstall:
    venv: Path
    workdir: Path  # outside the checkout
    env: dict[str, str]  # PYSPARK_PYTHON unset, no virtual environment on PATH
    dists: Dists
    installed: dict[str, set[str]]  # step -> the distributions in the venv after it
    bare_demo: subprocess.CompletedProcess[str]  # `pysparksources demo` after step "alone"
    bare_demo_seconds: float

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    def command(self, name: str) -> str:
        return str(self.venv / "bin" / name)

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


def _build_both(dist: Path, timings: dict[str, float]) -> Dists:
    """``python -m build`` of both projects at once: the sdist, then the wheel from the sdist
    (so both must be complete)."""
    start = time.monotonic()
    builds = {
        project: subprocess.Popen(
            [sys.executable, "-m", "build", "--outdir", str(dist), str(project)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for project in (PRODUCT, EMULATOR)
    }
    for project, build in builds.items():
        output, _ = build.communicate(timeout=600)
        assert build.returncode == 0, f"{project}:\n{output[-3000:]}"
    timings["build both"] = time.monotonic() - start

    def one(pattern: str) -> Path:
        found = sorted(dist.glob(pattern))
        assert len(found) == 1, (pattern, sorted(dist.iterdir()))
        return found[0]

    return Dists(
        product_wheel=one("pysparksources-*.whl"),
        product_sdist=one("pysparksources-*.tar.gz"),
        emulator_wheel=one("pysparksources_emulator-*.whl"),
        emulator_sdist=one("pysparksources_emulator-*.tar.gz"),
    )


def _installed(python: Path) -> set[str]:
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "list", "--format=json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return {entry["name"].lower().replace("_", "-") for entry in json.loads(listed.stdout)}


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FreshInstall]:
    base = tmp_path_factory.mktemp("wheel")
    timings: dict[str, float] = {}
    dists = _build_both(base / "dist", timings)
    venv = base / "venv"
    python = venv / "bin" / "python"
    workdir = base / "work"
    workdir.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in DROPPED}
    env["PATH"] = _path_without_virtual_environments(venv)
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    # No pip inside: this environment's pip installs into it (pip --python), which saves
    # bootstrapping pip. Bytecode is compiled as usual: without it every first Python worker
    # compiles PySpark and can miss Spark's 10 s connect-back deadline on a loaded machine.
    _timed("venv", timings, [sys.executable, "-m", "venv", "--without-pip", str(venv)])
    installed: dict[str, set[str]] = {}
    bare_demo: subprocess.CompletedProcess[str] | None = None
    bare_demo_seconds = 0.0
    for step, extras in STEPS.items():
        # The emulator's wheel goes along only with the extra that needs it: pip must take
        # `pysparksources-emulator` from that file (it is on no index).
        extra_files = [str(dists.emulator_wheel)] if step == "demo" else []
        _timed(
            f"install {step}",
            timings,
            [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
             f"{dists.product_wheel}{extras}", *extra_files],
            timeout=900,
        )  # fmt: skip
        installed[step] = _installed(python)
        if step == "alone":
            start = time.monotonic()
            bare_demo = subprocess.run(
                [str(venv / "bin" / "pysparksources"), "demo"],
                capture_output=True,
                text=True,
                timeout=120,
                cwd=workdir,
                env=env | {"PYSPARK_PYTHON": str(python)},  # so the only line is the demo's
            )
            bare_demo_seconds = time.monotonic() - start
    print("wheel smoke setup:", ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()))
    assert bare_demo is not None
    yield FreshInstall(venv, workdir, env, dists, installed, bare_demo, bare_demo_seconds)
    shutil.rmtree(base, ignore_errors=True)


def _wheel_files(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def _wheel_text(wheel: Path, suffix: str) -> str:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(f".dist-info/{suffix}")]
        return archive.read(name).decode()


def _sdist_files(sdist: Path) -> set[str]:
    with tarfile.open(sdist) as archive:
        return {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}


def test_both_sdists_carry_their_project(fresh: FreshInstall) -> None:
    product = _sdist_files(fresh.dists.product_sdist)
    assert {"pyproject.toml", "README.md", "src/pysparksources/__init__.py"} <= product
    assert {"src/pyspark_pyrate.py", "src/pysparksources/py.typed"} <= product
    emulator = _sdist_files(fresh.dists.emulator_sdist)
    assert {"pyproject.toml", "README.md", "src/pysparksources_emulator/__init__.py"} <= emulator
    # The emulator's own tests travel in its sdist (not in its wheel).
    assert {"tests/conftest.py", "tests/test_fuzz_amqp.py"} <= emulator
    assert not [name for name in product | emulator if "__pycache__" in name]


def test_the_emulator_wheel_is_the_standard_library_core_plus_its_extras(
    fresh: FreshInstall,
) -> None:
    wheel = fresh.dists.emulator_wheel
    files = _wheel_files(wheel)
    assert {name.split("/")[0] for name in files if ".dist-info/" not in name} == {
        "pysparksources_emulator"
    }
    for module in ("__init__.py", "__main__.py", "pytest_plugin.py", "testing.py", "py.typed"):
        assert f"pysparksources_emulator/{module}" in files
    assert not [n for n in files if "/test_" in n or n.endswith("conftest.py")]
    metadata = Parser().parsestr(_wheel_text(wheel, "METADATA"))
    requires = metadata.get_all("Requires-Dist") or []
    assert requires and all("extra ==" in requirement for requirement in requires), requires
    assert {"pytest", "sdk", "test"} <= set(metadata.get_all("Provides-Extra") or [])
    assert 'pytest>=8; extra == "pytest"' in requires
    entry_points = _wheel_text(wheel, "entry_points.txt")
    assert "[pytest11]\npysparksources_emulator = pysparksources_emulator.pytest_plugin" in (
        entry_points
    )
    assert "[console_scripts]\npysparksources-emulator = pysparksources_emulator._serve:main" in (
        entry_points
    )
    print(f"emulator wheel: {wheel.stat().st_size} bytes, {len(files)} files")


def test_the_product_wheel_carries_no_harness(fresh: FreshInstall) -> None:
    """No emulator, no benchmarks, no cluster launcher, no tests; the demo extra names the
    emulator's distribution."""
    files = _wheel_files(fresh.dists.product_wheel)
    top = {name.split("/")[0] for name in files if ".dist-info/" not in name}
    assert top == {
        "pysparksources",
        "pyspark_pyrate.py",
        "pyspark_pyfile.py",
        "pyspark_pyeventhub.py",
    }, top
    unwanted = [
        name
        for name in files
        if "pysparksources_emulator" in name
        or "benchmarks" in name
        or "_local_spark" in name
        or name.endswith("/cluster.py")
        or "/tests/" in name
        or name.split("/")[-1].startswith("test_")
        or name.endswith("conftest.py")
    ]
    assert unwanted == []
    metadata = Parser().parsestr(_wheel_text(fresh.dists.product_wheel, "METADATA"))
    assert 'pysparksources-emulator; extra == "demo"' in (metadata.get_all("Requires-Dist") or [])


def test_no_install_brings_pytest(fresh: FreshInstall) -> None:
    """Neither the product (alone or with [spark,eventhubs]) nor the emulator's core (with the
    product's [demo]) installs pytest: the emulator's plugin is behind its own extra."""
    alone, spark, demo = (fresh.installed[step] for step in STEPS)
    assert {"pysparksources", "pyarrow", "numpy", "fsspec"} <= alone
    assert not alone & {"pyspark", "azure-eventhub", "pysparksources-emulator"}
    assert {"pyspark", "azure-eventhub"} <= spark and "pysparksources-emulator" not in spark
    assert "pysparksources-emulator" in demo
    for step, names in fresh.installed.items():
        assert not names & {"pytest", "hypothesis"}, step


def test_the_bare_products_demo_names_the_install_at_once(fresh: FreshInstall) -> None:
    """The product without its demo extra: one line, before Spark or anything else starts."""
    result = fresh.bare_demo
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "pysparksources demo: needs pyspark, azure-eventhub, pysparksources-emulator, not "
        'installed here: pip install "pysparksources[demo]"'
    ]
    assert fresh.bare_demo_seconds < 30


def test_the_emulator_command_serves_from_the_fresh_environment(fresh: FreshInstall) -> None:
    """The installed console script starts, prints its connection string and serves the SDK;
    ``python -m`` and the pytest entry point are there too."""
    emulator = fresh.command("pysparksources-emulator")
    for command in ([emulator], [fresh.python, "-m", "pysparksources_emulator"]):
        helped = fresh.run(*command, "--help", timeout=60)
        assert helped.returncode == 0, helped.stderr
        assert helped.stdout.startswith("usage: pysparksources-emulator ")
    plugins = fresh.script(
        """
        from importlib.metadata import entry_points
        print(sorted(f"{e.name}={e.value}" for e in entry_points(group="pytest11")))
        """
    )
    assert (
        plugins.stdout.strip()
        == "['pysparksources_emulator=pysparksources_emulator.pytest_plugin']"
    )
    proc = subprocess.Popen(
        [emulator, "--port", "0", "--hub", "smoke:2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=fresh.workdir,
        env=fresh.env,
    )
    try:
        assert proc.stdout is not None
        head = []
        for line in proc.stdout:
            head.append(line.rstrip("\n"))
            if line.strip().startswith("Endpoint="):
                break
        conn = head[-1].strip()
        assert head[0].startswith("Event Hubs emulator on 127.0.0.1:"), head
        assert conn.startswith("Endpoint=sb://127.0.0.1:"), head
        assert conn.endswith(";EntityPath=smoke;UseDevelopmentEmulator=true"), conn
        send(conn, ["from the wheel"], partition_id="1")
        assert bodies(receive(conn, "1", "-1", 1)) == ["from the wheel"]
    finally:
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr


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
    result = fresh.run(fresh.command("pysparksources"), "demo", "--batches", "2")
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert f"export PYSPARK_PYTHON={fresh.python}" in result.stderr
    assert f"this command runs Spark with PYSPARK_PYTHON={fresh.python}" in result.stderr
    check_two_batch_demo(result.stdout)


def test_doctor_names_the_fix(fresh: FreshInstall) -> None:
    # With the fix applied doctor passes: tests/spark/test_cli.py runs it (and the demo above
    # already ran every source from this installation).
    broken = fresh.run(fresh.command("pysparksources"), "doctor")
    assert broken.returncode == 1, broken.stdout + broken.stderr[-3000:]
    assert "[FAIL] worker Python: python3 from PATH (PYSPARK_PYTHON is unset)" in broken.stdout
    assert "No module named 'pysparksources'" in broken.stdout
    assert f"fix: export PYSPARK_PYTHON={fresh.python} before Spark starts" in broken.stdout
    assert "[FAIL] session: skipped" in broken.stdout
