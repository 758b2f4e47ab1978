"""Planning a batch: one InputPartition per Event Hubs partition range, in slot-key order.

A range may be split into several read tasks over disjoint sequence-number ranges
(``maxEventsPerPartition``, ``minPartitions``): each opens its own receiver at its first
sequence number, so one busy partition is read by several Python workers at once.

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
    "java_string_hash",
    "plan_partitions",
    "slot_key",
    "split_counts",
]


@dataclass
class EventHubPartition(InputPartition):  # type: ignore[misc]
    """Events [start, until) of one Event Hubs partition; all a read task needs."""

    config: SourceConfig
    partition_id: str
    start: int
    until: int
    slot: int


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
