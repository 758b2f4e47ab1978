"""End-to-end streaming reads: real Spark, real azure-eventhub SDK, the package's emulator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ehsource_helpers import read_back, reader, run_available_now, send
from streamtools import progress

from pysparksources.testing.eventhubs.emulator import EventHubsEmulator


def test_stream_reads_backlog_from_start(
    session: Any, eventhubs_emulator: EventHubsEmulator, tmp_path: Path
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    send(conn, [f"a{i}" for i in range(5)], partition_id="0")
    send(conn, [f"b{i}" for i in range(3)], partition_id="1")
    df = reader(session, conn, startingPosition="start")
    query = run_available_now(session, df, tmp_path)
    rows = read_back(session, tmp_path)
    assert [(r.partition, r.sequenceNumber, r.body) for r in rows] == [
        *[("0", i, f"a{i}".encode()) for i in range(5)],
        *[("1", i, f"b{i}".encode()) for i in range(3)],
    ]
    last = progress(query)[-1]["sources"][0]
    assert last["endOffset"] == {"test": {"0": 5, "1": 3}}
