"""The newcomer's path: build both distributions (the product and the Event Hubs emulator,
sdist and wheel each), install the wheels into a fresh virtual environment, and use them the
way the README says, without activating that environment.

The environment grows in three steps, each checked before the next: the product alone (no
pytest; ``pysparksources demo`` names the install it needs at once), with ``[spark,eventhubs]``
(still no pytest), then with ``[demo,pipelines]``, whose ``pysparksources-emulator`` pip takes
from the emulator's wheel given next to it. Everything runs from a folder outside the checkout with
PYSPARK_PYTHON unset and neither this environment nor the fresh one on PATH, so Spark's default
worker Python is PATH's python3, which has no pysparksources: the README's first script (which
never imports the package) must end with the line naming the fix, and so must register(), the
demo and doctor say it, while the commands that start no Spark and importing the package say
nothing; with the fix the sources register by themselves.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

import pysparksources
from pysparksources_emulator.testing import bodies, receive, send
from support.demo_output import check_two_batch_demo
from support.fresh_install import STEPS, FreshInstall
from support.paths import EXAMPLES, TESTS

# The README's first snippet, as a complete script: pyrate to the console, awaitTermination.
FIRST_SNIPPET = EXAMPLES / "pyrate_to_console.py"

# The module's fixture builds both distributions and a fresh venv: about a minute.
pytestmark = [pytest.mark.wheel, pytest.mark.spark, pytest.mark.slow]


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
    assert {"pyproject.toml", "setup.py", "README.md", "src/pysparksources/__init__.py"} <= product
    assert {"src/pyspark_pyrate.py", "src/pysparksources/py.typed"} <= product
    assert "src/_pysparksources_hint.py" in product
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
        "_pysparksources_hint.py",
        "pysparksources-hint.pth",
    }, top
    with zipfile.ZipFile(fresh.dists.product_wheel) as archive:
        pth = archive.read("pysparksources-hint.pth").decode()
    assert pth == (
        'import sys; exec("try: import _pysparksources_hint\\nexcept BaseException: pass")\n'
    )
    record = _wheel_text(fresh.dists.product_wheel, "RECORD")  # so pip uninstall removes it
    assert "\npysparksources-hint.pth," in record
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
    # The emulator is its own distribution: the product has no module of that name either.
    assert [name for name in files if "emulator" in name.split("/")[1:-1]] == []
    assert not [name for name in files if name.startswith("pysparksources/emulator")]
    metadata = Parser().parsestr(_wheel_text(fresh.dists.product_wheel, "METADATA"))
    assert 'pysparksources-emulator; extra == "demo"' in (metadata.get_all("Requires-Dist") or [])
    # The one place that holds the version is what the packaging metadata says.
    assert metadata["Version"] == pysparksources.__version__
    print(f"product wheel: {fresh.dists.product_wheel.stat().st_size} bytes, {len(files)} files")


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
        'installed here: pip install "./packages/pysparksources[demo]" in a clone of the '
        "repository, or its wheel with [demo] (README: Install)"
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


def _hint_line(fresh: FreshInstall) -> str:
    python3 = shutil.which("python3", path=fresh.env["PATH"])
    return (
        f"pysparksources: Spark starts its Python workers with {python3} (PYSPARK_PYTHON is "
        f"unset), which did not find pysparksources: export PYSPARK_PYTHON={fresh.python} "
        "before Spark starts (pysparksources doctor checks a setup)"
    )


def test_the_first_snippet_ends_with_the_fix_and_runs_with_it(fresh: FreshInstall) -> None:
    """``venv/bin/python app.py``, venv not activated, no export: Spark cannot find pyrate (its
    lookup runs in PATH's python3), the script never imported pysparksources, and the
    traceback ends with the one line that names the fix. With that export, it runs."""
    broken = fresh.run(fresh.python, str(FIRST_SNIPPET))
    assert broken.returncode == 1, broken.stdout + broken.stderr[-3000:]
    assert "[DATA_SOURCE_NOT_FOUND] Failed to find the data source: pyrate" in broken.stderr
    assert broken.stderr.rstrip("\n").splitlines()[-1] == _hint_line(fresh)
    assert [x for x in broken.stderr.splitlines() if x.startswith("pysparksources")] == [
        _hint_line(fresh)
    ]

    fixed = fresh.run(fresh.python, str(FIRST_SNIPPET), PYSPARK_PYTHON=fresh.python)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr[-3000:]
    assert "Batch: 1" in fixed.stdout and "timestamp|value|" in fixed.stdout
    assert "pysparksources:" not in fixed.stderr


def test_the_start_up_hint_costs_nothing_and_says_nothing_otherwise(fresh: FreshInstall) -> None:
    """The .pth file only puts a watcher on sys.meta_path at start: sys.excepthook stays the
    interpreter's own, nothing else is imported. Once PySpark is imported the hook wraps the
    one in place; it prints only for its own failure, and gives way to a program's own
    excepthook installed later."""
    started = fresh.script(
        """
        import sys
        loaded = [m for m in sys.modules if m.split(".")[0] in ("pyspark", "pysparksources")]
        print(sys.excepthook is sys.__excepthook__, sorted(loaded), sys.meta_path[0])
        """
    )
    assert started.stdout == "True [] <pysparksources start-up hint: waits for pyspark>\n"
    assert started.stderr == ""
    # A failure of ours without Spark: the text Spark's Py4JJavaError carries.
    not_found = (
        "import pyspark\n"
        "class Py4JJavaError(Exception): pass\n"
        "raise Py4JJavaError('An error occurred while calling o28.load.\\n: "
        "org.apache.spark.SparkClassNotFoundException: [DATA_SOURCE_NOT_FOUND] Failed to find "
        "the data source: pyrate. Make sure the provider name is correct.')\n"
    )
    ours = fresh.script(not_found)
    assert ours.stderr.rstrip("\n").splitlines()[-1] == _hint_line(fresh)
    without_pyspark = fresh.script(not_found.replace("import pyspark\n", ""))
    assert "pysparksources" not in without_pyspark.stderr
    opted_out = fresh.script(not_found, PYSPARKSOURCES_NO_HINT="1")
    assert "pysparksources" not in opted_out.stderr
    other = fresh.script("import pyspark\nraise ValueError('boom')")
    assert other.stderr.rstrip("\n").splitlines()[-1] == "ValueError: boom"
    assert "pysparksources" not in other.stderr
    own_hook = fresh.script(
        "import pyspark, sys\n"
        "sys.excepthook = lambda kind, error, tb: print('MINE', kind.__name__, file=sys.stderr)\n"
        + not_found
    )
    assert own_hook.stderr == "MINE Py4JJavaError\n"
    with_fix = fresh.script(not_found, PYSPARK_PYTHON=fresh.python)
    assert "pysparksources:" not in with_fix.stderr


def test_commands_that_start_no_spark_say_nothing_about_the_workers_python(
    fresh: FreshInstall,
) -> None:
    """PYSPARK_PYTHON unset and PATH's python3 without the package, as everywhere here: only
    what starts Spark (demo, doctor, register) talks about it."""
    imported = fresh.script("import pysparksources, pysparksources.cli")
    assert imported.returncode == 0 and imported.stderr == "", imported.stderr
    command = fresh.command("pysparksources")
    helped = fresh.run(command, "--help")
    assert helped.returncode == 0 and helped.stderr == "", helped.stderr
    assert helped.stdout.startswith("usage: pysparksources ")
    assert fresh.run(command, "demo", "--help").stderr == ""
    checkpoint = TESTS / "eventhubs" / "migrate" / "spark35" / "single"
    migrated = fresh.run(command, "eventhubs", "migrate-checkpoint", str(checkpoint))
    assert migrated.returncode == 0, migrated.stderr
    assert migrated.stdout.startswith("{")
    assert "PYSPARK_PYTHON" not in migrated.stderr
    assert all(line.startswith("migrate-checkpoint: ") for line in migrated.stderr.splitlines())
    emulator = fresh.run(fresh.command("pysparksources-emulator"), "--help")
    assert emulator.returncode == 0 and emulator.stderr == "", emulator.stderr


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
        print("REGISTERED", pysparksources.register(spark))  # twice: still no WARN
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
    # register() after automatic registration leaves the sources Spark already has alone.
    assert "WARN DataSourceManager" not in result.stderr, result.stderr[-3000:]


def test_the_demo_runs_names_the_fix_and_keeps_its_output(fresh: FreshInstall) -> None:
    output = fresh.workdir / "demo-output"
    command = fresh.command("pysparksources")
    result = fresh.run(command, "demo", "--batches", "2", "--output", str(output))
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert f"export PYSPARK_PYTHON={fresh.python}" in result.stderr
    assert f"this command runs Spark with PYSPARK_PYTHON={fresh.python}" in result.stderr
    check_two_batch_demo(result.stdout, output=str(output))
    # The output is still there, and a reader other than Spark's finds every row in it.
    counted = fresh.script(
        f"import pyarrow.parquet as pq; print(pq.read_table({str(output)!r}).num_rows)"
    )
    assert counted.stdout.strip() == "3000", counted.stderr
    # A folder that already holds output is refused before Spark starts, in one line.
    again = fresh.run(command, "demo", "--output", str(output), timeout=60)
    assert again.returncode == 2 and again.stdout == ""
    assert again.stderr.splitlines() == [
        f"pysparksources demo: --output {output}: give a new or empty folder ({output} is "
        "not empty)"
    ]


def test_doctor_names_the_fix(fresh: FreshInstall) -> None:
    # With the fix applied doctor passes: tests/spark/test_cli.py runs it (and the demo above
    # already ran every source from this installation).
    broken = fresh.run(fresh.command("pysparksources"), "doctor")
    assert broken.returncode == 1, broken.stdout + broken.stderr[-3000:]
    assert "[FAIL] worker Python: python3 from PATH (PYSPARK_PYTHON is unset)" in broken.stdout
    assert "No module named 'pysparksources'" in broken.stdout
    assert f"fix: export PYSPARK_PYTHON={fresh.python} before Spark starts" in broken.stdout
    assert "[FAIL] session: skipped" in broken.stdout
