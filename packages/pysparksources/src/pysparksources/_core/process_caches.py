"""What a Python worker keeps between tasks: named, bounded caches and one housekeeping thread.

Spark reuses Python workers across tasks and batches, so what a module keeps outlives the task
that made it: parked receivers, producers, credentials, schemas, decoders. Each such cache is a
:class:`ProcessCache` of the one :data:`PROCESS` registry, with a name, a bound in entries
(the least recently used goes first), optional expiry (by age, or by time unused) and what
closes an entry that leaves it. An entry leaves once, whoever removes it (an eviction, an
expiry, a replacement, :meth:`ProcessCache.clear`), and its ``close`` runs outside the lock, so
a slow close (an AMQP detach) never holds up another task's lookup.

One daemon thread per process sweeps the caches that ask for it (expiry, and a ``reap`` check
such as a receiver spinning on a lost connection), each at its own interval; it starts with
the first entry that needs it and sleeps while no cache does. Nothing starts at import: Spark's
daemon forks its workers and must have no thread of ours when it does.

A process forked from one holding caches (``multiprocessing``, a worker's child) starts with
them empty and makes its own: what it inherited (sockets, threads that did not survive the
fork, locks held at that moment) belongs to the parent, so it is neither used nor closed there.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = ["PROCESS", "ProcessCache", "ProcessValue", "Registry"]

log = logging.getLogger(__name__)
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
T = TypeVar("T")


@dataclass
class _Entry(Generic[V]):
    value: V
    stored: float  # when put
    used: float  # when last got or put
    max_age_s: float | None


class ProcessCache(Generic[K, V]):
    """One named cache of a :class:`Registry`; made with :meth:`Registry.cache`. A value is
    never None (None means absent) and lives under one key."""

    def __init__(
        self,
        registry: Registry,
        name: str,
        max_entries: int,
        max_age_s: float | None,
        max_idle_s: float | None,
        close: Callable[[V], object] | None,
        reap: Callable[[V], bool] | None,
        sweep_every_s: float | None,
        close_at_exit: bool,
        clock: Callable[[], float],
    ) -> None:
        if max_entries < 1:
            raise ValueError(f"cache {name}: max_entries must be at least 1, not {max_entries}")
        self.name, self.max_entries = name, max_entries
        self.max_age_s, self.max_idle_s = max_age_s, max_idle_s
        self.close_at_exit = close_at_exit
        self.clock = clock
        self._registry = registry
        self._close, self._reap = close, reap
        expiry = [s for s in (max_age_s, max_idle_s) if s is not None]
        self.sweep_every_s = sweep_every_s
        if sweep_every_s is None and (expiry or reap is not None):
            self.sweep_every_s = min(expiry) if expiry else 1.0
        self._entries: OrderedDict[K, _Entry[V]] = OrderedDict()
        # When the sweep last ran (the registry's clock): a cache that gets an entry after a
        # quiet spell is swept at once (a receiver's spin check takes its first marks then).
        self._swept_at = 0.0
        self._warned = False

    # Every method below takes the registry's lock for dictionary work only, and closes what
    # it removed after letting go of it.

    def get(self, key: K) -> V | None:
        """The value under ``key`` (now the most recently used), or None if absent or expired."""
        gone: list[V] = []
        with self._registry.lock:
            value = self._live(key, gone)
        self._closed(gone)
        return value

    def get_or_make(self, key: K, make: Callable[[], V]) -> V:
        """The value under ``key``, or ``make()``'s, stored. ``make`` runs outside the lock; when
        two threads make one at once, the first stored wins and the other is closed."""
        found = self.get(key)
        if found is not None:
            return found
        made = make()
        gone: list[V] = []
        with self._registry.lock:
            found = self._live(key, gone)
            if found is None:
                self._store(key, made, None, gone)
            else:
                gone.append(made)
        self._closed(gone)
        return made if found is None else found

    def put(self, key: K, value: V, max_age_s: float | None = None) -> None:
        """Store ``value`` (closing the one it replaces, unless the same); ``max_age_s``
        overrides the cache's own for this entry."""
        gone: list[V] = []
        with self._registry.lock:
            self._store(key, value, max_age_s, gone)
        self._closed(gone)

    def take(self, key: K) -> V | None:
        """Remove and return the value under ``key`` without closing it: the caller owns it."""
        gone: list[V] = []
        with self._registry.lock:
            value = self._live(key, gone)
            if value is not None:
                del self._entries[key]
        self._closed(gone)
        return value

    def discard(self, key: K) -> None:
        """Remove the value under ``key`` and close it."""
        with self._registry.lock:
            entry = self._entries.pop(key, None)
        self._closed([] if entry is None else [entry.value])

    def clear(self) -> list[V]:
        """Remove every value and close it; returns them."""
        with self._registry.lock:
            gone = [entry.value for entry in self._entries.values()]
            self._entries.clear()
        self._closed(gone)
        return gone

    def sweep(self) -> list[V]:
        """Remove and close the expired values and those ``reap`` says to close; returns them.

        ``reap`` runs outside the lock (it may read a thread's CPU clock or a file), once per
        sweep for every value stored when the sweep began; a value taken or replaced meanwhile
        is left to its new owner.
        """
        with self._registry.lock:
            self._swept_at = time.monotonic()
            now = self.clock()
            gone = [e.value for k, e in list(self._entries.items()) if self._expire(k, e, now)]
            stored = list(self._entries.items())
        reaped = []
        if self._reap is not None:
            for key, entry in stored:
                try:
                    if self._reap(entry.value):
                        reaped.append((key, entry))
                except (
                    Exception
                ):  # a bug: said once, then kept quiet (sweeps run 10 times a second)
                    level = logging.DEBUG if self._warned else logging.WARNING
                    self._warned = True
                    log.log(level, "cache %s: checking an entry failed", self.name, exc_info=True)
        with self._registry.lock:
            for key, entry in reaped:
                if self._entries.get(key) is entry:
                    del self._entries[key]
                    gone.append(entry.value)
        self._closed(gone)
        return gone

    def __len__(self) -> int:
        with self._registry.lock:
            return len(self._entries)

    def __contains__(self, key: K) -> bool:
        return self.get(key) is not None

    def _live(self, key: K, gone: list[V]) -> V | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        now = self.clock()
        if self._expire(key, entry, now):
            gone.append(entry.value)
            return None
        entry.used = now
        self._entries.move_to_end(key)
        return entry.value

    def _expire(self, key: K, entry: _Entry[V], now: float) -> bool:
        """Remove ``entry`` if it is past its age or idle time; whether it was."""
        age = entry.max_age_s
        idle = self.max_idle_s
        if (age is not None and now - entry.stored >= age) or (
            idle is not None and now - entry.used >= idle
        ):
            del self._entries[key]
            return True
        return False

    def _store(self, key: K, value: V, max_age_s: float | None, gone: list[V]) -> None:
        now = self.clock()
        previous = self._entries.pop(key, None)
        if previous is not None and previous.value is not value:
            gone.append(previous.value)
        age = self.max_age_s if max_age_s is None else max_age_s
        self._entries[key] = _Entry(value, now, now, age)
        while len(self._entries) > self.max_entries:
            gone.append(self._entries.popitem(last=False)[1].value)
        if self.sweep_every_s is not None:
            self._registry.wake()

    def _closed(self, values: list[V]) -> None:
        if self._close is None:
            return
        for value in values:
            try:
                self._close(value)
            except Exception:  # closing is best effort: the value is out of the cache already
                log.debug("cache %s: closing an entry failed", self.name, exc_info=True)

    def _due_in(self, now: float) -> float | None:
        """Seconds until this cache's next sweep (under the lock); None: nothing to sweep."""
        if self.sweep_every_s is None or not self._entries:
            return None
        return max(0.0, self._swept_at + self.sweep_every_s - now)

    def _forget(self) -> None:
        """After a fork: the parent's values are the parent's (kept referenced, never closed
        or finalized here)."""
        self._registry.inherited.extend(e.value for e in self._entries.values())
        self._entries = OrderedDict()


