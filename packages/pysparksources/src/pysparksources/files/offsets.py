"""pyfile's offset, the latest offset it reports, and its lag (files found, not read yet).

The offset is ``{"logId": id, "logOffset": n}``: n is a batch id of the source's own log
(``source/source_log.py``), id names that log; ``{"logOffset": -1}`` (no id) is the offset
before the first batch, and logs written before logs had ids have offsets without one. The
latest offset the reader reports (``reportLatestOffset``, shown only in the progress, never
checkpointed) adds, with ``discovery=notifications``, ``@notifications``: what became of the
queue's messages since the query started (:class:`NotificationCounts`).

Listing a folder, the source knows no lag: files not listed yet are unknown, and the end of
its log is where every batch ends. With notifications, the files found and waiting for a batch
are its lag.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pysparksources._core.lag import CountLag, OffsetKind
from pysparksources._core.offsets import (
    SourceOffset,
    canonical,
    canonical_offset,
    checked_ints,
    loaded,
    offset_error,
)
from pysparksources.errors import OffsetError
from pysparksources.files import NAME

__all__ = ["KIND", "LogOffset", "LogReport", "NotificationCounts", "lag"]


@dataclass(frozen=True)
class LogOffset(SourceOffset):
    """Batch ``batch_id`` of the source log ``log_id`` (-1 and no id: before the first)."""

    batch_id: int
    log_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.log_id is None:
            return canonical_offset({"logOffset": self.batch_id})
        return canonical_offset({"logId": self.log_id, "logOffset": self.batch_id})

    @classmethod
    def from_json(cls, value: Any) -> LogOffset:
        offset = loaded(NAME, value)
        if not isinstance(offset, dict) or not set(offset) <= {"logId", "logOffset"}:
            raise offset_error(
                NAME, offset, f"is not {NAME}'s offset (expected keys logId, logOffset)"
            )
        log_id = offset.get("logId")
        # pyfile writes a logId string or no logId; a null one would skip the log's identity
        # check (the checkpoint's offsets belong to this source log).
        if "logId" in offset and not isinstance(log_id, str):
            raise offset_error(NAME, offset, f"has logId={log_id!r}, not a string")
        position = {"logOffset": offset.get("logOffset")}
        checked = checked_ints(NAME, position, ("logOffset",), f"{NAME}'s offset", minimum=-1)
        return cls(checked["logOffset"], log_id)


@dataclass(frozen=True)
class NotificationCounts:
    """``discovery=notifications`` since the query started: messages this source does not
    read, notified files not in storage, events of another account or bucket, paths that could
    reach outside the source path; and the files found and waiting for a batch now."""

    unreadable_messages: int = 0
    missing_files: int = 0
    foreign_events: int = 0
    refused_paths: int = 0
    files_waiting: int = 0

    # The progress's names, field by field (camelCase, as Spark's own metrics).
    NAMES: ClassVar[dict[str, str]] = {
        "unreadable_messages": "unreadableMessages",
        "missing_files": "missingFiles",
        "foreign_events": "foreignEvents",
        "refused_paths": "refusedPaths",
        "files_waiting": "filesWaiting",
    }

    def to_dict(self) -> dict[str, int]:
        counts: dict[str, int] = canonical(
            {name: getattr(self, f) for f, name in self.NAMES.items()}
        )
        return counts

    @classmethod
    def from_dict(cls, value: Any) -> NotificationCounts:
        wanted = tuple(cls.NAMES.values())
        counts = checked_ints(NAME, value, wanted, "notification counts")
        return cls(**{field: counts[name] for field, name in cls.NAMES.items()})


@dataclass(frozen=True)
class LogReport(SourceOffset):
    """The latest offset the reader reports: the end of its log, and with notifications the
    counts of :class:`NotificationCounts`."""

    offset: LogOffset
    notifications: NotificationCounts | None = None

    KEY: ClassVar[str] = "@notifications"

    def to_dict(self) -> dict[str, Any]:
        if self.notifications is None:
            return self.offset.to_dict()
        return canonical_offset({**self.offset.to_dict(), self.KEY: self.notifications.to_dict()})

    @classmethod
    def from_json(cls, value: Any) -> LogReport:
        report = loaded(NAME, value)
        if not isinstance(report, dict) or cls.KEY not in report:
            return cls(LogOffset.from_json(report))
        offset = LogOffset.from_json({k: v for k, v in report.items() if k != cls.KEY})
        return cls(offset, NotificationCounts.from_dict(report[cls.KEY]))


def lag(end: Any, latest: Any) -> CountLag | None:
    """With notifications, the files found and waiting for a batch; None otherwise (listing
    knows no lag) and for offsets that are not pyfile's."""
    try:
        LogOffset.from_json(end)
        report = LogReport.from_json(latest)
    except OffsetError:
        return None
    if report.notifications is None:
        return None
    return CountLag(NAME, "files", report.notifications.files_waiting)


KIND = OffsetKind(NAME, (LogOffset, LogReport), lag)
