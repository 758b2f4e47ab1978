"""Pick a micro-batch's files: Spark's FileStreamSource ordering and admission control.

New files are sorted by modification time (newest first with latestFirst), then cut by the
engine's ReadLimit. Files listed but left over are cached for the next batch, as Spark does,
unless latestFirst is on, the cache is disabled, or the leftover is too small to be worth it
(``discardCachedInputRatio``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pysparksources._core.compat import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxBytes,
    ReadMaxFiles,
)
from pysparksources.errors import UnsupportedError
from pysparksources.files import NAME
from pysparksources.files.source.seen_files import SeenFiles
from pysparksources.files.storage.folder_listing import FileEntry

__all__ = ["Admission", "order_files", "take_by_bytes"]


def order_files(files: Sequence[FileEntry], latest_first: bool) -> list[FileEntry]:
    """Oldest first (newest first with latestFirst); ties broken by path for determinism."""
    if latest_first:
        return sorted(files, key=lambda f: (-f.timestamp, f.path))
    return sorted(files, key=lambda f: (f.timestamp, f.path))


def take_by_bytes(files: Sequence[FileEntry], max_bytes: int) -> int:
    """How many leading files fit in ``max_bytes``; the first file is always taken."""
    total = 0
    for i, entry in enumerate(files):
        total += entry.size
        if i > 0 and total > max_bytes:
            return i
    return len(files)


@dataclass
class Admission:
    """Chooses each batch's files from listings; keeps the unread-file cache between batches."""

    seen: SeenFiles
    latest_first: bool
    max_cached_files: int
    discard_ratio: float
    cache_enabled: bool = True
    left_over: bool = False  # the last selection left new files for a later batch
    _unread: list[FileEntry] | None = None

    def select(self, limit: ReadLimit, list_new: Callable[[], list[FileEntry]]) -> list[FileEntry]:
        """The files of the next batch under ``limit`` (not yet marked seen)."""
        if self._unread:
            candidates = [f for f in self._unread if self.seen.is_new(f.path, f.timestamp)]
            self._unread = None
        else:
            candidates = order_files(list_new(), self.latest_first)
        if isinstance(limit, ReadMaxFiles):
            count = limit.max_files
            batch, rest = candidates[:count], candidates[count:]
            self._cache(rest, len(rest) < count * self.discard_ratio)
        elif isinstance(limit, ReadMaxBytes):
            count = take_by_bytes(candidates, limit.max_bytes)
            batch, rest = candidates[:count], candidates[count:]
            small = sum(f.size for f in rest) < limit.max_bytes * self.discard_ratio
            self._cache(rest, small)
        elif isinstance(limit, ReadAllAvailable):
            batch, rest = candidates, []
        else:
            raise UnsupportedError(
                NAME,
                f"unsupported read limit {limit!r}; the file source admits files "
                "(maxFilesPerTrigger) or bytes (maxBytesPerTrigger), not rows",
            )
        self.left_over = bool(rest)
        return batch

    def _cache(self, rest: list[FileEntry], too_small: bool) -> None:
        if (
            not rest
            or too_small
            or self.latest_first
            or not self.cache_enabled
            or self.max_cached_files == 0
        ):
            self._unread = None
            return
        self._unread = rest[: self.max_cached_files]

    def clear_cache(self) -> None:
        self._unread = None
