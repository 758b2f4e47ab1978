"""Fault injection and how the real SDK recovers from each fault."""

from __future__ import annotations

import time

import pytest
from azure.eventhub import EventData
from azure.eventhub.exceptions import EventDataSendError

from pysparksources_emulator import EventHubsEmulator, Fault
from pysparksources_emulator.testing import Collector, bodies, producer, send

pytestmark = pytest.mark.emulator


def _read_through_fault(emulator: EventHubsEmulator, fault: Fault, count: int = 12) -> list[str]:
    conn = emulator.connection_string("test")
    expected = [f"f{i}" for i in range(count)]
    send(conn, expected, partition_id="0")
    emulator.add_fault(fault)
    with Collector(conn) as collector:
        collector.start(partition_id="0", starting_position="-1", prefetch=5)
        got = collector.wait_for(count, timeout=20)
        time.sleep(0.2)
        got = list(collector.events)
    assert fault.wait(0), "the fault never fired"
    return bodies(got)


@pytest.mark.parametrize(
    "fault",
    [
        Fault("detach", "amqp:link:detach-forced", link="receiver", after_events=4),
        Fault("detach", "com.microsoft:server-busy", link="receiver", after_events=4),
        Fault("close", "amqp:connection:forced", link="receiver", after_events=4),
        Fault("abort", link="receiver", after_events=4),
        Fault("detach", "amqp:link:detach-forced", link="receiver", after_seconds=0.3),
    ],
    ids=["detach-forced", "server-busy", "close-connection", "abort-tcp", "after-seconds"],
)
def test_consumer_recovers_without_loss_or_duplicates(
    eventhubs_emulator: EventHubsEmulator, fault: Fault
) -> None:
    got = _read_through_fault(eventhubs_emulator, fault)
    assert got == [f"f{i}" for i in range(12)]


