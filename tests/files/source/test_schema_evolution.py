"""schemaLocation and schemaEvolutionMode through real queries: a new schema version stops the
query and the restart reads it, kills at each step of a schema change, object stores.

What each mode does with a file's columns (hints, rescue, failOnNewColumns, none, the rescued
column's name, the options' errors) is tested in process: tests/files/test_schema_inprocess.py.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from pysparksources import errors
from support.errors import python_error_lines
from support.streams import run_available_now
from support.variants import SESSIONS_CONNECT_SLOW, session_of

pytestmark = pytest.mark.spark


@pytest.fixture(params=SESSIONS_CONNECT_SLOW)
def session(request: pytest.FixtureRequest) -> Any:
    """Classic in the fast tier, Spark Connect in the slow one (CLASSIC_ONLY still applies)."""
    return session_of(request)


def _json(folder: Path, name: str, *records: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in records))


def _stream(session: Any, src: Path, root: Path, fmt: str = "json", **options: str) -> Any:
    reader = (
        session.readStream.format("pyfile")
        .option("format", fmt)
        .option("sourceLogLocation", str(root / "log"))
        .option("schemaLocation", str(root / "schema"))
        .option("maxFilesPerTrigger", "1")
    )
    return reader.options(**options).load(str(src))


def _versions(root: Path) -> list[dict[str, Any]]:
    folder = root / "schema" / "_schemas"
    return [
        json.loads((folder / str(n)).read_text())
        for n in sorted(int(p.name) for p in folder.iterdir())
    ]


def _rows(session: Any, out: Path) -> list[dict[str, Any]]:
    return sorted(
        (r.asDict() for r in session.read.parquet(str(out)).collect()), key=lambda r: r["id"]
    )


def _failure(df: Any, out: Path, checkpoint: Path) -> str:
    with pytest.raises(Exception) as caught:
        run_available_now(df, out, checkpoint)
    lines = python_error_lines(str(caught.value))
    assert lines, str(caught.value)
    return lines[-1]


def test_add_new_columns_records_a_version_stops_and_the_restart_reads_it(
    session: Any, tmp_path: Path
) -> None:
    src = tmp_path / "in"
    _json(src, "1.json", {"id": 1, "name": "a"}, {"id": 2, "name": "b"})
    df = _stream(session, src, tmp_path)
    assert df.schema.simpleString() == "struct<id:bigint,name:string,_rescued_data:string>"
    assert [v["version"] for v in _versions(tmp_path)] == [0]
    run_available_now(df, tmp_path / "out", tmp_path / "ck")

    _json(src, "2.json", {"id": 3, "name": "c", "city": "Oslo", "zip": 123})
    last = _failure(_stream(session, src, tmp_path), tmp_path / "out", tmp_path / "ck")
    assert last.startswith("pysparksources.errors.SchemaChangedError: "), last
    assert "new columns 'city', 'zip'" in last and "schema version 1" in last, last
    assert "restart the query" in last, last
    versions = _versions(tmp_path)
    assert [v["version"] for v in versions] == [0, 1]
    widened = _stream(session, src, tmp_path)
    assert widened.schema.simpleString() == (
        "struct<id:bigint,name:string,city:string,zip:bigint,_rescued_data:string>"
    )
    run_available_now(widened, tmp_path / "out", tmp_path / "ck")
    merged = session.read.option("mergeSchema", "true").parquet(str(tmp_path / "out"))
    rows = sorted((r.asDict() for r in merged.collect()), key=lambda r: r["id"])
    assert [(r["id"], r.get("city"), r.get("zip")) for r in rows] == [
        (1, None, None),
        (2, None, None),
        (3, "Oslo", 123),
    ]


def _evolving_rows(spark: Any, root: Path) -> list[tuple[Any, ...]]:
    # The output's files hold the schema of their batch: merge them.
    rows = spark.read.option("mergeSchema", "true").parquet(str(root / "out")).collect()
    return sorted((r.id, r.asDict().get("city")) for r in rows)


@pytest.mark.slow
@pytest.mark.parametrize("step", ["before_version", "after_version", "after_the_stop"])
def test_a_kill_at_each_step_of_a_schema_change_loses_and_repeats_no_row(
    spark: Any, tmp_path: Path, step: str
) -> None:
    """addNewColumns: SIGKILL the query while a task records a new schema version (before
    the version file is written, after it) or after the query stopped on the change; the
    restarts (the first may stop on the change itself) find every row exactly once."""
    from support import crash_drivers

    src, root = tmp_path / "in", tmp_path / "q"
    _json(src, "1.json", {"id": 1, "name": "a"}, {"id": 2, "name": "b"})
    crash_drivers.restart_here(spark, "pyfile-evolving", src, root)  # version 0, rows 1-2
    _json(src, "2.json", {"id": 3, "name": "c", "city": "Oslo"}, {"id": 4, "city": "Rome"})
    _json(src, "3.json", {"id": 5, "name": "e"})
    marker = tmp_path / "paused"
    env = {"EVOLUTION_MARKER": str(marker)}
    if step != "after_the_stop":
        env["EVOLUTION_PAUSE_AT"] = step
    proc = crash_drivers.start("pyfile-evolving", src, root, env=env)
    if step == "after_the_stop":
        assert proc.wait(240) != 0, "the query should stop on the new column"
        output = proc.stdout.read().decode() if proc.stdout else ""
        assert "SchemaChangedError" in output and "'city'" in output, output[-3000:]
    else:
        crash_drivers.kill_when(proc, marker.exists, f"the task paused {step}")
    versions = [v["version"] for v in _versions(root)]
    assert versions == ([0] if step == "before_version" else [0, 1])

    for _ in range(2):  # the first restart may stop on the change itself: then one more
        try:
            crash_drivers.restart_here(spark, "pyfile-evolving", src, root)
            break
        except Exception as error:
            assert "SchemaChangedError" in str(error), str(error)
    assert [v["version"] for v in _versions(root)] == [0, 1]
    assert _evolving_rows(spark, root) == [
        (1, None),
        (2, None),
        (3, "Oslo"),
        (4, "Rome"),
        (5, None),
    ]


@pytest.mark.slow
def test_schema_location_and_rescue_on_each_object_store(
    spark: Any, object_store: Any, tmp_path: Path
) -> None:
    """The input, the source log and the schema versions in the store (Azurite, S3, GCS):
    version 0 at the first start, a new version for a new column, rescued values."""
    store = object_store
    fs = store.bucket("evolve")
    run = tmp_path.name[-20:].replace("_", "-")
    base = f"evolve/{run}"
    fs.pipe_file(f"{base}/in/1.json", b'{"id": 1, "v": "a"}\n')

    def stream(**options: str) -> Any:
        return (
            spark.readStream.format("pyfile")
            .option("format", "json")
            .option("sourceLogLocation", store.url(f"{base}/log"))
            .option("schemaLocation", store.url(f"{base}/schema"))
            .options(**store.fs_options(), **options)
            .load(store.url(f"{base}/in"))
        )

    out, ck = tmp_path / "out", tmp_path / "ck"
    run_available_now(stream(), out, ck)
    fs.pipe_file(f"{base}/in/2.json", b'{"id": "two", "v": "b", "w": 2.5}\n')
    last = _failure(stream(), out, ck)
    assert "new columns 'w'" in last and "schema version 1" in last, last
    fs.invalidate_cache()
    assert sorted(p.rsplit("/", 1)[-1] for p in fs.ls(f"{base}/schema/_schemas")) == ["0", "1"]
    run_available_now(stream(), out, ck)
    merged = spark.read.option("mergeSchema", "true").parquet(str(out)).collect()
    rows = sorted(merged, key=lambda r: r.v)
    assert [(r.id, r.v, r.w) for r in rows] == [(1, "a", None), (None, "b", 2.5)]
    rescued = json.loads(rows[1]._rescued_data)
    assert rescued["id"] == "two" and rescued["_file_path"].endswith(f"{base}/in/2.json")
    for secret in store.secrets:
        assert secret not in json.dumps(rescued)
        assert secret.encode() not in fs.cat_file(f"{base}/schema/_schemas/1")


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["rescue", "none", "failOnNewColumns"])
def test_a_kill_while_a_task_meets_new_columns_loses_and_repeats_no_row(
    spark: Any, tmp_path: Path, mode: str
) -> None:
    """The other modes: SIGKILL the query while a task holds a file with a new column; the
    restart in the same mode (failOnNewColumns then stops on it: the job removes nothing and
    switches to rescue) finds every row exactly once, the new column's values where the mode
    keeps them."""
    from support import crash_drivers

    src, root = tmp_path / "in", tmp_path / "q"
    env = {"EVOLUTION_MODE": mode}
    _json(src, "1.json", {"id": 1, "name": "a"}, {"id": 2, "name": "b"})
    crash_drivers.restart_here(spark, "pyfile-evolving", src, root, env=env)
    _json(src, "2.json", {"id": 3, "name": "c", "city": "Oslo"}, {"id": 4, "city": "Rome"})
    _json(src, "3.json", {"id": 5, "name": "e"})
    marker = tmp_path / "paused"
    if mode == "none":  # read on the fast path, where nothing looks at new columns: kill it
        # once the source log holds the new file's batch
        proc = crash_drivers.start("pyfile-evolving", src, root, env=env)
        crash_drivers.kill_when(proc, lambda: (root / "log" / "1").exists(), "batch 1 planned")
    else:
        paused = {**env, "EVOLUTION_PAUSE_AT": "new_columns", "EVOLUTION_MARKER": str(marker)}
        proc = crash_drivers.start("pyfile-evolving", src, root, env=paused)
        crash_drivers.kill_when(proc, marker.exists, "the task paused on the new column")

    if mode == "failOnNewColumns":
        with pytest.raises(Exception, match="has columns the schema lacks: 'city'"):
            crash_drivers.restart_here(spark, "pyfile-evolving", src, root, env=env)
        env = {"EVOLUTION_MODE": "rescue"}
    crash_drivers.restart_here(spark, "pyfile-evolving", src, root, env=env)
    assert [v["version"] for v in _versions(root)] == [0]  # no mode but addNewColumns records
    rows = spark.read.option("mergeSchema", "true").parquet(str(root / "out")).collect()
    found = sorted((r.id, r.asDict().get("_rescued_data")) for r in rows)
    assert [row_id for row_id, _ in found] == [1, 2, 3, 4, 5]
    cities = [json.loads(text)["city"] if text else None for _, text in found]
    assert cities == ([None] * 5 if mode == "none" else [None, None, "Oslo", "Rome", None])


def test_the_guides_restart_on_a_schema_change(spark: Any, tmp_path: Path) -> None:
    """docs/schema-inference.md's recipe: the driver gets a StreamingQueryException whose text
    names SchemaChangedError; starting the query again (a new load()) reads the new column."""
    from pyspark.errors import StreamingQueryException

    src, out, checkpoint = tmp_path / "in", tmp_path / "out", tmp_path / "ck"
    _json(src, "1.json", {"id": 1, "name": "a"})

    def start() -> Any:
        return (
            _stream(spark, src, tmp_path)
            .writeStream.format("parquet")
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start(str(out))
        )

    start().awaitTermination()
    _json(src, "2.json", {"id": 2, "name": "b", "city": "Oslo"})
    stops = []
    while True:
        query = start()
        try:
            query.awaitTermination()
            break
        except StreamingQueryException as error:
            if not isinstance(errors.cause(error), errors.SchemaChangedError):
                raise
            stops.append(str(error))
    assert len(stops) == 1, stops
    rows = spark.read.option("mergeSchema", True).parquet(str(out)).select("id", "city")
    assert sorted(tuple(r) for r in rows.collect()) == [(1, None), (2, "Oslo")]


_DROPPING_STREAM = """
import sys
from pyspark.sql import SparkSession

