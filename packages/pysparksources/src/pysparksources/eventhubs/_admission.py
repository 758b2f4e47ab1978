"""How much a micro-batch reads: maxEventsPerTrigger split across partitions by backlog, and
minEventsPerTrigger / maxTriggerDelay deciding when a batch may start."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["TriggerGate", "next_end", "split_limit"]


def split_limit(limit: int | None, backlogs: dict[str, int]) -> dict[str, int]:
    """How many events each partition may add to the next batch.

    Each partition gets ``floor(limit * backlog / total)``, rounded up when that is below 1 so
    a small partition is never starved by a big one, and never more than its backlog (the
    Scala connector's rule). ``limit`` None means everything available.
    """
    positive = {pid: max(0, b) for pid, b in backlogs.items()}
    total = sum(positive.values())
    if limit is None or total <= limit:
        return positive
    shares: dict[str, int] = {}
    for pid, backlog in positive.items():
        if backlog == 0:
            shares[pid] = 0
            continue
        share = limit * backlog // total  # integer floor: exact for any backlog size
        shares[pid] = min(max(share, 1), backlog)
    return shares


def next_end(
    start: dict[str, int],
    latest: dict[str, int],
    beginnings: dict[str, int],
    limit: int | None,
) -> dict[str, int]:
    """The next batch's end offset from its start and each partition's latest position.

    A partition missing from ``start`` (added to the hub while the query runs) starts at its
    first retained event; one missing from ``latest`` (not in an AvailableNow snapshot) keeps
    its position.
    """
    begin = dict(start)
    for pid in latest:
        begin.setdefault(pid, beginnings.get(pid, 0))
    shares = split_limit(limit, {pid: latest[pid] - begin[pid] for pid in latest})
    return {pid: begin[pid] + shares.get(pid, 0) for pid in begin}


class TriggerGate:
    """minEventsPerTrigger with maxTriggerDelay: when a micro-batch may start.

    Python sources get no composite read limit and the engine does not interpret
    ``ReadMinRows`` for them, so the source keeps the clock itself. A batch starts when at
    least ``min_events`` wait, or when ``max_delay_s`` has passed since the previous batch
    (since the run's first check if none ran yet) and anything waits. The run's first check
    never holds events back, as with Spark's Kafka source, so a restart reads what piled up.
    Unlike Kafka's, the clock is not reset by a check that found nothing: an event arriving
    after a quiet spell longer than the delay is read at once instead of waiting a full delay.
    """

    def __init__(self, min_events: int, max_delay_s: float, clock: Callable[[], float]) -> None:
        self._min_events = min_events
        self._max_delay_s = max_delay_s
        self._clock = clock
        self._since: float | None = None

    def admit(self, waiting: int) -> bool:
        """True when a batch of the ``waiting`` events may start now (then the clock restarts)."""
        now = self._clock()
        first = self._since is None
        since = now if self._since is None else self._since
        self._since = since
        if waiting <= 0:
            return False
        if first or waiting >= self._min_events or now - since >= self._max_delay_s:
            self._since = now
            return True
        return False
