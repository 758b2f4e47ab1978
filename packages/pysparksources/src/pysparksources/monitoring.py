"""Lag you can watch: a StreamingQueryListener that turns each progress into per-partition lag.

Python sources cannot report custom metrics (a progress's ``metrics`` stays empty), but every
progress carries each source's ``endOffset`` (where the batch stopped) and ``latestOffset``
(what the source saw available). :class:`LagListener` reads both:

- ``pyeventhub``: events behind per partition (latest minus end sequence number) and seconds
  behind the newest enqueued time, which the source reports under ``@lastEnqueuedTime`` in its
  latest offset (progress only: it never enters the checkpoint).
- ``pyrate``: rows behind (rows already due by the clock but not yet read).
- ``pyfile`` with ``discovery=notifications``: files behind (found, waiting for a batch).

Each source's ``offsets.py`` decodes its own offsets and states its lag (an ``OffsetKind``);
the listener asks each kind of :data:`OFFSET_KINDS` in turn whether a progress's offsets are
its own (Python sources' progress ``description`` names no source).

The seconds are bounded from the listener's own history: event ``end`` (the first unread one)
was enqueued after the newest time of a progress whose latest was still at or below ``end``,
and at or before the newest time of the first progress whose latest passed it. ``secondsBehind``
is the lower bound (exact to within the gap between those two progresses, one trigger in steady
state), ``secondsBehindMax`` the upper; both are None until the listener has seen the partition
before its first unread event arrived (attached to a query that is already far behind).

::

    from pysparksources.monitoring import LagListener

    lag = LagListener()
    spark.streams.addListener(lag)  # classic and Spark Connect (runs in the client there)
    ...
    lag.lag()       # {query id: {...}}, see LagListener.lag
    lag.lag_json()  # the same as JSON text
    query.stop()
    lag.detach(spark, query)  # rather than spark.streams.removeListener(lag), see detach
"""

from __future__ import annotations

import bisect
import json
import logging
import threading
import time
from datetime import datetime
from typing import Any

from pyspark.sql.streaming.listener import StreamingQueryListener

from pysparksources._core.lag import CountLag, OffsetKind, PartitionedLag
from pysparksources.errors import OperationTimeoutError
from pysparksources.eventhubs import offsets as eventhubs_offsets
from pysparksources.files import offsets as files_offsets
from pysparksources.rate import offsets as rate_offsets

__all__ = ["OFFSET_KINDS", "LagListener", "partition_lag"]

log = logging.getLogger(__name__)

# Every source's offsets, as the listener knows them (tests/core/test_offsets.py checks that
# each source of pysparksources.source_names() has its kind here).
OFFSET_KINDS: tuple[OffsetKind, ...] = (
    eventhubs_offsets.KIND,
    files_offsets.KIND,
    rate_offsets.KIND,
)
_MAX_SAMPLES = 10_000  # per partition; pruned far below this in practice


class _History:
    """(newest sequence number + 1, newest enqueued time) samples of one partition."""

    def __init__(self) -> None:
        self.latest: list[int] = []
        self.times: list[datetime] = []

    def add(self, latest: int, enqueued: datetime) -> None:
        at = bisect.bisect_left(self.latest, latest)
        if at < len(self.latest) and self.latest[at] == latest:
            return
        self.latest.insert(at, latest)
        self.times.insert(at, enqueued)

    def bounds(self, end: int) -> tuple[datetime, datetime] | None:
        """(after, at or before): when event ``end`` was enqueued, as far as the samples say."""
        below = bisect.bisect_right(self.latest, end) - 1  # latest <= end: event not there yet
        if below < 0 or below + 1 >= len(self.latest):
            return None
        return self.times[below], self.times[below + 1]

    def prune(self, end: int) -> None:
        """Forget samples no later position can need (keep the last one at or below ``end``)."""
        keep = max(0, bisect.bisect_right(self.latest, end) - 1, len(self.latest) - _MAX_SAMPLES)
        del self.latest[:keep], self.times[:keep]