class ProcessValue(Generic[T]):
    """One value per process, made on first use; a forked child makes its own."""

    def __init__(self, registry: Registry, name: str, make: Callable[[], T]) -> None:
        self.name = name
        self._registry, self._make = registry, make
        self._value: T | None = None

    def get(self) -> T:
        value = self._value
        if value is None:
            with self._registry.lock:
                value = self._value
                if value is None:
                    value = self._value = self._make()
        return value

    def _forget(self) -> None:
        if self._value is not None:
            self._registry.inherited.append(self._value)
        self._value = None


class Registry:
    """The caches and per-process values of one process, and the thread that sweeps them.

    The product uses the one :data:`PROCESS`; tests make their own, some without the thread
    (``housekeeping=False``: only :meth:`ProcessCache.sweep` sweeps, for tests that drive time).
    """

    def __init__(
        self, thread_name: str = "pysparksources-housekeeping", housekeeping: bool = True
    ) -> None:
        self.lock = threading.Lock()
        self.thread_name = thread_name
        self.inherited: list[Any] = []  # what a forked child got from its parent: untouched
        self._caches: dict[str, ProcessCache[Any, Any]] = {}
        self._values: dict[str, ProcessValue[Any]] = {}
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._stopped = not housekeeping
        _REGISTRIES.add(self)

    def cache(
        self,
        name: str,
        max_entries: int,
        *,
        max_age_s: float | None = None,
        max_idle_s: float | None = None,
        close: Callable[[V], object] | None = None,
        reap: Callable[[V], bool] | None = None,
        sweep_every_s: float | None = None,
        close_at_exit: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> ProcessCache[Any, V]:
        """A new named cache. Entries expire ``max_age_s`` after they were stored or
        ``max_idle_s`` after their last use; ``reap(value)`` True closes one at the next sweep
        (every ``sweep_every_s``; by default the shorter expiry, or each second with ``reap``);
        ``close_at_exit`` closes the entries when the interpreter exits normally."""
        cache: ProcessCache[Any, V] = ProcessCache(
            self,
            name,
            max_entries,
            max_age_s,
            max_idle_s,
            close,
            reap,
            sweep_every_s,
            close_at_exit,
            clock,
        )
        with self.lock:
            if name in self._caches or name in self._values:
                raise ValueError(f"a process cache named {name!r} exists already")
            self._caches[name] = cache
        return cache

    def value(self, name: str, make: Callable[[], T]) -> ProcessValue[T]:
        """A new named per-process value, made by ``make`` on first use."""
        value = ProcessValue(self, name, make)
        with self.lock:
            if name in self._caches or name in self._values:
                raise ValueError(f"a process cache named {name!r} exists already")
            self._values[name] = value
        return value

    def sizes(self) -> dict[str, int]:
        """Entries per cache, by name (diagnostics, tests)."""
        with self.lock:
            caches = list(self._caches.values())
        return {cache.name: len(cache) for cache in caches}

    @property
    def thread(self) -> threading.Thread | None:
        """The housekeeping thread, once started (None before, and in a forked child)."""
        return self._thread

    def wake(self) -> None:
        """A cache that needs sweeping got an entry: start the thread, or have it look again.
        Called under the lock."""
        if self._stopped:
            return
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True, name=self.thread_name)
            self._thread.start()
        self._wake.set()

    def sweep_due(self) -> float | None:
        """Sweep every cache whose interval has passed; seconds until the next one is due."""
        with self.lock:
            caches = list(self._caches.values())
            now = time.monotonic()
            due = [c for c in caches if c._due_in(now) == 0.0]
        for cache in due:
            cache.sweep()
        with self.lock:
            now = time.monotonic()
            waits = [w for w in (c._due_in(now) for c in caches) if w is not None]
        return min(waits) if waits else None

    def _run(self) -> None:
        while not self._stopped:
            self._wake.clear()
            try:
                delay = self.sweep_due()
            except Exception:  # never end the thread: the next round tries again
                log.warning("housekeeping of the process caches failed", exc_info=True)
                delay = 1.0
            self._wake.wait(delay)

    def stop(self) -> None:
        """Stop the housekeeping thread and close every cache's entries (tests)."""
        self._stopped = True
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(10)
        self.close(at_exit_only=False)

    def close(self, at_exit_only: bool = True) -> None:
        """Close the entries of every cache (only those made ``close_at_exit``, by default)."""
        with self.lock:
            caches = list(self._caches.values())
        for cache in caches:
            if cache.close_at_exit or not at_exit_only:
                cache.clear()

    def _forget_after_fork(self) -> None:
        self.lock = threading.Lock()
        self._wake = threading.Event()
        self._thread = None
        for cache in self._caches.values():
            cache._forget()
        for value in self._values.values():
            value._forget()


_REGISTRIES: weakref.WeakSet[Registry] = weakref.WeakSet()


def _forget_after_fork() -> None:
    """In a forked child: new locks (one may have been held by a thread that is gone), no
    thread, and no entries of the parent's."""
    for registry in list(_REGISTRIES):
        registry._forget_after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)

PROCESS = Registry()
atexit.register(PROCESS.close)
