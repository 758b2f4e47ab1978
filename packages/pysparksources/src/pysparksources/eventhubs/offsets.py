"""pyeventhub's offsets, the latest offset it reports, and its lag (events and their times).

A checkpoint holds ``{"<hub>": {"<partition id>": next sequence number}}`` (the Scala
connector's form): a batch reads [start, end) of every partition. The latest offset the reader
reports (``reportLatestOffset``, shown only in the progress, never checkpointed) adds, under
``@lastEnqueuedTime``, when each non-empty partition's newest event was enqueued; an Event Hub
name cannot start with ``@``, so the key never collides with the hub's.

Imports no Azure module: the lag listener reads these in the client.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, ClassVar

from pysparksources._core.lag import OffsetKind, PartitionedLag, PartitionPositions
from pysparksources._core.offsets import (
    SourceOffset,
    canonical_offset,
    checked_ints,
    loaded,
    offset_error,
)
from pysparksources.errors import OffsetError
from pysparksources.eventhubs import NAME

__all__ = ["KIND", "HubOffset", "HubReport", "iso_millis", "lag"]


def iso_millis(moment: datetime) -> str:
    """``2026-11-23T10:00:00.123Z``: the service stamps milliseconds, in UTC."""
    utc = moment.astimezone(timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


@dataclass(frozen=True)
class HubOffset(SourceOffset):
    """Where each partition of ``hub`` stands: the next sequence number to read."""

    hub: str
    positions: Mapping[str, int]

    def to_dict(self) -> dict[str, Any]:
        return canonical_offset({self.hub: dict(self.positions)})

    @classmethod
    def from_json(cls, value: Any) -> HubOffset:
        """An offset of one hub, whichever it is (the lag listener's; a reader knows its hub:
        :meth:`of_hub`)."""
        offset = loaded(NAME, value)
        if not isinstance(offset, dict) or len(offset) != 1:
            raise offset_error(
                NAME, offset, 'is not an offset of one hub ({"<hub>": {"<partition>": <n>}})'
            )
        return cls.of_hub(offset, next(iter(offset)))

    @classmethod
    def of_hub(cls, value: Any, hub: str) -> HubOffset:
        """``hub``'s positions in the offset ``value`` (a checkpoint belongs to one hub)."""
        offset = loaded(NAME, value)
        if not isinstance(offset, dict) or not isinstance(offset.get(hub), dict):
            raise offset_error(
                NAME, offset, f"is not for hub {hub!r} (a checkpoint belongs to one hub)"
            )
        positions = offset[hub]
        if not all(isinstance(k, str) and k.isascii() and k.isdigit() for k in positions):
            raise offset_error(NAME, offset, "has a key that is not a partition id")
        return cls(hub, checked_ints(NAME, positions, tuple(positions), "a map of partition ids"))


@dataclass(frozen=True)
class HubReport(SourceOffset):
    """The latest offset the reader reports: the partitions' ends, and when each one's newest
    event was enqueued (partitions without events have no time)."""

    offset: HubOffset
    newest: Mapping[str, datetime]

    KEY: ClassVar[str] = "@lastEnqueuedTime"

    def to_dict(self) -> dict[str, Any]:
        times = {pid: iso_millis(moment) for pid, moment in self.newest.items()}
        return canonical_offset({**self.offset.to_dict(), self.KEY: times})

    @classmethod
    def from_json(cls, value: Any) -> HubReport:
        report = loaded(NAME, value)
        times = report.get(cls.KEY) if isinstance(report, dict) else None
        if not isinstance(times, dict):
            raise offset_error(NAME, report, f"is not {NAME}'s latest offset (no {cls.KEY})")
        offset = HubOffset.from_json({k: v for k, v in report.items() if k != cls.KEY})
        newest = {}
        for pid, text in times.items():
            if pid not in offset.positions or not isinstance(text, str):
                raise offset_error(NAME, report, f"has {cls.KEY} of partition {pid!r}")
            try:
                moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                raise offset_error(NAME, report, f"has {cls.KEY} {text[:40]!r}") from None
            if moment.tzinfo is None:
                raise offset_error(NAME, report, f"has {cls.KEY} {text[:40]!r} without a zone")
            newest[pid] = moment.astimezone(timezone.utc)
        return cls(offset, newest)


def lag(end: Any, latest: Any) -> PartitionedLag | None:
    """Each partition's end, latest and newest time; None if these are not pyeventhub's."""
    try:
        report = HubReport.from_json(latest)
        stop = HubOffset.of_hub(end, report.offset.hub)
    except OffsetError:
        return None
    partitions = {
        pid: PartitionPositions(stop.positions.get(pid, newest), newest, report.newest.get(pid))
        for pid, newest in sorted(report.offset.positions.items(), key=lambda kv: int(kv[0]))
    }
    return PartitionedLag(NAME, "events", {"hub": report.offset.hub}, partitions)


KIND = OffsetKind(NAME, (HubOffset, HubReport), lag)