def partition_lag(
    end: int, latest: int, newest: datetime | None, history: _History | None
) -> dict[str, Any]:
    """One partition's lag from its end and latest positions (``history`` is updated first)."""
    events = max(0, latest - end)
    result: dict[str, Any] = {
        "eventsBehind": events,
        "secondsBehind": None,
        "secondsBehindMax": None,
        "newestEnqueuedTime": None if newest is None else newest.isoformat(),
    }
    if events == 0:
        result["secondsBehind"] = result["secondsBehindMax"] = 0.0
    elif newest is not None and history is not None:
        bounds = history.bounds(end)
        if bounds is not None:
            after, by = bounds
            result["secondsBehind"] = max(0.0, (newest - by).total_seconds())
            result["secondsBehindMax"] = max(0.0, (newest - after).total_seconds())
    return result


class LagListener(StreamingQueryListener):  # type: ignore[misc]
    """Lag of every source of ours a progress shows (pyeventhub per partition, pyrate, pyfile
    with notifications), one log line per progress.

    Parameters
    ----------
    level:
        The logging level of the line each progress produces (INFO by default), on the
        ``pysparksources.monitoring`` logger.
    """

    def __init__(self, level: int = logging.INFO) -> None:
        self._level = level
        self._lock = threading.Lock()
        self._lag: dict[str, dict[str, Any]] = {}
        self._histories: dict[tuple[str, int, str], _History] = {}
        self._ended: set[str] = set()
        self._ended_changed = threading.Condition(self._lock)

    # -- the listener ----------------------------------------------------------------------
    def onQueryStarted(self, event: Any) -> None:
        pass

    def onQueryIdle(self, event: Any) -> None:
        pass

    def onQueryTerminated(self, event: Any) -> None:
        with self._ended_changed:
            self._ended.add(str(event.id))
            self._ended_changed.notify_all()

    def onQueryProgress(self, event: Any) -> None:
        try:
            self.record(json.loads(event.progress.json))
        except Exception:  # a listener that raises would stop hearing about the query
            log.warning("pysparksources: could not compute lag from a progress", exc_info=True)

    # -- what it exposes -------------------------------------------------------------------
    def lag(self) -> dict[str, dict[str, Any]]:
        """The latest lag of each query, keyed by query id::

            {"<query id>": {"name": ..., "batchId": 7, "timestamp": "...", "sources": [
                {"index": 0, "format": "pyeventhub", "hub": "orders",
                 "eventsBehind": 120, "secondsBehind": 1.5, "secondsBehindMax": 2.0,
                 "partitions": {"0": {"eventsBehind": 100, "secondsBehind": 1.5,
                                      "secondsBehindMax": 2.0,
                                      "newestEnqueuedTime": "2026-...+00:00"}, ...}},
                {"index": 1, "format": "pyrate", "rowsBehind": 40},
                {"index": 2, "format": "pyfile", "filesBehind": 3}]}}

        A source's seconds are the largest of its partitions' (None if any is unknown).
        """
        with self._lock:
            copy: dict[str, dict[str, Any]] = json.loads(json.dumps(self._lag))
        return copy  # a deep copy the caller may keep

    def lag_json(self) -> str:
        """:meth:`lag` as JSON text, keys sorted."""
        return json.dumps(self.lag(), sort_keys=True)

    def detach(self, spark: Any, *stopped: Any, timeout: float = 60.0) -> None:
        """Remove this listener from ``spark`` once each query in ``stopped`` has told it that
        it terminated.

        PySpark's Connect client hangs for good when its last listener is removed while an
        event is still on its way to the client (SPARK-59623: the remover holds the lock the
        event needs and waits for the event). A query's termination event is its last, so
        waiting for it first leaves no event in flight. On a classic session the wait is only
        as long as Spark's listener bus takes to deliver it.

        Raises :class:`~pysparksources.errors.OperationTimeoutError` (a ``TimeoutError``),
        without removing the listener, when a query has not terminated within ``timeout``
        seconds (stop it first).
        """
        wanted = {str(query.id) for query in stopped}
        deadline = time.monotonic() + timeout
        with self._ended_changed:
            while not wanted <= self._ended:
                left = deadline - time.monotonic()
                if left <= 0:
                    running = ", ".join(sorted(wanted - self._ended))
                    raise OperationTimeoutError(
                        "LagListener.detach",
                        f"no termination event within {timeout} s from "
                        f"queries {running}; stop them before detaching the listener",
                    )
                self._ended_changed.wait(left)
        spark.streams.removeListener(self)

    # -- the work --------------------------------------------------------------------------
    def record(self, progress: dict[str, Any]) -> dict[str, Any] | None:
        """Compute and store the lag of one progress (a dict of ``progress.json``); None when
        it has no source this listener understands."""
        query = str(progress.get("id"))
        sources, said = [], []
        for index, source in enumerate(progress.get("sources") or []):
            # Dicts on classic sessions, JSON text over Spark Connect: the kinds read both.
            found = _lag_of(source.get("endOffset"), source.get("latestOffset"))
            if isinstance(found, CountLag):
                counted = {"format": found.source, f"{found.unit}Behind": found.behind}
                sources.append({"index": index, **counted})
                said.append(f"{found.source} {found.behind} {found.unit} behind")
            elif isinstance(found, PartitionedLag):
                partitioned = self._partitioned(query, index, found)
                sources.append({"index": index, **partitioned})
                said.append(_partitioned_line(found, partitioned))
        if not sources:
            return None
        entry = {
            "name": progress.get("name"),
            "batchId": progress.get("batchId"),
            "timestamp": progress.get("timestamp"),
            "sources": sources,
        }
        with self._lock:
            self._lag[query] = entry
        named = entry["name"] or query
        log.log(
            self._level, "lag of query %s batch %s: %s", named, entry["batchId"], "; ".join(said)
        )
        return entry

    def _partitioned(self, query: str, index: int, found: PartitionedLag) -> dict[str, Any]:
        """Per-partition lag, the seconds bounded by this listener's history of each one."""
        behind = f"{found.unit}Behind"
        partitions = {}
        with self._lock:
            for pid, at in found.partitions.items():
                history = self._histories.setdefault((query, index, pid), _History())
                if at.newest is not None:
                    history.add(at.latest, at.newest)
                lag = partition_lag(at.end, at.latest, at.newest, history)
                partitions[pid] = {behind: lag.pop("eventsBehind"), **lag}
                history.prune(at.end)
        seconds = [p["secondsBehind"] for p in partitions.values()]
        most = [p["secondsBehindMax"] for p in partitions.values()]
        return {
            "format": found.source,
            **found.labels,
            behind: sum(p[behind] for p in partitions.values()),
            "secondsBehind": None if None in seconds else max(seconds, default=0.0),
            "secondsBehindMax": None if None in most else max(most, default=0.0),
            "partitions": partitions,
        }


def _lag_of(end: Any, latest: Any) -> CountLag | PartitionedLag | None:
    """The lag the first kind that knows these offsets states (None: no kind does)."""
    for kind in OFFSET_KINDS:
        found = kind.lag(end, latest)
        if found is not None:
            return found
    return None


def _partitioned_line(found: PartitionedLag, entry: dict[str, Any]) -> str:
    """``pyeventhub orders 120 events behind (0: 100, 1: 20), seconds behind ...``."""
    behind = f"{found.unit}Behind"
    seconds = entry["secondsBehind"]
    shown = "unknown" if seconds is None else f">= {seconds:.3f}"
    per = ", ".join(f"{pid}: {p[behind]}" for pid, p in entry["partitions"].items())
    labels = "".join(f" {label}" for label in found.labels.values())
    return (
        f"{found.source}{labels} {entry[behind]} {found.unit} behind ({per}), "
        f"seconds behind the newest event {shown}"
    )