spark = (
    SparkSession.builder.master("local[1]")
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
base = sys.argv[1]
frame = (
    spark.readStream.format("pyfile").option("format", "json")
    .option("sourceLogLocation", base + "/log").load(base + "/in")
)
query = (
    frame.writeStream.format("parquet").option("checkpointLocation", base + "/ck")
    .start(base + "/out")
)
query.processAllAvailable()
late = (("2.json", '{"id": 2, "city": "Oslo"}'), ("3.json", '{"id": 3, "CITY": "Rome"}'))
for name, line in late:
    open(base + "/in/" + name, "w").write(line + "\\n")
    query.processAllAvailable()
query.stop()
print(sorted(tuple(r) for r in spark.read.parquet(base + "/out").collect()))
"""


@pytest.mark.slow
def test_a_stream_without_a_schema_location_warns_of_the_columns_it_drops(
    tmp_path: Path,
) -> None:
    """No .schema(), no schemaLocation: a later file's new column is dropped, as Spark's file
    source drops it, but the log says so once, naming the file, the column and the option."""
    import subprocess
    import sys

    from support.spark_processes import worker_env

    _json(tmp_path / "in", "1.json", {"id": 1})
    result = subprocess.run(
        [sys.executable, "-c", _DROPPING_STREAM, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        env=worker_env() | {"PYSPARK_PYTHON": sys.executable},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "[(1,), (2,), (3,)]"  # the column is not read
    warnings = [line for line in result.stderr.splitlines() if "schema lacks" in line]
    assert len(warnings) == 1, result.stderr[-3000:]  # 3.json's CITY is the same column
    assert f"file://{tmp_path}/in/2.json" in warnings[0] and "'city'" in warnings[0]
    assert "schemaLocation" in warnings[0] and "addNewColumns" in warnings[0]


def test_new_columns_are_warned_of_once_per_set(caplog: pytest.LogCaptureFixture) -> None:
    from pysparksources.files.schema.evolution import warn_new_columns

    with caplog.at_level(logging.WARNING, logger="pysparksources.files.schema.evolution"):
        warn_new_columns("file:///in/a.json", ["warned_once_x"])
        warn_new_columns("file:///in/b.json", ["WARNED_ONCE_X"])
        warn_new_columns("file:///in/c.json", ["warned_once_x", "warned_once_y"])
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines
    assert "file:///in/a.json" in lines[0] and "'warned_once_x'" in lines[0]
    assert "file:///in/c.json" in lines[1]


_STOPPING_STREAM = """
import sys
from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession
from pysparksources import errors

base, java_options = sys.argv[1], sys.argv[2]
builder = (
    SparkSession.builder.master("local[1]")
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
)
if java_options:
    builder = builder.config("spark.driver.extraJavaOptions", java_options)
spark = builder.getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
frame = (
    spark.readStream.format("pyfile").option("format", "json")
    .option("sourceLogLocation", base + "/log").option("schemaLocation", base + "/schema")
    .option("schemaEvolutionMode", "failOnNewColumns").load(base + "/in")
)
query = (
    frame.writeStream.format("parquet").option("checkpointLocation", base + "/ck")
    .start(base + "/out")
)
query.processAllAvailable()
open(base + "/in/2.json", "w").write('{"id": 2, "city": "Oslo"}\\n')
try:
    query.awaitTermination(120)
except StreamingQueryException as error:
    print(type(errors.cause(error)).__name__)
"""


def _documented_log4j2() -> str:
    from support.paths import DOCS

    page = (DOCS / "errors.md").read_text()
    section = page.split("### One copy of a task's error in the log", 1)[1]
    return section.split("```properties\n", 1)[1].split("```", 1)[0]


@pytest.mark.slow
def test_the_documented_log4j2_file_logs_a_task_error_once(tmp_path: Path) -> None:
    """A query stopped by a task's SchemaChangedError: Spark's layers log its traceback several
    times; with docs/errors.md's log4j2.properties, once (the query's line), and the job still
    gets the error."""
    import subprocess
    import sys

    from support.spark_processes import worker_env

    config = tmp_path / "log4j2.properties"
    config.write_text(_documented_log4j2())
    copies = {}
    for name, options in (
        ("spark's", ""),
        ("documented", f"-Dlog4j2.configurationFile=file:{config}"),
    ):
        base = tmp_path / name
        _json(base / "in", "1.json", {"id": 1})
        result = subprocess.run(
            [sys.executable, "-c", _STOPPING_STREAM, str(base), options],
            capture_output=True,
            text=True,
            timeout=300,
            env=worker_env() | {"PYSPARK_PYTHON": sys.executable},
        )
        assert result.returncode == 0, result.stderr[-3000:]
        assert result.stdout.strip() == "SchemaChangedError", result.stdout + result.stderr[-3000:]
        copies[name] = result.stderr.count("pysparksources.errors.SchemaChangedError:")
    assert copies["spark's"] > 1 and copies["documented"] == 1, copies
