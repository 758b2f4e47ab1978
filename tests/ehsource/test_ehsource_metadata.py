"""Driver-side partition metadata against the emulator, without Spark."""

from __future__ import annotations

import math
import time
from datetime import datetime, timedelta, timezone

import pytest
from support.eventhubs import send

from pysparksources.emulator import EventHubsEmulator, Fault
from pysparksources.eventhubs._metadata import HubMetadata, PartitionInfo
from pysparksources.eventhubs.options import parse_source_options


def _metadata(conn: str, **options: str) -> HubMetadata:
    return HubMetadata(parse_source_options({"connectionString": conn, **options}, True))


def test_properties_of_every_partition_are_read_and_cached(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    before = datetime.now(timezone.utc) - timedelta(milliseconds=5)
    send(conn, ["a", "b", "c"], partition_id="1")
    after = datetime.now(timezone.utc) + timedelta(milliseconds=5)
    meta = _metadata(conn, partitionInfoCacheInterval="60s")
    try:
        infos = meta.partitions(fresh=True)
        enqueued = infos["1"].last_enqueued
        assert infos["1"] == PartitionInfo(
            beginning=0, latest=3, empty=False, last_enqueued=enqueued
        )
        assert enqueued is not None and before <= enqueued <= after  # the newest event's time
        assert all(
            info.empty and info.last_enqueued is None for pid, info in infos.items() if pid != "1"
        )
        send(conn, ["d"], partition_id="1")
        assert meta.partitions()["1"].latest == 3  # cached: polling costs no call
        assert meta.partitions(fresh=True)["1"].latest == 4
    finally:
        meta.close()


def test_a_management_reply_slower_than_operation_timeout_fails_naming_it(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    eventhubs_emulator.add_fault(Fault("delay", link="management", delay=6.0, times=None))
    meta = _metadata(conn, operationTimeout="1s")
    started = time.monotonic()
    try:
        with pytest.raises(TimeoutError, match=r"operationTimeout \(1s\)"):
            meta.partitions(fresh=True)
    finally:
        meta.close()
    assert time.monotonic() - started < 5.0


def test_expired_info_answers_at_once_while_a_background_fetch_replaces_it(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    meta = _metadata(conn, partitionInfoCacheInterval="200ms")
    try:
        assert meta.partitions(fresh=True)["0"].latest == 0
        send(conn, ["a", "b"], partition_id="0")
        time.sleep(0.3)
        started = time.monotonic()
        assert meta.partitions()["0"].latest == 0  # expired, yet no wait for the service
        assert time.monotonic() - started < 0.1
        deadline = time.monotonic() + 10
        while meta.partitions()["0"].latest != 2:
            assert time.monotonic() < deadline, "the background fetch never landed"
            time.sleep(0.05)
        assert meta.partitions(max_age=math.inf)["0"].latest == 2
    finally:
        meta.close()


def test_a_new_receiver_does_not_wait_for_a_management_request(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    # The SDK's receive_batch asks for the partition ids before receiving; a read task knows
    # its partition, so its client answers itself. With management replies held back 30 s,
    # the receiver still gets its first event at once.
    from pysparksources.eventhubs._receivers import PositionedReceiver

    conn = eventhubs_emulator.connection_string("test")
    send(conn, ["a", "b"], partition_id="1")
    config = parse_source_options({"connectionString": conn}, True)
    eventhubs_emulator.add_fault(Fault("delay", link="management", delay=30.0, times=None))
    receiver = PositionedReceiver(config, "1", 0)
    try:
        first = receiver.first_event(timeout=5.0)
        assert first is not None and first.body_as_str() == "a"
    finally:
        receiver.close()
        eventhubs_emulator.clear_faults()


def test_a_parked_receiver_that_spins_after_the_service_vanishes_is_closed(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    # Once the service is gone, the SDK's receive loop retries without pausing (about a fifth
    # of a core). A parked receiver doing that is closed within seconds, not after
    # receiverIdleTimeout; an idle receiver on a healthy connection is kept.
    from pysparksources.eventhubs._receivers import PositionedReceiver, reap_once, release

    conn = eventhubs_emulator.connection_string("test")
    send(conn, ["a"], partition_id="0")
    config = parse_source_options({"connectionString": conn, "receiverIdleTimeout": "1h"}, True)
    receiver = PositionedReceiver(config, "0", 0)
    try:
        assert receiver.first_event(timeout=5.0) is not None
        release(receiver, ok=True)
        for _ in range(6):
            time.sleep(1.0)
            assert receiver not in reap_once(), "a healthy idle receiver was closed"
        eventhubs_emulator.stop()
        deadline = time.monotonic() + 30
        while receiver not in reap_once():
            assert time.monotonic() < deadline, "the spinning receiver was not closed in 30 s"
            time.sleep(1.0)
        assert not receiver.alive
    finally:
        receiver.close()
