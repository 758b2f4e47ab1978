"""Starting and ending positions resolve to the right first event (batch reads, classic; a
slow start position in streaming queries on both session kinds)."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from pysparksources_emulator import EventHubsEmulator, Fault
from support.eventhubs import send
from support.pyeventhub import batch_read, read_back, reader, run_to_parquet, seqs


@pytest.fixture
def hub(eventhubs_emulator: EventHubsEmulator) -> str:
    conn = eventhubs_emulator.connection_string("test")
    send(conn, [f"p0-{i}" for i in range(10)], partition_id="0")
    send(conn, [f"p1-{i}" for i in range(4)], partition_id="1")
    return conn


def p0(*numbers: int) -> list[tuple[str, int]]:
    return [("0", n) for n in numbers]


def p1(*numbers: int) -> list[tuple[str, int]]:
    return [("1", n) for n in numbers]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, p0(*range(10)) + p1(*range(4))),
        ({"startingPosition": "end"}, []),
        ({"startingPosition": '{"seqNo": 3}'}, p0(*range(3, 10)) + p1(3)),
        ({"startingPosition": '{"seqNo": 3, "isInclusive": false}'}, p0(*range(4, 10))),
        (
            {"startingPositions": '{"0": {"seqNo": 8}, "1": "@latest"}'},
            p0(8, 9),
        ),
        (
            {"startingPositions": '{"1": {"seqNo": 2}}', "startingPosition": "@latest"},
            p1(2, 3),
        ),
        ({"endingPosition": '{"seqNo": 2}'}, p0(0, 1) + p1(0, 1)),
        (
            {"startingPosition": '{"seqNo": 1}', "endingPositions": '{"0": {"seqNo": 3}}'},
            p0(1, 2) + p1(1, 2, 3),
        ),
    ],
)
def test_positions(spark: Any, hub: str, options: dict[str, str], expected: list[Any]) -> None:
    assert seqs(batch_read(spark, hub, **options)) == expected


def test_offset_position(spark: Any, hub: str) -> None:
    offset = next(
        r.offset for r in batch_read(spark, hub) if (r.partition, r.sequenceNumber) == ("0", 6)
    )
    start = json.dumps({"offset": offset})
    rows = batch_read(
        spark, hub, startingPositions=json.dumps({"0": {"offset": offset}, "1": "end"})
    )
    assert seqs(rows) == p0(6, 7, 8, 9)
    exclusive = json.dumps({"0": {"offset": offset, "isInclusive": False}, "1": "end"})
    assert seqs(batch_read(spark, hub, startingPositions=exclusive)) == p0(7, 8, 9)
    assert seqs(batch_read(spark, hub, startingPosition=start, endingPosition="end"))[0] == ("0", 6)


def test_enqueued_time_position(spark: Any, hub: str) -> None:
    time.sleep(0.05)
    cut = datetime.now(timezone.utc)
    time.sleep(0.05)
    send(hub, ["late-0", "late-1"], partition_id="1")
    position = json.dumps({"enqueuedTime": cut.isoformat()})
    assert seqs(batch_read(spark, hub, startingPosition=position)) == p1(4, 5)


def test_positions_for_unknown_partition_fail(spark: Any, hub: str) -> None:
    with pytest.raises(Exception) as err:
        batch_read(spark, hub, startingPositions='{"7": "start"}')
    assert "startingPositions" in str(err.value) and "partition(s) 7" in str(err.value)


@pytest.mark.slow
def test_a_slow_start_position_is_waited_for_and_an_unfindable_one_fails_the_query(
    session: Any, eventhubs_emulator: EventHubsEmulator, tmp_path: Path
) -> None:
    # The driver finds an enqueuedTime position with one receive. Its link attaching 7 s late
    # (a slow service or token fetch) used to make the query start at the end and skip the
    # backlog silently; now the search waits up to operationTimeout, then fails the query.
    conn = eventhubs_emulator.connection_string("test")
    cut = datetime.now(timezone.utc) - timedelta(seconds=1)
    send(conn, [f"e{i}" for i in range(5)], partition_id="0")
    position = json.dumps({"enqueuedTime": cut.isoformat()})
    # Two receivers attach to partition 0 at the start: the consumer group check's, then the
    # search's. Both attach late (the check is waited for up to operationTimeout too).
    eventhubs_emulator.add_fault(Fault("delay", link="receiver", partition=0, delay=7.0, times=2))
    # A receive budget below one event's size: each event still flows, alone.
    df = reader(session, conn, startingPosition=position, receiverBufferBytes="1000")
    run_to_parquet(df, tmp_path, "slow")
    assert seqs(read_back(session, tmp_path, "slow")) == p0(0, 1, 2, 3, 4)

    eventhubs_emulator.add_fault(Fault("delay", link="receiver", partition=0, delay=30.0, times=2))
    df = reader(session, conn, startingPosition=position, operationTimeout="2s")
    with pytest.raises(Exception) as failed:  # classic and Connect raise different types
        run_to_parquet(df, tmp_path, "unfindable")
    message = str(failed.value)
    assert "in partition 0 of" in message and "operationTimeout (2s)" in message, message
    assert "enqueuedTime" in message
    assert conn.split("SharedAccessKey=", 1)[1].split(";", 1)[0] not in message
