"""Per-partition event logs: in memory, or append-only segment files with checksums.

An event's offset is its byte position in the partition's logical log (segment base plus
position in the file), so offsets are stable strings across restarts and never reused. The
whole retained log is also held in memory for reads; files exist for durability only.

On-disk record: ``size:u32 crc32:u32`` then ``seq:i64 enqueued_ms:i64 header_len:u32 header
body``; ``size`` counts the bytes after the crc and the crc covers exactly those bytes. A record
cut short or failing its crc at the end of the newest segment is a torn write and is cut off at
start-up.
"""

from __future__ import annotations

import bisect
import json
import logging
import os
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

__all__ = ["FsyncPolicy", "PartitionLog", "StoredEvent"]

FsyncPolicy = Literal["always", "interval", "never"]

_LOG = logging.getLogger(__name__)
_PREFIX = struct.Struct(">II")
_FIXED = struct.Struct(">qqI")
RECORD_OVERHEAD = _PREFIX.size + _FIXED.size


@dataclass(frozen=True)
class StoredEvent:
    """One enqueued event; ``body`` already carries its system message annotations."""

    sequence_number: int
    offset: int
    enqueued_ms: int
    header: bytes
    body: bytes

    @property
    def size(self) -> int:
        return RECORD_OVERHEAD + len(self.header) + len(self.body)


@dataclass
class _Segment:
    base_offset: int
    first_seq: int
    path: Path | None
    size: int = 0
    handle: BinaryIO | None = None


