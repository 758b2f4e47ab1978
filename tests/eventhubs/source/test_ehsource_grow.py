"""Hubs that grow: partitions added to a live hub (Event Hubs Premium/Dedicated) are read by a
running query and by one restarted from a checkpoint made before, every event exactly once."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from pysparksources._core.option_table import Use
from pysparksources.eventhubs.options import parse_options
from pysparksources.eventhubs.reader import EventHubStreamReader
from pysparksources_emulator import EventHubsEmulator
from support.eventhubs import close_producers, send
from support.pyeventhub import reader
from support.streams import progress, run_available_now, to_parquet

HUB = "grows"


@pytest.fixture
def grown(eventhubs_emulator_factory: Any) -> EventHubsEmulator:
    """A hub of 2 partitions on an emulator of its own, which the test grows."""
    if os.environ.get("PYSPARKSOURCES_EVENTHUBS_CONNECTION_STRING"):
        pytest.skip(
            "a test cannot add partitions to a real namespace (Standard cannot at all; "
            "Premium/Dedicated only through Azure Resource Manager): emulator only"
        )
    emulator: EventHubsEmulator = eventhubs_emulator_factory(hubs={HUB: 2})
    return emulator


def _offset_files(checkpoint: Path) -> list[str]:
    """The offset log's offset lines, in batch order."""
    files = sorted((checkpoint / "offsets").glob("[0-9]*"), key=lambda p: int(p.name))
    return [p.read_text().splitlines()[-1] for p in files]


def _rows(spark: Any, out: Path) -> list[tuple[str, int, str]]:
    rows = spark.read.parquet(str(out)).collect()
    return sorted((r.partition, r.sequenceNumber, r.body.decode()) for r in rows)


def _expected(sent: dict[str, list[str]]) -> list[tuple[str, int, str]]:
    return sorted((pid, i, body) for pid, bodies in sent.items() for i, body in enumerate(bodies))


def test_running_query_reads_added_partitions_from_their_first_event(
    spark: Any, grown: EventHubsEmulator, tmp_path: Path
) -> None:
    conn = grown.connection_string(HUB)
    sent: dict[str, list[str]] = {"0": ["a0", "a1"], "1": ["b0"]}
    for pid, bodies in sent.items():
        send(conn, bodies, partition_id=pid)
    frame = reader(spark, conn, startingPosition="start", partitionDiscoveryInterval="1s")
    out, checkpoint = tmp_path / "out", tmp_path / "cp"
    query = to_parquet(frame, out, checkpoint, processingTime="250 milliseconds")
    try:
        _wait_rows(query, 3, 90)
        assert grown.add_partitions(HUB, 4) == 4
        close_producers()  # an SDK producer reads the partition ids once
        began = time.monotonic()
        sent["2"], sent["3"] = ["c0", "c1", "c2"], ["d0"]
        send(conn, sent["2"], partition_id="2")
        send(conn, sent["3"], partition_id="3")
        sent["0"].append("a2")
        send(conn, ["a2"], partition_id="0")
        _wait_rows(query, 8, 60)
        delay = time.monotonic() - began
        print(f"added partitions read {delay:.2f}s after their first events were sent")
        # partitionDiscoveryInterval (1 s) + partitionInfoCacheInterval (250 ms) + triggers,
        # with room for a loaded machine.
        assert delay < 20, delay
    finally:
        query.stop()
    assert _rows(spark, out) == _expected(sent)  # every event once, none lost
    lines = _offset_files(checkpoint)
    for line in lines:  # deterministic JSON: Spark compares offsets as text
        assert line == json.dumps(json.loads(line), sort_keys=True)
    offsets = [json.loads(line)[HUB] for line in lines]
    # The added partitions first enter the offsets at their start, then are read.
    first = next(o for o in offsets if "2" in o)
    assert (first["2"], first["3"]) == (0, 0)
    assert offsets[-1] == {"0": 3, "1": 1, "2": 3, "3": 1}


def test_restart_from_a_checkpoint_made_before_the_hub_grew(
    session: Any, grown: EventHubsEmulator, tmp_path: Path
) -> None:
    conn = grown.connection_string(HUB)
    sent: dict[str, list[str]] = {"0": ["a0"], "1": ["b0", "b1"]}
    for pid, bodies in sent.items():
        send(conn, bodies, partition_id=pid)
    out, checkpoint = tmp_path / "out", tmp_path / "cp"
    run_available_now(reader(session, conn, startingPosition="start"), out, checkpoint)

    grown.add_partitions(HUB, 4)
    close_producers()
    sent["1"].append("b2")
    send(conn, ["b2"], partition_id="1")
    sent["2"], sent["3"] = ["c0", "c1"], ["d0", "d1", "d2"]
    send(conn, sent["2"], partition_id="2")
    send(conn, sent["3"], partition_id="3")
    # startingPositions names partition 3: it starts there; partition 2 from its start.
    # (startingPosition is ignored once the checkpoint exists, as ever.)
    again = reader(
        session, conn, startingPosition="@latest", startingPositions='{"3": {"seqNo": 1}}'
    )
    query = run_available_now(again, out, checkpoint)
    expected = [row for row in _expected(sent) if row[:2] != ("3", 0)]
    assert _rows(session, out) == expected
    last = progress(query)[-1]["sources"][0]["endOffset"][HUB]
    assert last == {"0": 1, "1": 3, "2": 2, "3": 3}


def test_available_now_leaves_a_partition_added_after_its_snapshot_to_the_next_run(
    grown: EventHubsEmulator,
) -> None:
    """The driver's calls as Spark makes them, against the emulator (no read tasks needed)."""
    conn = grown.connection_string(HUB)
    send(conn, ["a0"], partition_id="0")
    options = {"connectionString": conn, "startingPosition": "start"}
    config = parse_options({**options, "partitionDiscoveryInterval": "0s"}, Use.STREAM_READ)
    first = EventHubStreamReader(config)
    try:
        start = first.initialOffset()
        first.prepareForTriggerAvailableNow()
        grown.add_partitions(HUB, 3)
        close_producers()
        send(conn, ["c0"], partition_id="2")
        assert "2" in first._metadata().partitions(fresh=True)  # the driver sees it...
        end = first.latestOffset(start, first.getDefaultReadLimit())
        assert end == {HUB: {"0": 1, "1": 0}}  # ...but it is not in this run's snapshot
    finally:
        first.stop()
    second = EventHubStreamReader(config)
    try:
        second.prepareForTriggerAvailableNow()
        entered = second.latestOffset(end, second.getDefaultReadLimit())
        assert entered == {HUB: {"0": 1, "1": 0, "2": 0}}  # enters at its start...
        read = second.latestOffset(entered, second.getDefaultReadLimit())
        assert read == {HUB: {"0": 1, "1": 0, "2": 1}}  # ...and is read in the next batch
        assert [(p.partition_id, p.start, p.until) for p in second.partitions(end, entered)] == []
    finally:
        second.stop()


def _wait_rows(query: Any, rows: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while sum(p["numInputRows"] for p in progress(query)) < rows:
        assert query.exception() is None, query.exception()
        assert time.monotonic() < deadline, f"fewer than {rows} rows after {timeout}s"
        time.sleep(0.1)
