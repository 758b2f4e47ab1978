"""End-to-end streaming reads: real Spark, real azure-eventhub SDK, the package's emulator."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from pysparksources_emulator import EventHubsEmulator
from support.eventhubs import send
from support.pyeventhub import read_back, reader, run_to_parquet
from support.streams import progress, wait_for_batches


@pytest.mark.slow
def test_stream_reads_backlog_from_start(
    session: Any, eventhubs_emulator: EventHubsEmulator, tmp_path: Path
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    send(conn, [f"a{i}" for i in range(5)], partition_id="0")
    send(conn, [f"b{i}" for i in range(3)], partition_id="1")
    df = reader(session, conn, startingPosition="start")
    query = run_to_parquet(df, tmp_path)
    rows = read_back(session, tmp_path)
    assert [(r.partition, r.sequenceNumber, r.body) for r in rows] == [
        *[("0", i, f"a{i}".encode()) for i in range(5)],
        *[("1", i, f"b{i}".encode()) for i in range(3)],
    ]
    last = progress(query)[-1]["sources"][0]
    assert last["endOffset"] == {"test": {"0": 5, "1": 3}}


@pytest.mark.slow
def test_running_query_reads_new_events_from_latest(
    session: Any, eventhubs_emulator: EventHubsEmulator, tmp_path: Path
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    send(conn, ["before-start"], partition_id="0")
    query = (
        reader(session, conn)  # default startingPosition: @latest
        .writeStream.format("parquet")
        .option("path", str(tmp_path / "out"))
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    try:
        wait_for_batches(query, 1)  # the start offset is fixed once batch 0 ran
        send(conn, ["live-0", "live-1"], partition_id="0")
        send(conn, ["live-2"], partition_id="1")
        deadline = time.monotonic() + 120
        while sum(p["numInputRows"] for p in progress(query)) < 3:
            assert query.exception() is None and time.monotonic() < deadline
            time.sleep(0.2)
    finally:
        query.stop()
    bodies = sorted(r.body for r in session.read.parquet(str(tmp_path / "out")).collect())
    assert bodies == [b"live-0", b"live-1", b"live-2"]
