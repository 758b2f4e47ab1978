"""Which files a stream has already taken: Spark's ``SeenFilesMap``.

A file is new when it was never taken and its modification time is not older than
``maxFileAge`` before the newest file taken so far (the file timestamps, never the clock, so a
backlog replayed days later behaves the same). Purging is incremental (a heap ordered by
timestamp), so a batch's bookkeeping costs the same with 1,000 or 100,000 files seen.
"""

from __future__ import annotations

import heapq
import posixpath

__all__ = ["SeenFiles"]


class SeenFiles:
    def __init__(self, max_age_ms: int | None, file_name_only: bool) -> None:
        self._max_age_ms = max_age_ms
        self._file_name_only = file_name_only
        self._map: dict[str, int] = {}
        self._heap: list[tuple[int, str]] = []
        self.latest_timestamp = 0
        # Spark starts at 0, so the first batch (or the first after a restart) accepts every file.
        self._last_purge_timestamp = 0

    def key(self, path: str) -> str:
        return posixpath.basename(path) if self._file_name_only else path

    def __len__(self) -> int:
        return len(self._map)

    def __contains__(self, path: str) -> bool:
        return self.key(path) in self._map

    def is_new(self, path: str, timestamp: int) -> bool:
        return timestamp >= self._last_purge_timestamp and self.key(path) not in self._map

    def add(self, path: str, timestamp: int) -> None:
        key = self.key(path)
        self._map[key] = timestamp
        if self._max_age_ms is not None:
            heapq.heappush(self._heap, (timestamp, key))
        self.latest_timestamp = max(self.latest_timestamp, timestamp)

    def purge(self) -> int:
        """Forget files older than maxFileAge before the newest; returns how many."""
        if self._max_age_ms is None:
            return 0
        self._last_purge_timestamp = self.latest_timestamp - self._max_age_ms
        removed = 0
        while self._heap and self._heap[0][0] < self._last_purge_timestamp:
            timestamp, key = heapq.heappop(self._heap)
            if self._map.get(key) == timestamp:
                del self._map[key]
                removed += 1
        return removed

    @property
    def threshold(self) -> int:
        return self._last_purge_timestamp
