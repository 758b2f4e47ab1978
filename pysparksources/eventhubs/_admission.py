"""maxEventsPerTrigger: split one trigger's event budget across partitions by backlog."""

from __future__ import annotations

__all__ = ["split_limit"]


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
