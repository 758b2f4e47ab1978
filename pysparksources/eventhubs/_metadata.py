"""Driver-side partition metadata, cached briefly because Spark polls latestOffset often."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from pysparksources.eventhubs._positions import Position
from pysparksources.eventhubs._receivers import PositionedReceiver
from pysparksources.eventhubs.options import SourceConfig

__all__ = ["HubMetadata", "PartitionInfo"]

log = logging.getLogger(__name__)

_IDS_REFRESH_S = 30.0
_PARALLEL_CALLS = 16
_STALE_GRACE_S = 10.0  # how long expired info may still answer while a refresh runs
T = TypeVar("T")


@dataclass(frozen=True)
class PartitionInfo:
    beginning: int  # first retained sequence number
    latest: int  # last enqueued sequence number + 1: the next one to be written
    empty: bool
    last_enqueued: datetime | None = None  # when event latest - 1 was enqueued; None if empty


class HubMetadata:
    """Partition ids and properties through one consumer client, reused for a short interval."""

    def __init__(self, config: SourceConfig) -> None:
        self._config = config
        self._client: Any = None
        self._fetched_at = -1e18
        self._infos: dict[str, PartitionInfo] = {}
        self._ids: list[str] | None = None
        self._ids_at = -1e18
        self._pool: ThreadPoolExecutor | None = None
        self._refresher: ThreadPoolExecutor | None = None
        self._refreshing: Future[dict[str, PartitionInfo]] | None = None
        self._stored_started = -1e18
        self._lock = threading.Lock()

    def _consumer(self) -> Any:
        if self._client is None:
            self._client = self._config.connection.consumer_client(self._config.consumer_group)
        return self._client

    def _partition_ids(self, now: float, fresh: bool) -> list[str]:
        # Partition counts change rarely (only upwards); re-read them every half minute.
        if fresh or self._ids is None or now - self._ids_at >= _IDS_REFRESH_S:
            ids = self._bounded(lambda: list(self._consumer().get_partition_ids()), "partition ids")
            self._ids = [str(pid) for pid in ids]
            self._ids_at = now
        return self._ids

    def partitions(
        self, fresh: bool = False, max_age: float | None = None
    ) -> dict[str, PartitionInfo]:
        """Every partition's info, fetched again when older than ``max_age`` seconds
        (default partitionInfoCacheInterval; ``fresh`` means 0).

        With the default age, info that has just expired is still returned while a
        background fetch replaces it: Spark polls latestOffset between and before batches,
        and a fetch on the query thread (~0.4 s) would delay every micro-batch by that much.
        """
        limit = 0.0 if fresh else self._config.info_cache_s if max_age is None else max_age
        age = time.monotonic() - self._fetched_at
        if age < limit:
            return self._infos
        if max_age is None and not fresh and self._infos and age < limit + _STALE_GRACE_S:
            self._refresh_in_background()
            return self._infos
        started = time.monotonic()
        self._store(self._fetch(fresh), started)
        return self._infos

    def _fetch(self, fresh: bool) -> dict[str, PartitionInfo]:
        ids = self._partition_ids(time.monotonic(), fresh)
        # Each management call waits ~0.4 s in the SDK; independent calls overlap.
        found = self._bounded(
            lambda: list(self._executor().map(self._partition_info, ids)),
            "partition properties",
        )
        return dict(sorted(zip(ids, found, strict=True), key=lambda kv: int(kv[0])))

    def _store(self, infos: dict[str, PartitionInfo], started: float) -> None:
        with self._lock:
            if started >= self._stored_started:  # an older, slower fetch never wins
                self._infos = infos
                self._stored_started = started
                # Age counts from the end of the fetch, or a slow fetch would never be reused.
                self._fetched_at = time.monotonic()

    def _refresh_in_background(self) -> None:
        with self._lock:
            if self._refreshing is not None:
                return
            if self._refresher is None:
                self._refresher = ThreadPoolExecutor(1, "pyeventhub-metadata-refresh")
            started = time.monotonic()
            self._refreshing = self._refresher.submit(self._fetch, False)
        self._refreshing.add_done_callback(lambda done: self._refreshed(done, started))

    def _refreshed(self, done: Future[dict[str, PartitionInfo]], started: float) -> None:
        with self._lock:
            self._refreshing = None
        error = done.exception()
        if error is None:
            self._store(done.result(), started)
        else:  # past the grace period the query thread fetches itself and fails if it must
            log.warning("pyeventhub: refreshing partition info failed: %s", error)

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(_PARALLEL_CALLS, "pyeventhub-metadata")
        return self._pool

    def _bounded(self, call: Callable[[], T], what: str) -> T:
        """``call()``, failing after operationTimeout: the SDK's management calls have no
        deadline of their own, so a service that never answers would stall the query silently."""
        limit = self._config.operation_timeout_s
        # A separate thread, not the pool: the pool's threads may be what ``call`` waits on.
        box = ThreadPoolExecutor(1, "pyeventhub-metadata-call")
        try:
            return box.submit(call).result(timeout=limit)
        except FutureTimeout:
            raise TimeoutError(
                f"pyeventhub: reading {what} of {self._config.connection.describe()} took longer "
                f"than operationTimeout ({limit:g}s)"
            ) from None
        finally:
            box.shutdown(wait=False)

    def _partition_info(self, pid: str) -> PartitionInfo:
        props = self._consumer().get_partition_properties(pid)
        last = int(props["last_enqueued_sequence_number"])
        empty = bool(props["is_empty"])
        beginning = last + 1 if empty else int(props["beginning_sequence_number"])
        enqueued = None if empty else props.get("last_enqueued_time_utc")
        return PartitionInfo(beginning, last + 1, empty, enqueued)

    def resolve(self, pid: str, position: Position) -> int:
        """The next sequence number to read for ``position`` in partition ``pid``."""
        info = self.partitions()[pid]
        simple = position.resolve_simple(info.beginning, info.latest)
        if simple is not None:
            return simple
        start: str | Any = position.offset if position.kind == "offset" else position.enqueued_time
        receiver = PositionedReceiver(self._config, pid, start, position.inclusive)
        try:
            # Nothing at or after the position yet: start where the next event will be.
            first = receiver.first_event(min(5.0, self._config.receiver_timeout_s))
        finally:
            receiver.close()
        return info.latest if first is None else int(first.sequence_number)

    def close(self) -> None:
        if self._refresher is not None:
            self._refresher.shutdown(wait=False)
            self._refresher = None
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None
        if self._client is not None:
            self._client.close()
            self._client = None
