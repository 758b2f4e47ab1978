"""Lag you can watch: a StreamingQueryListener that turns each progress into per-partition lag.

Python sources cannot report custom metrics (a progress's ``metrics`` stays empty), but every
progress carries each source's ``endOffset`` (where the batch stopped) and ``latestOffset``
(what the source saw available). :class:`LagListener` reads both:

- ``pyeventhub``: events behind per partition (latest minus end sequence number) and seconds
  behind the newest enqueued time, which the source reports under ``@lastEnqueuedTime`` in its
  latest offset (progress only: it never enters the checkpoint).
- ``pyrate``: rows behind (rows already due by the clock but not yet read).

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
from datetime import datetime, timezone
from typing import Any

from pyspark.sql.streaming.listener import StreamingQueryListener

from pysparksources.errors import OperationTimeoutError

__all__ = ["LagListener", "partition_lag"]

log = logging.getLogger(__name__)

LAST_ENQUEUED_KEY = "@lastEnqueuedTime"  # pyeventhub's reader reports it (reader.py)
_MAX_SAMPLES = 10_000  # per partition; pruned far below this in practice


def _parsed(value: Any) -> Any:
    """Offsets come as dicts on classic sessions and as JSON text over Spark Connect."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)


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
    """Per-partition lag of every pyeventhub (and pyrate) source, one log line per progress.

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
                {"index": 1, "format": "pyrate", "rowsBehind": 40}]}}

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
        sources = []
        for index, source in enumerate(progress.get("sources") or []):
            end, latest = _parsed(source.get("endOffset")), _parsed(source.get("latestOffset"))
            if not isinstance(end, dict) or not isinstance(latest, dict):
                continue
            found = self._eventhub(query, index, end, latest) or _rate(end, latest)
            if found is not None:
                sources.append({"index": index, **found})
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
        log.log(self._level, "%s", _line(query, entry))
        return entry

    def _eventhub(
        self, query: str, index: int, end: dict[str, Any], latest: dict[str, Any]
    ) -> dict[str, Any] | None:
        times = latest.get(LAST_ENQUEUED_KEY)
        hubs = [k for k, v in latest.items() if k != LAST_ENQUEUED_KEY and isinstance(v, dict)]
        if not isinstance(times, dict) or len(hubs) != 1 or not isinstance(end.get(hubs[0]), dict):
            return None
        hub = hubs[0]
        partitions = {}
        with self._lock:
            for pid, newest_seq in sorted(latest[hub].items(), key=lambda kv: int(kv[0])):
                stop = int(end[hub].get(pid, newest_seq))
                newest = _time(times[pid]) if pid in times else None
                history = self._histories.setdefault((query, index, pid), _History())
                if newest is not None:
                    history.add(int(newest_seq), newest)
                partitions[pid] = partition_lag(stop, int(newest_seq), newest, history)
                history.prune(stop)
        seconds = [p["secondsBehind"] for p in partitions.values()]
        most = [p["secondsBehindMax"] for p in partitions.values()]
        return {
            "format": "pyeventhub",
            "hub": hub,
            "eventsBehind": sum(p["eventsBehind"] for p in partitions.values()),
            "secondsBehind": None if None in seconds else max(seconds, default=0.0),
            "secondsBehindMax": None if None in most else max(most, default=0.0),
            "partitions": partitions,
        }


def _rate(end: dict[str, Any], latest: dict[str, Any]) -> dict[str, Any] | None:
    """pyrate (and Spark's rate-micro-batch, same offsets): rows due but not yet read."""
    for key in ("value", "offset"):  # rowsPerSecond mode / rowsPerBatch mode
        if isinstance(end.get(key), int) and isinstance(latest.get(key), int):
            if key == "value" and "createdMs" not in end:
                continue
            if key == "offset" and "timestamp" not in end:
                continue
            return {"format": "pyrate", "rowsBehind": max(0, latest[key] - end[key])}
    return None


def _line(query: str, entry: dict[str, Any]) -> str:
    parts = [f"lag of query {entry['name'] or query} batch {entry['batchId']}:"]
    for source in entry["sources"]:
        if source["format"] == "pyrate":
            parts.append(f"pyrate {source['rowsBehind']} rows behind;")
            continue
        seconds = source["secondsBehind"]
        shown = "unknown" if seconds is None else f">= {seconds:.3f}"
        per = ", ".join(f"{pid}: {p['eventsBehind']}" for pid, p in source["partitions"].items())
        parts.append(
            f"pyeventhub {source['hub']} {source['eventsBehind']} events behind ({per}), "
            f"seconds behind the newest event {shown};"
        )
    return " ".join(parts).rstrip(";")