def test_fault_matching_by_partition_leaves_others_alone(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    other = eventhubs_emulator.add_fault(
        Fault("detach", link="receiver", partition=1, after_events=1)
    )
    got = _read_through_fault(eventhubs_emulator, Fault("delay", delay=0.2, link="receiver"))
    assert got == [f"f{i}" for i in range(12)]
    assert other.fired == 0


def test_stolen_link_is_reported_not_retried(eventhubs_emulator: EventHubsEmulator) -> None:
    conn = eventhubs_emulator.connection_string("test")
    send(conn, ["a", "b", "c"], partition_id="1")
    eventhubs_emulator.add_fault(
        Fault("detach", "amqp:link:stolen", "stolen by a test", link="receiver", after_events=1)
    )
    with Collector(conn) as collector:
        collector.start(partition_id="1", starting_position="-1", prefetch=1)
        errors = collector.wait_error()
    assert errors and "stolen by a test" in str(errors[0])


def test_rejected_sends_then_recovery(eventhubs_emulator: EventHubsEmulator) -> None:
    conn = eventhubs_emulator.connection_string("test")
    busy = eventhubs_emulator.add_fault(
        Fault(
            "reject", "com.microsoft:server-busy", "busy now", link="sender", after_events=2,
            times=None,
        )
    )  # fmt: skip
    with producer(conn) as client:
        client.send_batch([EventData("ok1"), EventData("ok2")], partition_id="0")
        with pytest.raises(EventDataSendError, match="busy now"):
            client.send_batch([EventData("lost")], partition_id="0")
        assert busy.fired >= 1
        eventhubs_emulator.clear_faults()
        client.send_batch([EventData("ok3")], partition_id="0")
        props = client.get_partition_properties("0")
    assert props["last_enqueued_sequence_number"] == 2  # ok1, ok2, ok3: nothing rejected kept


def test_producer_link_detach_is_retried(eventhubs_emulator: EventHubsEmulator) -> None:
    conn = eventhubs_emulator.connection_string("test")
    fault = eventhubs_emulator.add_fault(
        Fault("detach", "amqp:link:detach-forced", link="sender", after_events=1)
    )
    with producer(conn) as client:
        client.send_batch([EventData("p0")], partition_id="1")
        assert fault.wait(5)
        client.send_batch([EventData("p1")], partition_id="1")
        props = client.get_partition_properties("1")
    assert props["last_enqueued_sequence_number"] == 1


def test_producer_connection_abort_is_retried(eventhubs_emulator: EventHubsEmulator) -> None:
    conn = eventhubs_emulator.connection_string("test")
    with producer(conn) as client:
        client.send_batch([EventData("a0")], partition_id="1")
        eventhubs_emulator.add_fault(Fault("abort", link="sender", hub="test"))
        time.sleep(0.2)  # the once-fault fires on the idle producer link
        client.send_batch([EventData("a1")], partition_id="1")
        props = client.get_partition_properties("1")
    assert props["last_enqueued_sequence_number"] == 1


def test_delayed_management_reply_arrives(eventhubs_emulator: EventHubsEmulator) -> None:
    conn = eventhubs_emulator.connection_string("test")
    with producer(conn) as client:
        client.get_partition_ids()  # warm up: the fault must measure only the delay
        eventhubs_emulator.add_fault(Fault("delay", link="management", delay=1.0))
        started = time.monotonic()
        assert client.get_partition_ids() == ["0", "1"]
        assert time.monotonic() - started >= 1.0


def test_management_links_refuse_dropping_faults() -> None:
    with pytest.raises(ValueError, match="only 'delay'"):
        Fault("close", link="management")
    with pytest.raises(ValueError, match="sender"):
        Fault("reject", link="receiver")


@pytest.mark.slow  # several seconds of clients starting and stopping
def test_a_stall_starves_one_partition_while_the_other_flows_then_ends(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    # A partition the service stopped serving: its link stays attached (no error, no
    # detach) and gets nothing for the stall's duration; the other partition is not held.
    conn = eventhubs_emulator.connection_string("test")
    send(conn, ["a0", "a1"], partition_id="0")
    send(conn, ["b0", "b1"], partition_id="1")
    stall = eventhubs_emulator.add_fault(Fault("stall", link="receiver", partition=1, duration=1.5))
    began = time.monotonic()
    with Collector(conn) as starved, Collector(conn) as flowing:
        starved.start(partition_id="1", starting_position="-1")
        flowing.start(partition_id="0", starting_position="-1")
        assert bodies(flowing.wait_for(2, timeout=10)) == ["a0", "a1"]
        assert starved.events == [], "the stalled partition delivered"
        assert bodies(starved.wait_for(2, timeout=10)) == ["b0", "b1"]
        assert time.monotonic() - began >= 1.5
        assert starved.errors == [] and stall.fired > 0


@pytest.mark.slow  # several seconds of clients starting and stopping
def test_a_fault_with_a_duration_is_spent_when_it_ends(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    # Every attach refused for a second from the first refusal, then served again.
    conn = eventhubs_emulator.connection_string("test")
    send(conn, [f"f{i}" for i in range(5)], partition_id="0")
    busy = eventhubs_emulator.add_fault(
        Fault("detach", "com.microsoft:server-busy", link="receiver", times=None, duration=1.0)
    )
    with Collector(conn) as collector:
        collector.start(partition_id="0", starting_position="-1")
        assert bodies(collector.wait_for(5, timeout=20)) == [f"f{i}" for i in range(5)]
    assert busy.fired >= 1 and busy.first_fired_at is not None
    assert not busy.in_force(time.monotonic()), "the fault outlived its duration"


def test_stall_and_duration_are_checked() -> None:
    with pytest.raises(ValueError, match="receiver links only"):
        Fault("stall", link="sender")
    with pytest.raises(ValueError, match="duration"):
        Fault("detach", duration=0)
    assert Fault("stall").times is None  # a stall lasts while in force
