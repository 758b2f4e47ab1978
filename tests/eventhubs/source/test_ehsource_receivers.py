"""The executor's receiver cache against the emulator, without Spark: what it reuses and how
much it holds."""

from __future__ import annotations

import logging
import time
import tracemalloc
from collections.abc import Iterator

import pytest
from azure.eventhub import EventData

from pysparksources._core.option_table import Use
from pysparksources._core.process_caches import PROCESS
from pysparksources.errors import OptionError
from pysparksources.eventhubs._receivers import (
    PositionedReceiver,
    acquire,
    close_all,
    effective_prefetch,
    release,
    skip_limit,
)
from pysparksources.eventhubs.config import SourceConfig
from pysparksources.eventhubs.options import parse_options
from pysparksources.eventhubs.planning import EventHubPartition
from pysparksources.eventhubs.reader import read_partition
from pysparksources_emulator import EventHubsEmulator, Fault
from support.eventhubs import send

pytestmark = pytest.mark.emulator
OVERHEAD = 1536  # what the budget counts per event besides its body
CONN = "Endpoint=sb://ns.example/;SharedAccessKeyName=p;SharedAccessKey=k;EntityPath=h"


@pytest.fixture(autouse=True)
def _no_cached_receivers() -> Iterator[None]:
    close_all()
    yield
    close_all()


def _config(conn: str, **options: str) -> SourceConfig:
    return parse_options({"connectionString": conn, **options}, Use.STREAM_READ)


def _read(receiver: PositionedReceiver, until: int) -> list[int]:
    return [e.sequence_number for batch in receiver.take(until, _fail_on_gap) for e in batch]


def _fail_on_gap(expected: int, got: int) -> None:
    raise AssertionError(f"gap {expected}..{got}")


def _filled(receiver: PositionedReceiver, room: int, event: int) -> tuple[int, int]:
    """What the receiver holds once one more event of ``event`` bytes would not fit ``room``."""
    deadline = time.monotonic() + 60
    while (held := receiver.waiting())[1] + event <= room:
        assert time.monotonic() < deadline, f"the receiver stopped at {held} below {room} bytes"
        time.sleep(0.1)
    return held


