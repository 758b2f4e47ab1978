"""Planning a batch: Event Hubs partition ranges in slot-key order, packed into read tasks.

A range may be split into several read tasks over disjoint sequence-number ranges
(``maxEventsPerPartition``, ``minPartitions``): each opens its own receiver at its first
sequence number, so one busy partition is read by several Python workers at once.

Otherwise small ranges are packed together (``minEventsPerTask``, ``maxPartitionsPerTask``):
one task reads several partitions at once, a receiver thread each, as one SDK process reads
many partitions. A batch of 32 partitions of 6,250 events each on two cores was 32 tasks, each
paying Spark's hand-off to a Python worker and a receiver look-up for about 0.4 s of decoding;
packed, it is 8 (see docs/performance.md, "Event Hubs at scale").

Spark's Python data source API has no preferred locations (the JVM's PythonInputPartition
uses none), so the Scala connector's executor choice cannot be expressed. The slot key it
would have used is still computed -- BalancedHash ``floorMod(javaHash(hub) + partition, n)``
or Hash -- and the planned partitions are ordered by it, so the same hub partition lands at
the same task index batch after batch and Spark's scheduler, handing tasks to free executor
slots in index order, tends to give it the same Python worker, whose receiver cache then hits.
"""

from __future__ import annotations

import itertools
import zlib
from dataclasses import dataclass

from pyspark.sql.datasource import InputPartition

from pysparksources.eventhubs.config import SourceConfig

__all__ = [
    "EventHubPartition",
    "EventHubTask",
    "java_string_hash",
    "pack_tasks",
    "plan_partitions",
    "slot_key",
    "split_counts",
]


@dataclass
class EventHubPartition(InputPartition):  # type: ignore[misc]
    """Events [start, until) of one Event Hubs partition."""

    config: SourceConfig
    partition_id: str
    start: int
    until: int
    slot: int

    @property
    def size(self) -> int:
        return self.until - self.start


@dataclass
class EventHubTask(InputPartition):  # type: ignore[misc]
    """What one read task reads: ranges of distinct partitions, read at the same time."""

    ranges: tuple[EventHubPartition, ...]


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units), as a signed 32-bit int."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i : i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def slot_key(strategy: str, hub: str, partition_id: str, slots: int) -> int:
    """The executor slot the Scala connector would prefer, among ``slots`` slots."""
    if slots <= 0:
        return 0
    if strategy == "BalancedHash":
        # Python's % is floorMod for a positive modulus.
        return (java_string_hash(hub) + int(partition_id)) % slots
    return zlib.crc32(f"{hub}/{partition_id}".encode()) % slots


def split_counts(
    sizes: dict[str, int], max_events: int | None, min_partitions: int | None
) -> dict[str, int]:
    """How many Spark partitions each non-empty range becomes.

    ``maxEventsPerPartition`` caps every piece; ``minPartitions`` then splits ranges in
    proportion to their size (rounded half up, at least one piece each, never a piece of no
    events) until the batch has about that many -- the rule of Spark's Kafka source, whose
    count can also come out a little above or below the target.
    """
    counts = {
        pid: 1 if max_events is None else -(-size // max_events) for pid, size in sizes.items()
    }
    total = sum(sizes.values())
    if min_partitions is not None and total > 0 and sum(counts.values()) < min_partitions:
        for pid, size in sizes.items():
            share = (2 * size * min_partitions + total) // (2 * total)
            counts[pid] = max(counts[pid], min(share, size))
    return counts


def plan_partitions(
    config: SourceConfig, ranges: dict[str, tuple[int, int]], slots: int
) -> list[EventHubPartition]:
    """Non-empty ranges, split by ``maxEventsPerPartition`` / ``minPartitions`` into pieces
    of near-equal size, ordered by (slot, partition, start)."""
    hub = config.connection.event_hub
    sizes = {pid: until - start for pid, (start, until) in ranges.items() if until > start}
    counts = split_counts(sizes, config.max_events_per_partition, config.min_partitions)
    planned: list[EventHubPartition] = []
    for pid, size in sizes.items():
        start = ranges[pid][0]
        slot = slot_key(config.locality, hub, pid, slots)
        bounds = [start + size * i // counts[pid] for i in range(counts[pid] + 1)]
        for lo, hi in itertools.pairwise(bounds):
            planned.append(EventHubPartition(config, pid, lo, hi, slot))
    planned.sort(key=lambda p: (p.slot, int(p.partition_id), p.start))
    return planned


def pack_tasks(config: SourceConfig, planned: list[EventHubPartition]) -> list[EventHubTask]:
    """Consecutive planned ranges packed into tasks of at least ``minEventsPerTask`` events
    and at most ``maxPartitionsPerTask`` ranges (the last task may hold fewer events).

    A split range (``maxEventsPerPartition``, ``minPartitions``) stays a task of its own:
    those options ask for more tasks, and two pieces of one partition in one task would be
    read one after the other anyway.
    """
    if (
        config.min_events_per_task <= 1
        or config.max_events_per_partition is not None
        or config.min_partitions is not None
    ):
        return [EventHubTask((part,)) for part in planned]
    tasks: list[EventHubTask] = []
    current: list[EventHubPartition] = []
    events = 0
    for part in planned:
        current.append(part)
        events += part.size
        if events >= config.min_events_per_task or len(current) >= config.max_partitions_per_task:
            tasks.append(EventHubTask(tuple(current)))
            current, events = [], 0
    if current:
        tasks.append(EventHubTask(tuple(current)))
    return tasks
