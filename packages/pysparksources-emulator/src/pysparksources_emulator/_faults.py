"""Fault injection: make the emulator misbehave on purpose, the ways Event Hubs does.

A :class:`Fault` says *what* (detach a link, close the connection, abort TCP, reject sends,
delay replies, stall deliveries), *where* (hub, partition, consumer group, link kind), *when*
(after N matching events, after T seconds, or at the next matching activity), how many times,
and for how long (``duration``: an outage that ends by itself, as the service's do).
Tests add faults from their own thread; the server consults them on its event loop, so the
registry is guarded by a lock.

Management and CBS links accept only ``delay``: the SDK waits forever for a dropped
``$management`` reply, so such a fault would hang a test rather than exercise recovery.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Fault", "FaultInjector", "LinkInfo"]

Action = Literal["detach", "close", "abort", "reject", "delay", "stall"]
LinkKind = Literal["sender", "receiver", "management", "cbs"]
DISRUPTIVE: frozenset[str] = frozenset({"detach", "close", "abort"})


@dataclass(frozen=True)
class LinkInfo:
    """What a fault can match a link on."""

    kind: LinkKind
    hub: str | None = None
    partition: int | None = None
    consumer_group: str | None = None


@dataclass(eq=False)
class Fault:
    """One injected fault.

    With neither trigger (``after_events``, ``after_seconds``) the fault fires at the next
    matching activity (attach, event, reply).

    Parameters
    ----------
    action:
        ``detach`` (the link, with ``condition``), ``close`` (the connection, with
        ``condition``), ``abort`` (drop TCP without a close frame), ``reject`` (settle sends as
        rejected with ``condition``, e.g. ``com.microsoft:server-busy``), ``delay`` (hold a reply
        or a delivery for ``delay`` seconds), ``stall`` (receiver links stay attached and get
        no delivery while the fault is in force: a partition the service stopped serving;
        ``times`` does not apply, ``fired`` counts the deliveries it held back).
    hub, partition, consumer_group, link:
        Match only links with these properties; ``None`` matches anything.
    after_events:
        Fire once this many matching events went through (delivered or accepted).
    after_seconds:
        Fire on the first matching link alive this long after the fault was added.
    times:
        How often to fire; ``None`` means every time it is due.
    duration:
        In force for this many seconds from its first firing, then spent (``None``: until
        removed or exhausted). With ``times=None``, an outage of a set length that starts
        when its trigger is met.
    """

    action: Action
    condition: str = "amqp:link:detach-forced"
    description: str = "Fault injected by pysparksources-emulator."
    hub: str | None = None
    partition: int | None = None
    consumer_group: str | None = None
    link: LinkKind | None = None
    after_events: int | None = None
    after_seconds: float | None = None
    times: int | None = 1
    delay: float = 0.0
    duration: float | None = None
    fired: int = 0
    first_fired_at: float | None = None
    events_seen: int = 0
    installed_at: float = field(default_factory=time.monotonic)
    _event: threading.Event = field(default_factory=threading.Event, repr=False)

    def __post_init__(self) -> None:
        if self.link in ("management", "cbs") and self.action != "delay":
            raise ValueError(
                "management and CBS links accept only 'delay' faults: the SDK never retries a "
                "dropped $management reply"
            )
        if self.action == "reject" and self.link not in (None, "sender"):
            raise ValueError("'reject' applies to sender links only")
        if self.action == "delay" and self.delay <= 0:
            raise ValueError("a 'delay' fault needs delay > 0")
        if self.action == "stall":
            if self.link not in (None, "receiver"):
                raise ValueError("'stall' applies to receiver links only")
            self.times = None  # a stall lasts while it is in force, not a number of firings
        if self.duration is not None and self.duration <= 0:
            raise ValueError("a fault's duration must be > 0 (None: until removed)")

    def matches(self, info: LinkInfo) -> bool:
        if self.link is not None and self.link != info.kind:
            return False
        if self.link is None and info.kind in ("management", "cbs") and self.action != "delay":
            return False
        if self.hub is not None and (info.hub or "").lower() != self.hub.lower():
            return False
        if self.partition is not None and info.partition != self.partition:
            return False
        return not (
            self.consumer_group is not None
            and (info.consumer_group or "").lower() != self.consumer_group.lower()
        )

    @property
    def exhausted(self) -> bool:
        return self.times is not None and self.fired >= self.times

    def in_force(self, now: float) -> bool:
        """Not exhausted, and within its ``duration`` if it has one."""
        if self.exhausted:
            return False
        started = self.first_fired_at
        return self.duration is None or started is None or now - started < self.duration

    def is_due(self, now: float) -> bool:
        if self.after_events is not None and self.events_seen < self.after_events:
            return False
        return not (self.after_seconds is not None and now - self.installed_at < self.after_seconds)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the fault fired at least once (for tests)."""
        return self._event.wait(timeout)


class FaultInjector:
    """The registry of active faults."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []

    def add(self, fault: Fault) -> Fault:
        with self._lock:
            fault.installed_at = time.monotonic()
            self._faults.append(fault)
        return fault

    def remove(self, fault: Fault) -> None:
        with self._lock:
            if fault in self._faults:
                self._faults.remove(fault)

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def __bool__(self) -> bool:
        return bool(self._faults)

    @property
    def has_timed(self) -> bool:
        return any(f.after_seconds is not None and not f.exhausted for f in self._faults)

    def count_events(self, info: LinkInfo, count: int = 1) -> None:
        if not self._faults:
            return
        with self._lock:
            for fault in self._faults:
                if fault.after_events is not None and not fault.exhausted and fault.matches(info):
                    fault.events_seen += count

    def peek(self, info: LinkInfo, actions: frozenset[str] | set[str]) -> bool:
        """Whether a fault among ``actions`` is due for this link (without firing it)."""
        if not self._faults:
            return False
        now = time.monotonic()
        with self._lock:
            return any(
                f.action in actions and f.in_force(now) and f.matches(info) and f.is_due(now)
                for f in self._faults
            )

    def take(self, info: LinkInfo, actions: frozenset[str] | set[str]) -> Fault | None:
        """Return a due fault among ``actions`` for this link and count it as fired."""
        if not self._faults:
            return None
        now = time.monotonic()
        with self._lock:
            for fault in self._faults:
                if (
                    fault.action in actions
                    and fault.in_force(now)
                    and fault.matches(info)
                    and fault.is_due(now)
                ):
                    fault.fired += 1
                    if fault.first_fired_at is None:
                        fault.first_fired_at = now
                    fault._event.set()
                    return fault
        return None