class PartitionLog:
    """The ordered events of one partition and where they live.

    Parameters
    ----------
    directory:
        Where the segment files go; ``None`` keeps everything in memory only.
    fsync:
        ``always`` syncs after every append call, ``interval`` when :meth:`sync` is called
        (the server does so periodically), ``never`` leaves it to the operating system. Every
        append batch is flushed to the operating system before it is acknowledged.
    segment_bytes:
        A new segment file starts once the current one reaches this size.
    """

    def __init__(
        self,
        directory: Path | None = None,
        *,
        fsync: FsyncPolicy = "interval",
        segment_bytes: int = 16 * 1024 * 1024,
    ) -> None:
        self.directory = directory
        self.fsync = fsync
        self.segment_bytes = segment_bytes
        self.events: list[StoredEvent] = []
        self._offsets: list[int] = []
        self._times: list[int] = []
        self._segments: list[_Segment] = []
        self.begin_sequence_number = 0
        self.next_sequence_number = 0
        self.next_offset = 0
        self.last_enqueued_ms = 0
        self.last_offset = -1
        self.retained_bytes = 0
        self._dirty = False
        self.listeners: set[Callable[[], None]] = set()
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)
            self._load()

    # -- reading -------------------------------------------------------------------------

    @property
    def last_sequence_number(self) -> int:
        return self.next_sequence_number - 1

    @property
    def is_empty(self) -> bool:
        return not self.events

    def index_of_sequence(self, seq: int) -> int:
        """Index in :attr:`events` of the first retained event with sequence number >= ``seq``."""
        if not self.events:
            return 0
        return max(0, min(len(self.events), seq - self.events[0].sequence_number))

    def index_after_offset(self, offset: int, inclusive: bool) -> int:
        if inclusive:
            return bisect.bisect_left(self._offsets, offset)
        return bisect.bisect_right(self._offsets, offset)

    def index_after_time(self, enqueued_ms: int, inclusive: bool) -> int:
        if inclusive:
            return bisect.bisect_left(self._times, enqueued_ms)
        return bisect.bisect_right(self._times, enqueued_ms)

    def index_of(self, event: StoredEvent) -> int:
        """Index of the event that follows ``event`` (survives trimming of the list head)."""
        return self.index_of_sequence(event.sequence_number + 1)

    # -- writing -------------------------------------------------------------------------

    def append(
        self, enqueued_ms: int, header: bytes, render: Callable[[int, int, int], bytes]
    ) -> StoredEvent:
        """Append one event; ``render(seq, offset, enqueued_ms)`` builds its stored body."""
        enqueued_ms = max(enqueued_ms, self.last_enqueued_ms)
        seq, offset = self.next_sequence_number, self.next_offset
        event = StoredEvent(seq, offset, enqueued_ms, header, render(seq, offset, enqueued_ms))
        if self.directory is not None:
            self._write(event)
        self.events.append(event)
        self._offsets.append(offset)
        self._times.append(enqueued_ms)
        self.next_sequence_number = seq + 1
        self.next_offset = offset + event.size
        self.last_offset = offset
        self.last_enqueued_ms = enqueued_ms
        self.retained_bytes += event.size
        return event

    def notify(self) -> None:
        """Hand the batch to the OS, then wake the waiting readers (once per append batch).

        Called before the sender's acknowledgement: a flushed record survives the process
        being killed whatever the fsync policy, which only decides about machine crashes.
        """
        if self.fsync == "always":
            self.sync()
        elif self._segments and self._segments[-1].handle is not None:
            self._segments[-1].handle.flush()
        for listener in list(self.listeners):
            listener()

    def _write(self, event: StoredEvent) -> None:
        segment = self._segments[-1] if self._segments else None
        if segment is None or segment.size >= self.segment_bytes or segment.handle is None:
            segment = self._new_segment(event.offset, event.sequence_number)
        payload = (
            _FIXED.pack(event.sequence_number, event.enqueued_ms, len(event.header))
            + event.header
            + event.body
        )
        assert segment.handle is not None
        segment.handle.write(_PREFIX.pack(len(payload), zlib.crc32(payload)) + payload)
        segment.size += event.size
        self._dirty = True

    def _new_segment(self, base_offset: int, first_seq: int) -> _Segment:
        assert self.directory is not None
        if self._segments and self._segments[-1].handle is not None:
            self._close_handle(self._segments[-1])
        path = self.directory / f"{base_offset:020d}.seg"
        segment = _Segment(base_offset, first_seq, path, 0, open(path, "ab"))  # noqa: SIM115
        self._segments.append(segment)
        return segment

    def _close_handle(self, segment: _Segment) -> None:
        if segment.handle is not None:
            segment.handle.flush()
            if self.fsync != "never":
                os.fsync(segment.handle.fileno())
            segment.handle.close()
            segment.handle = None

    def sync(self) -> None:
        """Flush and fsync the active segment if anything was written since the last sync."""
        if not self._dirty or not self._segments:
            return
        handle = self._segments[-1].handle
        if handle is not None:
            handle.flush()
            if self.fsync != "never":
                os.fsync(handle.fileno())
        self._dirty = False

    def close(self) -> None:
        for segment in self._segments:
            self._close_handle(segment)

    # -- retention -----------------------------------------------------------------------

    def apply_retention(self, now_ms: int, max_age_ms: int | None, max_bytes: int | None) -> int:
        """Drop events older than ``max_age_ms`` or beyond ``max_bytes``; return how many."""
        drop = 0
        if max_age_ms is not None:
            drop = bisect.bisect_left(self._times, now_ms - max_age_ms)
        if max_bytes is not None:
            size = self.retained_bytes - sum(e.size for e in self.events[:drop])
            while drop < len(self.events) and size > max_bytes:
                size -= self.events[drop].size
                drop += 1
        if drop == 0:
            return 0
        self.retained_bytes -= sum(e.size for e in self.events[:drop])
        del self.events[:drop]
        del self._offsets[:drop]
        del self._times[:drop]
        self.begin_sequence_number = (
            self.events[0].sequence_number if self.events else self.next_sequence_number
        )
        if self.directory is not None:
            self._save_state()
            self._delete_expired_segments()
        return drop

    def _delete_expired_segments(self) -> None:
        keep: list[_Segment] = []
        for i, segment in enumerate(self._segments):
            following = (
                self._segments[i + 1].first_seq
                if i + 1 < len(self._segments)
                else self.next_sequence_number
            )
            if following <= self.begin_sequence_number:
                self._close_handle(segment)
                if segment.path is not None:
                    segment.path.unlink(missing_ok=True)
            else:
                keep.append(segment)
        self._segments = keep

    def _state_path(self) -> Path:
        assert self.directory is not None
        return self.directory / "state.json"

    def _save_state(self) -> None:
        state = {
            "begin_sequence_number": self.begin_sequence_number,
            "next_sequence_number": self.next_sequence_number,
            "next_offset": self.next_offset,
            "last_offset": self.last_offset,
            "last_enqueued_ms": self.last_enqueued_ms,
        }
        tmp = self._state_path().with_suffix(".tmp")
        with open(tmp, "w") as out:
            json.dump(state, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, self._state_path())

    # -- start-up ------------------------------------------------------------------------

    def _load(self) -> None:
        assert self.directory is not None
        if self._state_path().exists():
            state = json.loads(self._state_path().read_text())
            self.begin_sequence_number = state["begin_sequence_number"]
            self.next_sequence_number = state["next_sequence_number"]
            self.next_offset = state["next_offset"]
            self.last_offset = state["last_offset"]
            self.last_enqueued_ms = state["last_enqueued_ms"]
        paths = sorted(self.directory.glob("*.seg"))
        for i, path in enumerate(paths):
            base = int(path.stem)
            events, good_bytes, torn = self._read_segment(path, base)
            if torn:
                _LOG.warning("repairing torn tail of %s at byte %d", path, good_bytes)
                with open(path, "r+b") as out:
                    out.truncate(good_bytes)
                for later in paths[i + 1 :]:
                    _LOG.warning("dropping %s, which follows a damaged segment", later)
                    later.unlink()
            first_seq = events[0].sequence_number if events else self.next_sequence_number
            self._segments.append(_Segment(base, first_seq, path, good_bytes))
            for event in events:
                if event.sequence_number < self.begin_sequence_number:
                    continue
                self.events.append(event)
                self._offsets.append(event.offset)
                self._times.append(event.enqueued_ms)
                self.retained_bytes += event.size
            if events:
                last = events[-1]
                self.next_sequence_number = last.sequence_number + 1
                self.next_offset = last.offset + last.size
                self.last_offset = last.offset
                self.last_enqueued_ms = last.enqueued_ms
            if torn:
                break
        if self.events:
            self.begin_sequence_number = self.events[0].sequence_number
        else:
            self.begin_sequence_number = self.next_sequence_number
        if self._segments:
            last_segment = self._segments[-1]
            assert last_segment.path is not None
            last_segment.handle = open(last_segment.path, "ab")  # noqa: SIM115

    @staticmethod
    def _read_segment(path: Path, base: int) -> tuple[list[StoredEvent], int, bool]:
        data = path.read_bytes()
        events: list[StoredEvent] = []
        pos = 0
        while pos < len(data):
            if pos + _PREFIX.size > len(data):
                return events, pos, True
            size, crc = _PREFIX.unpack_from(data, pos)
            start = pos + _PREFIX.size
            payload = data[start : start + size]
            if len(payload) < size or size < _FIXED.size or zlib.crc32(payload) != crc:
                return events, pos, True
            seq, enqueued_ms, header_len = _FIXED.unpack_from(payload, 0)
            header = payload[_FIXED.size : _FIXED.size + header_len]
            body = payload[_FIXED.size + header_len :]
            events.append(StoredEvent(seq, base + pos, enqueued_ms, header, body))
            pos = start + size
        return events, pos, False
