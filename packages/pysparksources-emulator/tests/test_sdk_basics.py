"""The real azure-eventhub SDK (sync client) against the emulator: send, read, metadata."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator
from typing import Any

import pytest
from azure.eventhub import EventData
from azure.eventhub.exceptions import ConnectError, ConnectionLostError, EventHubError

from pysparksources_emulator import EventHubsEmulator
from pysparksources_emulator.testing import Collector, bodies, producer, receive, send

pytestmark = pytest.mark.emulator


def test_hub_and_partition_properties(eventhubs_emulator: EventHubsEmulator) -> None:
    conn = eventhubs_emulator.connection_string("test")
    with producer(conn) as client:
        hub = client.get_eventhub_properties()
        assert hub["eventhub_name"] == "test"
        assert hub["partition_ids"] == ["0", "1"]
        empty = client.get_partition_properties("1")
        assert empty["is_empty"] is True
        assert empty["last_enqueued_sequence_number"] == -1
        assert empty["last_enqueued_offset"] == "-1"
        batch = client.create_batch(partition_id="1")
        for i in range(3):
            batch.add(EventData(f"e{i}"))
        client.send_batch(batch)
        props = client.get_partition_properties("1")
    assert props["is_empty"] is False
    assert props["beginning_sequence_number"] == 0
    assert props["last_enqueued_sequence_number"] == 2
    assert isinstance(props["last_enqueued_offset"], str)
    age = dt.datetime.now(dt.timezone.utc) - props["last_enqueued_time_utc"]
    assert abs(age.total_seconds()) < 30


def test_bodies_and_properties_round_trip(eventhubs_emulator: EventHubsEmulator) -> None:
    conn = eventhubs_emulator.connection_string("test")
    text = EventData("héllo wörld")
    text.properties = {"str": "v", "int": 7, "float": 1.5, "bool": True, "bytes": b"\x00\x01"}
    text.content_type = "text/plain"
    text.correlation_id = "corr-1"
    text.message_id = "msg-1"
    binary = EventData(b"\x00\xff" * 100)
    send(conn, [text, binary], partition_id="0")
    first, second = receive(conn, "0", "-1", 2)
    assert first.body_as_str() == "héllo wörld"
    # The SDK hands string property values back as bytes; the emulator passes them verbatim.
    assert first.properties == {
        b"str": b"v",
        b"int": 7,
        b"float": 1.5,
        b"bool": True,
        b"bytes": b"\x00\x01",
    }
    assert first.content_type == "text/plain"
    assert first.correlation_id == "corr-1"
    assert first.message_id == "msg-1"
    assert b"".join(second.body) == b"\x00\xff" * 100
    assert (first.sequence_number, second.sequence_number) == (0, 1)
    assert int(second.offset) > int(first.offset)
    assert first.partition_key is None
    assert first.enqueued_time.tzinfo is not None


def test_single_sends_and_hub_round_robin(eventhubs_emulator: EventHubsEmulator) -> None:
    conn = eventhubs_emulator.connection_string("test")
    with producer(conn) as client:
        client.send_event(EventData("one"), partition_id="1")
        client.send_event(EventData("two"), partition_id="1")
    assert bodies(receive(conn, "1", "-1", 2)) == ["one", "two"]
    with producer(conn) as client:
        for i in range(4):
            client.send_batch([EventData(f"rr{i}")])
        counts = [
            client.get_partition_properties(p)["last_enqueued_sequence_number"] + 1
            for p in ("0", "1")
        ]
    assert counts == [2, 4]


@pytest.fixture(scope="module")
def seeded() -> Iterator[tuple[str, list[Any]]]:
    """One emulator for the read-only position tests: six events with distinct times."""
    with EventHubsEmulator.for_hubs({"test": 2}) as emulator:
        conn = emulator.connection_string("test")
        with producer(conn) as client:
            for i in range(6):
                client.send_event(EventData(f"s{i}"), partition_id="0")
                time.sleep(0.005)
        yield conn, receive(conn, "0", "-1", 6)


@pytest.mark.parametrize(
    ("position", "inclusive", "expected"),
    [
        ("-1", False, ["s0", "s1", "s2", "s3", "s4", "s5"]),
        ("seq", False, ["s3", "s4", "s5"]),
        ("seq", True, ["s2", "s3", "s4", "s5"]),
        ("offset", False, ["s3", "s4", "s5"]),
        ("offset", True, ["s2", "s3", "s4", "s5"]),
        ("time", False, ["s3", "s4", "s5"]),
        ("time", True, ["s2", "s3", "s4", "s5"]),
        ("end-seq", False, []),
    ],
)
def test_starting_positions(
    seeded: tuple[str, list[Any]], position: str, inclusive: bool, expected: list[str]
) -> None:
    conn, events = seeded
    pivot = events[2]
    start: Any = {
        "-1": "-1",
        "seq": pivot.sequence_number,
        "offset": pivot.offset,
        "time": pivot.enqueued_time,
        "end-seq": events[-1].sequence_number,
    }[position]
    linger = 0.3 if expected else 1.5  # long enough to see an unwanted extra event
    got = receive(
        conn, "0", start, len(expected), linger=linger, starting_position_inclusive=inclusive
    )
    assert bodies(got) == expected


def test_latest_sees_only_new_events(eventhubs_emulator: EventHubsEmulator) -> None:
    conn = eventhubs_emulator.connection_string("test")
    send(conn, ["old"], partition_id="0")
    with Collector(conn) as collector:
        collector.start(partition_id="0", starting_position="@latest")
        time.sleep(1.0)  # let the receiver attach before the new event
        send(conn, ["new"], partition_id="0")
        assert bodies(collector.wait_for(1)) == ["new"]
        time.sleep(0.3)
        assert bodies(collector.events) == ["new"]


def test_credit_refill_with_small_prefetch(eventhubs_emulator: EventHubsEmulator) -> None:
    conn = eventhubs_emulator.connection_string("test")
    expected = [f"p{i}" for i in range(120)]
    send(conn, expected, partition_id="1")
    got = receive(conn, "1", "-1", 120, prefetch=7)
    assert bodies(got) == expected


def test_one_megabyte_batch_and_size_limit(eventhubs_emulator: EventHubsEmulator) -> None:
    conn = eventhubs_emulator.connection_string("test")
    with producer(conn) as client:
        batch = client.create_batch(partition_id="0")
        assert batch.max_size_in_bytes == 1024 * 1024
        chunk = b"x" * 1000
        added = 0
        while True:
            try:
                batch.add(EventData(chunk))
            except ValueError:
                break
            added += 1
        assert batch.size_in_bytes > 1000 * 1000
        client.send_batch(batch)
    got = receive(conn, "0", "-1", added, timeout=20)
    assert len(got) == added
    assert all(b"".join(e.body) == chunk for e in got)


def test_unknown_hub_is_not_found(eventhubs_emulator: EventHubsEmulator) -> None:
    conn = eventhubs_emulator.connection_string("nosuchhub")
    with producer(conn, retry_total=0) as client, pytest.raises(EventHubError) as info:
        client.get_eventhub_properties()
    assert "could not be found" in str(info.value)
    with producer(conn, retry_total=0) as client, pytest.raises(ConnectError) as info2:
        client.send_batch([EventData("x")], partition_id="0")
    assert "not-found" in str(info2.value) or "could not be found" in str(info2.value)


def test_unknown_consumer_group_and_partition(eventhubs_emulator: EventHubsEmulator) -> None:
    conn = eventhubs_emulator.connection_string("test")
    with Collector(conn, "nosuchgroup", retry_total=0) as collector:
        collector.start(partition_id="0", starting_position="-1")
        errors = collector.wait_error()
    assert errors and "could not be found" in str(errors[0])
    assert isinstance(errors[0], (ConnectError, ConnectionLostError))
    with producer(conn, retry_total=0) as client, pytest.raises(ConnectError) as info:
        client.get_partition_properties("9")
    assert "partition is invalid" in str(info.value)


def test_consumer_group_cg1_reads_independently(eventhubs_emulator: EventHubsEmulator) -> None:
    conn = eventhubs_emulator.connection_string("test")
    send(conn, ["a", "b"], partition_id="0")
    assert bodies(receive(conn, "0", "-1", 2, group="cg1")) == ["a", "b"]
    assert bodies(receive(conn, "0", "-1", 2, group="$Default")) == ["a", "b"]
