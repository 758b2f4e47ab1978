"""Every column round-trips: events sent with the SDK, read back with pyeventhub."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from azure.eventhub import EventData

from pysparksources_emulator import EventHubsEmulator
from support.eventhubs import send
from support.pyeventhub import batch_read


def _event(body: bytes, props: dict[str, Any]) -> EventData:
    event = EventData(body)
    event.properties = props
    return event


def test_every_field_round_trips(spark: Any, eventhubs_emulator: EventHubsEmulator) -> None:
    conn = eventhubs_emulator.connection_string("test")
    before = datetime.now(timezone.utc).replace(microsecond=0)
    props = {"s": "text", "i": 42, "f": 1.5, "b": True, "neg": -7}
    send(conn, [_event(b"\x00\x01binary", props), _event(b"second", {})], partition_key="pk-1")
    send(conn, [_event(b"to-one", {"only": "string"})], partition_id="1")
    rows = batch_read(spark, conn)
    assert len(rows) == 3
    by_body = {r.body: r for r in rows}
    first, second, third = by_body[b"\x00\x01binary"], by_body[b"second"], by_body[b"to-one"]
    assert first.partition == second.partition  # one partition key -> one partition
    assert (first.sequenceNumber, second.sequenceNumber) == (0, 1)
    assert first.partitionKey == "pk-1" and third.partitionKey is None
    assert third.partition == "1"
    assert first.properties == {
        "s": "text",
        "i": "42",
        "f": "1.5",
        "b": "true",
        "neg": "-7",
    }
    assert second.properties == {} and third.properties == {"only": "string"}
    for row in rows:
        assert row.offset is not None and row.offset.isdigit()
        # collect() gives naive wall times in Python's local zone: astimezone reads them so.
        assert row.enqueuedTime.astimezone(timezone.utc) >= before
        assert row.publisher is None
        hidden = {"x-opt-offset", "x-opt-sequence-number", "x-opt-enqueued-time"}
        assert not hidden & set(row.systemProperties or {})
    assert first.systemProperties.get("x-opt-partition-key") == "pk-1"
    assert int(second.offset) > int(first.offset)
