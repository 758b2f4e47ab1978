"""Planning a batch: one InputPartition per Event Hubs partition range, in slot-key order.

Spark's Python data source API has no preferred locations (the JVM's PythonInputPartition
uses none), so the Scala connector's executor choice cannot be expressed. The slot key it
would have used is still computed -- BalancedHash ``floorMod(javaHash(hub) + partition, n)``
or Hash -- and the planned partitions are ordered by it, so the same hub partition lands at
the same task index batch after batch and Spark's scheduler, handing tasks to free executor
slots in index order, tends to give it the same Python worker, whose receiver cache then hits.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from pyspark.sql.datasource import InputPartition

from pysparksources.eventhubs.options import SourceConfig

__all__ = [
    "EventHubPartition",
    "java_string_hash",
    "plan_partitions",
    "slot_key",
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


def plan_partitions(
    config: SourceConfig, ranges: dict[str, tuple[int, int]], slots: int
) -> list[EventHubPartition]:
    """Non-empty ranges, split at ``maxEventsPerPartition``, ordered by (slot, partition)."""
    hub = config.connection.event_hub
    planned: list[EventHubPartition] = []
    for pid, (start, until) in ranges.items():
        if until <= start:
            continue
        slot = slot_key(config.locality, hub, pid, slots)
        step = config.max_events_per_partition or (until - start)
        for lo in range(start, until, step):
            planned.append(EventHubPartition(config, pid, lo, min(until, lo + step), slot))
    planned.sort(key=lambda p: (p.slot, int(p.partition_id), p.start))
    return planned