def test_a_cached_receiver_serves_only_tasks_with_the_settings_it_was_built_with(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    send(conn, [f"e{i}" for i in range(12)], partition_id="0")
    base = _config(conn)
    receiver, how = acquire(base, "0", 0)
    assert how == "miss" and _read(receiver, 2) == [0, 1]
    release(receiver, ok=True)
    receiver, how = acquire(base, "0", 2)
    assert how == "hit" and _read(receiver, 4) == [2, 3]
    release(receiver, ok=True)
    # Each of these builds a different receiver (another prefetch or batch size, an epoch
    # link); the parked one must not stand in for it. (The default prefetch is 31 here: 100
    # capped by the 64 MiB budget.)
    start = 4
    for changed in ({"prefetchCount": "20"}, {"receiveBatchSize": "7"}):
        receiver, how = acquire(_config(conn, **changed), "0", start)
        assert how == "miss", f"{changed} reused a receiver built without it"
        assert _read(receiver, start + 2) == [start, start + 1]
        release(receiver, ok=True)
        start += 2
    # Settings read while receiving follow the task that reuses the receiver.
    receiver, how = acquire(_config(conn, receiveBatchSize="7", receiverTimeout="1s"), "0", 8)
    assert how == "hit"
    assert _read(receiver, 10) == [8, 9]
    began = time.monotonic()
    with pytest.raises(TimeoutError, match=r"receiverTimeout \(1(\.0)?s\)"):
        _read(receiver, 13)  # event 12 does not exist
    assert time.monotonic() - began < 30
    release(receiver, ok=False)
    # Last: once an epoch receiver exists, Event Hubs refuses non-epoch ones on the partition.
    receiver, how = acquire(_config(conn, useExclusiveReceiver="true"), "0", 10)
    assert how == "miss", "an exclusive task reused a non-epoch receiver"
    assert _read(receiver, 12) == [10, 11]
    release(receiver, ok=False)


def test_a_parked_receiver_is_closed_once_idle_for_receiver_idle_timeout(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    # Nothing but the process's housekeeping thread sweeps here.
    conn = eventhubs_emulator.connection_string("test")
    send(conn, ["a", "b"], partition_id="0")
    config = _config(conn, receiverIdleTimeout="1s")
    receiver, how = acquire(config, "0", 0)
    assert how == "miss" and _read(receiver, 1) == [0]
    parked_at = time.monotonic()
    release(receiver, ok=True)
    assert PROCESS.sizes()["eventhubs.receivers"] == 1
    deadline = parked_at + 10
    while not receiver.closed:
        assert time.monotonic() < deadline, "an idle receiver was kept past receiverIdleTimeout"
        time.sleep(0.02)
    assert time.monotonic() - parked_at >= 1.0  # not before its time
    assert PROCESS.sizes()["eventhubs.receivers"] == 0
    receiver, how = acquire(config, "0", 1)
    assert how == "miss" and _read(receiver, 2) == [1]
    release(receiver, ok=False)


def _settled(receiver: PositionedReceiver) -> int:
    """Events a parked receiver holds once it stops growing (1 s without change)."""
    deadline = time.monotonic() + 60
    last, since = -1, time.monotonic()
    while time.monotonic() - since < 1.0:
        assert time.monotonic() < deadline, "the parked receiver kept growing"
        held = receiver.waiting()[0]
        if held != last:
            last, since = held, time.monotonic()
        time.sleep(0.05)
    return last


def test_a_parked_receiver_reads_ahead_by_events_not_by_the_sdks_batches(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    # A steady trickle reaches the SDK in small batches. Counted in batches, a parked
    # receiver stopped 4 of them ahead and the next task received the rest on its own clock.
    # Parked, it reads one receiveBatchSize ahead (taken by a task, four).
    conn = eventhubs_emulator.connection_string("test")
    config = _config(conn, prefetchCount="20", receiveBatchSize="100")  # reads 100 ahead
    receiver, how = acquire(config, "0", 0)
    assert how == "miss"
    send(conn, ["first"], partition_id="0")
    assert _read(receiver, 1) == [0]
    release(receiver, ok=True)
    for first in range(1, 241, 5):  # 48 sends of 5 events, each its own SDK delivery
        send(conn, [f"e{first + i}" for i in range(5)], partition_id="0")
    held = _settled(receiver)
    assert 100 - 5 < held <= 100, f"a parked receiver holds {held} events, expected ~100"
    receiver, how = acquire(config, "0", 1)
    assert how == "hit" and _read(receiver, 241) == list(range(1, 241))
    release(receiver, ok=False)


def test_a_receiver_behind_by_what_it_reads_ahead_skips_forward_beyond_that_is_rebuilt(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    config = _config(conn, prefetchCount="10", receiveBatchSize="10")
    limit = skip_limit(config)
    assert limit == 10 + 4 * 10  # the SDK's prefetch plus the receiver's own read-ahead
    send(conn, [f"e{i}" for i in range(2 * limit + 10)], partition_id="0")
    receiver, _ = acquire(config, "0", 0)
    assert _read(receiver, 2) == [0, 1]
    release(receiver, ok=True)
    # Another worker read 2..2+limit: this one stands exactly `limit` behind and skips.
    receiver, how = acquire(config, "0", 2 + limit)
    assert how == "skip" and _read(receiver, 4 + limit) == [2 + limit, 3 + limit]
    release(receiver, ok=True)
    receiver, how = acquire(config, "0", 5 + 2 * limit)  # one more than `limit` behind
    assert how == "miss" and _read(receiver, 6 + 2 * limit) == [5 + 2 * limit]
    release(receiver, ok=False)


def _send_large(conn: str, partition: str, count: int, size: int) -> None:
    per_batch = max(1, 900_000 // size)
    for first in range(0, count, per_batch):
        body = b"x" * size
        send(
            conn,
            [EventData(body) for _ in range(min(per_batch, count - first))],
            partition_id=partition,
        )


@pytest.mark.slow
def test_received_events_are_held_within_a_byte_budget_shared_by_all_receivers(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    # Before, a receiver held up to 4 SDK batches whatever their size: 4 x 100 events of
    # 16 KB here, 6.5 MB, and gigabytes with 1 MB events and the default batch size.
    conn = eventhubs_emulator.connection_string("test")
    size, count, limit = 16_000, 200, 256_000
    event = size + OVERHEAD
    _send_large(conn, "0", count, size)
    _send_large(conn, "1", count, size)
    config = _config(
        conn, receiverBufferBytes=str(limit), prefetchCount="20", receiveBatchSize="100"
    )
    # Its link attaches a second late, so it is parked before any event arrives.
    eventhubs_emulator.add_fault(Fault("delay", link="receiver", partition=0, delay=1.0))
    parked = PositionedReceiver(config, "0", 0)
    parked.park()
    active: PositionedReceiver | None = None
    try:
        held_parked = _filled(parked, limit // 2, event)
        active = PositionedReceiver(config, "1", 0)  # parked ones may fill only half the budget
        held_active = _filled(active, limit - held_parked[1], event)
        time.sleep(1.0)  # both now wait for room: they must not grow past their share
        assert held_parked[0] > 0 and parked.waiting()[1] <= limit // 2, parked.waiting()
        assert held_active[0] > 0 and active.waiting()[1] <= limit - held_parked[1]
        # The active receiver keeps delivering within the budget; the parked one waits.
        assert _read(active, count) == list(range(count))
        assert parked.waiting()[1] <= limit // 2
    finally:
        parked.close()
        if active is not None:
            active.close()


def test_the_sdks_prefetch_is_capped_so_that_it_fits_the_byte_budget() -> None:
    mib = 1024 * 1024
    assert effective_prefetch(_config(CONN)) == 31  # 64 MiB: two prefetches of 1 MiB events
    assert effective_prefetch(_config(CONN, prefetchCount="20")) == 20
    assert effective_prefetch(_config(CONN, receiverBufferBytes="640m")) == 100
    assert effective_prefetch(_config(CONN, receiverBufferBytes=str(8 * mib))) == 3
    assert effective_prefetch(_config(CONN, receiverBufferBytes="1000")) == 1
    # The receiver cache keys on what the SDK gets: another budget, another receiver.
    assert skip_limit(_config(CONN, receiverBufferBytes="4m")) == 1 + 4 * 500


def test_what_the_sdk_fetches_ahead_stays_within_the_byte_budget(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    # Before, the SDK fetched prefetchCount (100) events whatever their size and held them
    # outside the budget while the receiver waited for room: 40 events of 200 KB here, 8 MB
    # against a 4 MiB budget (100 MB with 1 MB events). Nobody takes events from this receiver.
    conn = eventhubs_emulator.connection_string("test")
    size, count, limit = 200_000, 40, 4 * 1024 * 1024
    event = size + OVERHEAD
    _send_large(conn, "0", count, size)
    config = _config(conn, receiverBufferBytes=str(limit))
    tracemalloc.start()
    receiver: PositionedReceiver | None = None
    try:
        before = tracemalloc.get_traced_memory()[0]
        receiver = PositionedReceiver(config, "0", 0)
        _filled(receiver, limit, event)
        time.sleep(1.0)  # waiting for room: what it holds must not grow past the budget
        grown = tracemalloc.get_traced_memory()[0] - before
        held = receiver.waiting()[1]
        assert held <= limit
        # The budget, one event the SDK fetched ahead (effective prefetch 1) and room for the
        # SDK's own objects; far below the 8 MB it held before.
        assert grown <= limit + 2 * event + 512 * 1024, (grown, held)
        assert _read(receiver, count) == list(range(count))
    finally:
        tracemalloc.stop()
        if receiver is not None:
            receiver.close()


def test_events_larger_than_the_whole_budget_still_flow(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    _send_large(conn, "0", 12, 100_000)
    receiver = PositionedReceiver(_config(conn, receiverBufferBytes="1000"), "0", 0)
    try:
        assert _read(receiver, 12) == list(range(12))
        assert receiver.waiting() == (0, 0)
    finally:
        receiver.close()


def test_a_receiver_refused_with_not_found_fails_its_task_at_once_without_reconnecting(
    eventhubs_emulator: EventHubsEmulator, caplog: pytest.LogCaptureFixture
) -> None:
    # The SDK re-attaches a refused receiver forever without a word; the task would have
    # waited receiverTimeout, then blamed missing events.
    conn = eventhubs_emulator.connection_string("test")
    send(conn, ["a"], partition_id="0")
    config = _config(conn, consumerGroup="spark", receiverTimeout="3m")
    with caplog.at_level(logging.WARNING), pytest.raises(OptionError) as refused:
        list(read_partition(EventHubPartition(config, "0", 0, 1, 0)))
    assert "consumer group 'spark' does not exist in hub 'test'" in str(refused.value)
    assert refused.value.option == "consumerGroup"
    assert "reconnecting" not in caplog.text  # only the one new receiver that confirms it
