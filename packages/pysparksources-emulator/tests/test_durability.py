"""Segment files: events and offsets survive a restart, torn tails are repaired, retention."""

from __future__ import annotations

from pathlib import Path

import pytest

from pysparksources_emulator import EmulatorConfig, EventHubsEmulator, HubConfig
from pysparksources_emulator._storage import PartitionLog
from pysparksources_emulator.pytest_plugin import EmulatorFactory
from pysparksources_emulator.testing import bodies, producer, receive, send


class FakeClock:
    """Seconds since the epoch that only move when a test says so."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _render(seq: int, offset: int, enqueued_ms: int) -> bytes:
    return f"event-{seq}".encode()


@pytest.mark.emulator
@pytest.mark.slow
def test_events_and_offsets_survive_restart(
    eventhubs_emulator_factory: EmulatorFactory, tmp_path: Path
) -> None:
    first = eventhubs_emulator_factory({"durable": 2}, data_dir=tmp_path, fsync="always")
    conn = first.connection_string("durable")
    send(conn, [f"d{i}" for i in range(5)], partition_id="1")
    before = receive(conn, "1", "-1", 5)
    first.stop()
    second = eventhubs_emulator_factory({"durable": 2}, data_dir=tmp_path)
    conn2 = second.connection_string("durable")
    after = receive(conn2, "1", "-1", 5)
    assert bodies(after) == bodies(before)
    assert [e.offset for e in after] == [e.offset for e in before]
    assert [e.sequence_number for e in after] == list(range(5))
    # An offset taken before the restart still positions a reader after it.
    assert bodies(receive(conn2, "1", before[2].offset, 2)) == ["d3", "d4"]
    send(conn2, ["d5"], partition_id="1")
    with producer(conn2) as client:
        props = client.get_partition_properties("1")
    assert props["last_enqueued_sequence_number"] == 5
    assert int(props["last_enqueued_offset"]) > int(before[-1].offset)


def test_torn_tail_is_cut_at_start_up(tmp_path: Path) -> None:
    log = PartitionLog(tmp_path, fsync="always")
    for i in range(3):
        log.append(1000 + i, b"", _render)
    log.close()
    segment = next(tmp_path.glob("*.seg"))
    whole = segment.stat().st_size
    with open(segment, "ab") as out:
        out.write(b"\x00\x00\x01\x00garbage")  # a record header promising more than exists
    reopened = PartitionLog(tmp_path)
    assert [e.body for e in reopened.events] == [b"event-0", b"event-1", b"event-2"]
    assert segment.stat().st_size == whole
    event = reopened.append(2000, b"", _render)
    assert event.sequence_number == 3 and event.offset == whole
    reopened.close()
    # A flipped byte inside the last record fails its checksum: that record is dropped.
    data = bytearray(segment.read_bytes())
    data[-2] ^= 0xFF
    segment.write_bytes(bytes(data))
    again = PartitionLog(tmp_path)
    assert [e.sequence_number for e in again.events] == [0, 1, 2]
    again.close()


def test_segments_roll_and_retention_deletes_whole_files(tmp_path: Path) -> None:
    log = PartitionLog(tmp_path, segment_bytes=100)
    for i in range(10):
        log.append(i * 1000, b"", _render)
    assert len(list(tmp_path.glob("*.seg"))) > 3
    dropped = log.apply_retention(now_ms=10_000, max_age_ms=4_500, max_bytes=None)
    assert dropped == 6 and log.begin_sequence_number == 6
    log.close()
    reopened = PartitionLog(tmp_path)
    assert reopened.begin_sequence_number == 6
    assert [e.sequence_number for e in reopened.events] == [6, 7, 8, 9]
    reopened.apply_retention(now_ms=100_000, max_age_ms=1, max_bytes=None)
    assert reopened.is_empty and reopened.begin_sequence_number == 10
    reopened.close()
    empty = PartitionLog(tmp_path)
    assert empty.next_sequence_number == 10 and empty.last_sequence_number == 9


@pytest.mark.emulator
@pytest.mark.slow
def test_time_retention_moves_begin_sequence_number(
    eventhubs_emulator_factory: EmulatorFactory,
) -> None:
    clock = FakeClock()
    hub = HubConfig("ret", 1, retention_seconds=60)
    emulator = eventhubs_emulator_factory([hub], clock=clock, retention_check_interval=3600)
    conn = emulator.connection_string("ret")
    send(conn, ["old0", "old1"], partition_id="0")
    clock.now += 45
    send(conn, ["new0"], partition_id="0")
    clock.now += 30  # the first two are now 75 s old, the last 30 s
    assert emulator.apply_retention() == 2
    with producer(conn) as client:
        props = client.get_partition_properties("0")
    assert props["beginning_sequence_number"] == 2
    assert props["last_enqueued_sequence_number"] == 2
    assert bodies(receive(conn, "0", "-1", 1, linger=0.3)) == ["new0"]
    # A position inside the expired range starts at the first retained event.
    assert bodies(receive(conn, "0", 0, 1, linger=0.3)) == ["new0"]
    clock.now += 3600
    emulator.apply_retention()
    with producer(conn) as client:
        props = client.get_partition_properties("0")
    assert props["is_empty"] is True
    assert props["beginning_sequence_number"] == 3
    assert props["last_enqueued_sequence_number"] == 2


@pytest.mark.emulator
def test_size_retention(tmp_path: Path) -> None:
    config = EmulatorConfig(hubs=[HubConfig("s", 1, retention_bytes=200)])
    with EventHubsEmulator(config) as emulator:
        log = emulator.server.broker.hub("s").partitions[0]
        emulator.call(lambda: [log.append(0, b"", _render) for _ in range(10)])
        emulator.apply_retention()
        info = emulator.partition_info("s", 0)
    assert log.retained_bytes <= 200
    assert info["begin_sequence_number"] == 10 - info["retained"] > 0
