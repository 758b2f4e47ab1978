"""Starting and ending positions resolve to the right first event (batch reads, classic)."""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from typing import Any

import pytest
from support.eventhubs import send
from support.pyeventhub import batch_read, seqs

from pysparksources.emulator import EventHubsEmulator


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
