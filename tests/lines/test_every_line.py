"""What every Spark line must do, run on each: 4.3 in the main suite, 4.0 and 4.1 in their tiers.

The tiers (tests/lines/test_spark_line_tiers.py, ``./dev lines``) run every test marked
``lines`` in a virtual environment with that line's PySpark; this module is most of that
subset, and docs/testing.md cites it for docs/compatibility.md's support table. Where a line behaves
differently (Trigger.AvailableNow with an admission limit), the test states each line's
behaviour and checks the one it runs on.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

import pysparksources
from pysparksources._core.compat import ENGINE_ADMISSION_CONTROL, SPARK_VERSION
from support.eventhubs import received, send
from support.pyfile_source import ids_in, stream, write_rows
from support.streams import (
    data_batches,
    drain,
    stop_between_batches,
    to_parquet,
    wait_for_rows,
    wait_until_caught_up,
)
from support.variants import CLASSIC_ONLY

pytestmark = [pytest.mark.lines, pytest.mark.spark]


def test_the_tier_runs_the_line_it_claims() -> None:
    """The tier runner names the PySpark it installed; a tier must never test another."""
    import os

    expected = os.environ.get("PYSPARKSOURCES_EXPECTED_PYSPARK")
    if expected is not None:
        assert expected == SPARK_VERSION
    line = tuple(int(p) for p in SPARK_VERSION.split(".")[:2])
    assert (line >= (4, 2)) == ENGINE_ADMISSION_CONTROL


def test_formats_resolve_on_their_own_and_register_names_them(session: Any) -> None:
    # The session fixtures never call register(): the formats resolve by auto-registration.
    assert session.read.format("pyrate").option("totalRows", 7).load().count() == 7
    assert pysparksources.register(session) == ["pyeventhub", "pyfile", "pyrate"]


@CLASSIC_ONLY
def test_pyrate_caps_each_batch_and_a_restart_reads_on(session: Any, tmp_path: Path) -> None:
    """maxRowsPerTrigger caps every batch, also after a stop between two capped batches."""
    out, ck = tmp_path / "out", tmp_path / "ck"

    def rows() -> Any:
        return (
            session.readStream.format("pyrate")
            .option("rowsPerSecond", 400)
            .option("totalRows", 600)
            .option("maxRowsPerTrigger", 70)
            .option("numPartitions", 2)
            .load()
        )

    # A trigger every half second leaves capped batches still to come when the first run stops.
    first = to_parquet(rows(), out, ck, processingTime="500 milliseconds")
    wait_for_rows(first, 140, 120, "two capped batches")
    stop_between_batches(first, ck)
    before = [p["numInputRows"] for p in data_batches(first)]
    second = to_parquet(rows(), out, ck, processingTime="0 seconds")
    wait_for_rows(second, 600 - sum(before), 120, "the rest of the stream")
    wait_until_caught_up(second)
    second.stop()
    sizes = before + [p["numInputRows"] for p in data_batches(second)]
    assert max(sizes) <= 70, sizes
    values = sorted(r.value for r in session.read.parquet(str(out)).collect())
    assert values == list(range(600)), "rows read twice or skipped across the restart"


def test_pyrate_batch_read(session: Any) -> None:
    frame = session.read.format("pyrate").option("totalRows", 25).option("numPartitions", 3)
    assert sorted(r.value for r in frame.load().collect()) == list(range(25))


@CLASSIC_ONLY
def test_pyfile_to_the_pyfile_sink_one_file_per_batch(session: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    base = time.time() - 100
    for i in range(4):
        write_rows(src / f"f{i}.csv", "csv", range(i * 10, (i + 1) * 10), base + i)
    frame = stream(session, src, tmp_path / "log", "csv", maxFilesPerTrigger=1)
    writer = (
        frame.writeStream.format("pyfile")
        .option("format", "parquet")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .option("path", str(out))
    )
    query = drain(writer)
    assert [p["numInputRows"] for p in data_batches(query)] == [10, 10, 10, 10]
    assert ids_in(session, out) == list(range(40)), "Spark's reader of the sink's output"


def test_pyfile_batch_read(session: Any, tmp_path: Path) -> None:
    for i in range(3):
        write_rows(tmp_path / "in" / f"f{i}.json", "json", range(i * 5, (i + 1) * 5))
    frame = session.read.format("pyfile").option("format", "json").schema("id BIGINT, name STRING")
    assert sorted(r.id for r in frame.load(str(tmp_path / "in")).collect()) == list(range(15))


@CLASSIC_ONLY
def test_available_now_with_a_limit_on_this_line(session: Any, tmp_path: Path) -> None:
    """Spark 4.2+: admission-sized batches up to the files there at the start. Spark 4.0 and
    4.1: one batch, capped by the limit, then the query ends; the next run reads on, and never
    a file twice. Files added after the start wait for the next run on every line."""
    src, out, ck = tmp_path / "in", tmp_path / "out", tmp_path / "ck"
    base = time.time() - 100
    for i in range(3):
        write_rows(src / f"f{i}.parquet", "parquet", range(i * 10, (i + 1) * 10), base + i)

    def run() -> list[int]:
        frame = stream(session, src, tmp_path / "log", maxFilesPerTrigger=1)
        query = to_parquet(frame, out, ck, availableNow=True)
        query.awaitTermination(300)
        assert query.exception() is None, query.exception()
        return [p["numInputRows"] for p in data_batches(query)]

    if ENGINE_ADMISSION_CONTROL:
        assert run() == [10, 10, 10]
        assert ids_in(session, out) == list(range(30))
    else:
        assert run() == [10], "Spark 4.0/4.1 run one batch under AvailableNow"
        assert ids_in(session, out) == list(range(10))
        assert run() == [10], "the next run reads on"
        assert ids_in(session, out) == list(range(20))
    write_rows(src / "late.parquet", "parquet", range(100, 105), base + 10)
    runs = [run() for _ in range(1 if ENGINE_ADMISSION_CONTROL else 2)]
    assert runs[-1] == [5] and ids_in(session, out) == [*range(30), *range(100, 105)]


@CLASSIC_ONLY
def test_pyeventhub_available_now_with_a_limit_on_this_line(
    session: Any, eventhubs_emulator_factory: Any, tmp_path: Path
) -> None:
    """As for pyfile: 4.2+ reads the 80 events there at the start in batches of at most 30;
    4.0 and 4.1 read one batch of 30 per run, and the next run reads on."""
    emulator = eventhubs_emulator_factory(hubs={"now": 2})
    conn = emulator.connection_string("now")
    for pid in ("0", "1"):
        send(conn, [f"{pid}-{i}" for i in range(40)], partition_id=pid)
    out, ck = tmp_path / "out", tmp_path / "ck"

    def run() -> list[int]:
        events = (
            session.readStream.format("pyeventhub")
            .option("connectionString", conn)
            .option("startingPosition", "start")
            .option("maxEventsPerTrigger", 30)
            .load()
            .selectExpr("CAST(body AS STRING) AS body")
        )
        query = to_parquet(events, out, ck, availableNow=True)
        query.awaitTermination(300)
        assert query.exception() is None, query.exception()
        return [p["numInputRows"] for p in data_batches(query)]

    sizes = run()
    if ENGINE_ADMISSION_CONTROL:
        assert sum(sizes) == 80 and max(sizes) <= 30, sizes
    else:
        assert sizes == [30], "Spark 4.0/4.1 run one batch under AvailableNow"
        assert run() == [30], "the next run reads on"
    bodies = [r.body for r in session.read.parquet(str(out)).collect()]
    assert len(bodies) == len(set(bodies)) == (80 if ENGINE_ADMISSION_CONTROL else 60)


@CLASSIC_ONLY
def test_pyeventhub_caps_each_batch_and_a_restart_reads_on(
    session: Any, eventhubs_emulator_factory: Any, tmp_path: Path
) -> None:
    emulator = eventhubs_emulator_factory(hubs={"lines": 2})
    conn = emulator.connection_string("lines")
    for pid in ("0", "1"):
        send(conn, [f"{pid}-{i}" for i in range(60)], partition_id=pid)
    out, ck = tmp_path / "out", tmp_path / "ck"

    def events() -> Any:
        return (
            session.readStream.format("pyeventhub")
            .option("connectionString", conn)
            .option("startingPosition", "start")
            .option("maxEventsPerTrigger", 25)
            .load()
            .selectExpr("partition", "sequenceNumber", "CAST(body AS STRING) AS body")
        )

    first = to_parquet(events(), out, ck, processingTime="1 second")
    wait_for_rows(first, 50, 120, "two capped batches")
    stop_between_batches(first, ck)
    before = [p["numInputRows"] for p in data_batches(first)]
    second = drain(
        events()
        .writeStream.format("parquet")
        .option("path", str(out))
        .option("checkpointLocation", str(ck))
    )
    sizes = before + [p["numInputRows"] for p in data_batches(second)]
    assert max(sizes) <= 25 and sum(sizes) == 120, sizes
    bodies = sorted(r.body for r in session.read.parquet(str(out)).collect())
    assert bodies == sorted(f"{pid}-{i}" for pid in "01" for i in range(60))


def test_pyeventhub_batch_read_and_sink(
    session: Any, eventhubs_emulator_factory: Any, tmp_path: Path
) -> None:
    emulator = eventhubs_emulator_factory(hubs={"roundtrip": 2})
    conn = emulator.connection_string("roundtrip")
    rows = session.read.format("pyrate").option("totalRows", 30).load()
    rows.selectExpr("CAST(value AS STRING) AS body").write.format("pyeventhub").option(
        "connectionString", conn
    ).mode("append").save()
    back = (
        session.read.format("pyeventhub")
        .option("connectionString", conn)
        .option("startingPosition", "start")
        .load()
        .selectExpr("CAST(body AS STRING) AS body")
        .collect()
    )
    assert sorted(int(r.body) for r in back) == list(range(30))

    # The stream sink, under a trigger every line runs the same way (one batch).
    stream_rows = (
        session.readStream.format("pyrate")
        .option("rowsPerBatch", 20)
        .option("totalRows", 20)
        .load()
        .selectExpr("CAST(value + 100 AS STRING) AS body")
    )
    query = (
        stream_rows.writeStream.format("pyeventhub")
        .option("connectionString", conn)
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    assert query.exception() is None, query.exception()
    got = sorted(int(event.body_as_str()) for _, event in received(conn, 50))
    assert got == [*range(30), *range(100, 120)]
