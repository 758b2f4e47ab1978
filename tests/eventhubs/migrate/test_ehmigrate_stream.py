"""A Scala-connector checkpoint continued by pyeventhub, exactly: Spark, the SDK, the emulator.

The checkpoint is a Spark 3.5 one (byte for byte, see spark35_checkpoint.py) of a query that
read ``rate-micro-batch`` (source 0) and hub ``orders`` through the Scala connector (source 1):
batch 1 is its last committed batch, batch 2 was planned but not committed, and partition 3 was
added to the hub after that query stopped, so no offset names it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from spark35_checkpoint import Batch, connector_offset, write_checkpoint

from pysparksources.cli import main
from pysparksources_emulator import EventHubsEmulator
from support.eventhubs import send
from support.pyeventhub import reader
from support.streams import progress
from support.variants import CLASSIC_ONLY

pytestmark = [pytest.mark.emulator, pytest.mark.spark]

RECORDED = Path(__file__).parent / "spark35"
EVENTS = {"0": 9, "1": 7, "2": 5, "3": 6}  # sent per partition
COMMITTED_END = {0: 4, 1: 7, 2: 1}  # offsets/1: the last committed batch
PLANNED_END = {0: 6, 1: 7, 2: 3}  # offsets/2: planned, never committed
# What continuing exactly means: every event from the committed end on, partition 3 whole.
EXPECTED = [
    (pid, seq)
    for pid, count in EVENTS.items()
    for seq in range(COMMITTED_END.get(int(pid), 0), count)
]


def _orders(seq_nos: dict[int, int]) -> str:
    return connector_offset({"orders": seq_nos})


@pytest.fixture
def hub(eventhubs_emulator_factory: Any) -> str:
    emulator: EventHubsEmulator = eventhubs_emulator_factory(hubs={"orders": 4})
    conn = emulator.connection_string("orders")
    for pid, count in EVENTS.items():
        send(conn, [f"p{pid}-{i}" for i in range(count)], partition_id=pid)
    return conn


def _scala_checkpoint(root: Path) -> Path:
    return write_checkpoint(
        root,
        "6a1f0d7e-2b7c-4d0e-9a51-3c4f8e2d9b10",
        [
            Batch(1795460224531, ['{"offset":5,"timestamp":1000}', _orders({0: 2, 1: 3, 2: 0})]),
            Batch(1795460232662, ['{"offset":10,"timestamp":2000}', _orders(COMMITTED_END)]),
            Batch(1795460233937, ['{"offset":15,"timestamp":3000}', _orders(PLANNED_END)]),
        ],
        committed=2,
        initial={1: _orders({0: 0, 1: 0, 2: 0})},
    )


def _event_rows(session: Any, out: Path) -> list[tuple[str, int]]:
    # The output folder's own log starts at the resumed batch; read the files themselves.
    rows = session.read.parquet(str(out / "*.parquet")).collect()
    return sorted((r.partition, r.sequenceNumber) for r in rows if r.partition != "rate")


@CLASSIC_ONLY
def test_migrate_checkpoint_positions_continue_exactly(
    session: Any, hub: str, tmp_path: Path, capsys: Any
) -> None:
    scala = _scala_checkpoint(tmp_path / "scala-cp")
    assert main(["eventhubs", "migrate-checkpoint", str(scala), "--partition-count", "4"]) == 0
    captured = capsys.readouterr()
    assert "does not name partition(s) 3 of hub 'orders'" in captured.err
    positions = captured.out.strip()
    query = (
        reader(session, hub, startingPositions=positions, startingPosition="start")
        .writeStream.format("parquet")
        .option("path", str(tmp_path / "out"))
        .option("checkpointLocation", str(tmp_path / "new-cp"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    assert query.exception() is None, str(query.exception())
    assert _event_rows(session, tmp_path / "out") == EXPECTED


@pytest.mark.slow
def test_scala_checkpoint_resumes_in_place(session: Any, hub: str, tmp_path: Path) -> None:
    checkpoint = _scala_checkpoint(tmp_path / "cp")
    rate = (
        session.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", 5)
        .load()
        .selectExpr("'rate' AS partition", "value AS sequenceNumber")
    )
    events = reader(session, hub).selectExpr("partition", "sequenceNumber")
    query = (
        rate.union(events)  # same sources in the same order as the Scala query
        .writeStream.format("parquet")
        .option("path", str(tmp_path / "out"))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    assert query.exception() is None, str(query.exception())
    assert _event_rows(session, tmp_path / "out") == EXPECTED

    entries = progress(query)
    # Spark re-ran the uncommitted batch 2 with the range the Scala query had planned for it:
    # our reader got the connector's JSON as start and end.
    assert entries[0]["batchId"] == 2
    replayed = entries[0]["sources"][1]
    assert replayed["startOffset"] == {"orders": {str(p): s for p, s in COMMITTED_END.items()}}
    assert replayed["endOffset"] == {"orders": {str(p): s for p, s in PLANNED_END.items()}}
    assert replayed["numInputRows"] == sum(PLANNED_END[p] - COMMITTED_END[p] for p in PLANNED_END)
    # From then on the checkpoint holds pyeventhub's own (sorted) offsets.
    last = max(int(p.name) for p in (checkpoint / "offsets").iterdir() if p.name.isdigit())
    line = (checkpoint / "offsets" / str(last)).read_text().split("\n")[-1]
    assert line == json.dumps({"orders": EVENTS})
    rate_values = sorted(
        r.sequenceNumber
        for r in session.read.parquet(str(tmp_path / "out" / "*.parquet")).collect()
        if r.partition == "rate"
    )
    assert rate_values == list(range(10, 10 + len(rate_values)))  # rate also went on from 10


@pytest.mark.slow
def test_resume_without_new_events_runs_one_empty_batch(
    spark: Any, eventhubs_emulator_factory: Any, tmp_path: Path
) -> None:
    """Spark compares offsets as text: the connector's JSON never equals ours, once."""
    emulator: EventHubsEmulator = eventhubs_emulator_factory(hubs={"orders": 4})
    conn = emulator.connection_string("orders")
    ends = {"0": 8, "1": 9, "2": 10, "3": 11}  # offsets/1 of the recorded single checkpoint
    for pid, count in ends.items():
        send(conn, [f"p{pid}-{i}" for i in range(count)], partition_id=pid)
    checkpoint = tmp_path / "cp"
    shutil.copytree(RECORDED / "single", checkpoint)

    def run() -> list[dict[str, Any]]:
        query = (
            reader(spark, conn)
            .writeStream.format("noop")
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(300)
        assert query.exception() is None, str(query.exception())
        return progress(query)

    first = run()
    assert [(e["batchId"], e["numInputRows"]) for e in first] == [(2, 0)]
    source = first[0]["sources"][0]
    assert source["startOffset"] == source["endOffset"] == {"orders": ends}
    assert (checkpoint / "offsets" / "2").read_text().split("\n")[-1] == json.dumps(
        {"orders": ends}
    )
    assert (checkpoint / "commits" / "2").is_file()  # a real (empty) batch ran and committed
    run()
    # Our own offsets now: nothing new, no batch planned (an idle trigger only reports progress).
    assert sorted(p.name for p in (checkpoint / "offsets").iterdir() if p.name.isdigit()) == [
        "0",
        "1",
        "2",
    ]
