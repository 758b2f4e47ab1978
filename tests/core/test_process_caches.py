"""The per-process registry of caches (``_core.process_caches``), in process: bounds and eviction
order, close outside the lock and exactly once, expiry, the one housekeeping thread, concurrent
use, and a forked child."""

from __future__ import annotations

import os
import random
import select
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from pysparksources._core.process_caches import PROCESS, ProcessCache, Registry


class Closed:
    """A close callback that records every value it closes and checks it runs outside the
    registry's lock (it could not take the lock otherwise)."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.values: list[Any] = []
        self.under_lock = 0
        self._lock = threading.Lock()

    def __call__(self, value: Any) -> None:
        # Under the lock, this thread would wait for itself; another thread lets go at once.
        if self.registry.lock.acquire(timeout=2):
            self.registry.lock.release()
        else:
            self.under_lock += 1
        with self._lock:
            self.values.append(value)

    def counts(self) -> Counter[Any]:
        return Counter(self.values)


@pytest.fixture
def registry() -> Iterator[Registry]:
    made = Registry(thread_name="test-housekeeping")
    yield made
    made.stop()


@pytest.fixture
def by_hand() -> Iterator[Registry]:
    """A registry without the thread: only the test sweeps (it drives the clock)."""
    made = Registry(housekeeping=False)
    yield made
    made.stop()


def _cache(registry: Registry, closed: Closed, **kwargs: Any) -> ProcessCache[Any, Any]:
    kwargs.setdefault("max_entries", 3)
    return registry.cache("test", close=closed, **kwargs)


def test_the_least_recently_used_entry_is_closed_first_beyond_the_bound(
    by_hand: Registry,
) -> None:
    closed = Closed(by_hand)
    cache = _cache(by_hand, closed)
    for key in "abc":
        cache.put(key, key.upper())
    assert cache.get("a") == "A"  # used: now the most recent
    cache.put("d", "D")
    cache.put("e", "E")
    assert closed.values == ["B", "C"]
    assert [cache.get(k) for k in "abcde"] == ["A", None, None, "D", "E"]
    cache.put("a", cache.get("a"))  # the same value again: not closed
    cache.put("a", "A2")  # replaced: the old one is closed
    assert closed.values == ["B", "C", "A"]
    assert cache.take("a") == "A2" and "a" not in cache  # taken: the caller's, not closed
    cache.discard("d")
    assert sorted(cache.clear()) == ["E"]
    assert closed.values == ["B", "C", "A", "D", "E"] and closed.under_lock == 0
    assert len(cache) == 0
    with pytest.raises(ValueError, match="exists already"):
        by_hand.cache("test", 1)
    with pytest.raises(ValueError, match="at least 1"):
        by_hand.cache("empty", 0)


def test_entries_expire_by_age_or_by_time_unused_and_are_closed(by_hand: Registry) -> None:
    now = [100.0]
    closed = Closed(by_hand)
    aged = by_hand.cache("aged", 10, max_age_s=5.0, close=closed, clock=lambda: now[0])
    idle = by_hand.cache("idle", 10, max_idle_s=5.0, close=closed, clock=lambda: now[0])
    aged.put("a", 1)
    aged.put("short", 2, max_age_s=1.0)  # its own age
    idle.put("i", 3)
    now[0] += 4.0
    assert aged.get("a") == 1 and idle.get("i") == 3  # a use: idle counts from now
    assert aged.get("short") is None
    now[0] += 1.0
    assert aged.get("a") is None  # 5 s since stored, used or not
    assert idle.get("i") == 3
    now[0] += 5.0
    assert idle.sweep() == [3]  # expired without a lookup
    assert closed.values == [2, 1, 3] and closed.under_lock == 0


def test_a_sweep_closes_what_reap_names_outside_the_lock_and_leaves_what_was_taken(
    by_hand: Registry,
) -> None:
    closed = Closed(by_hand)
    checked: list[str] = []
    cache: ProcessCache[str, str]

    def reap(value: str) -> bool:
        checked.append(value)
        if value == "taken":
            assert cache.take("t") == "taken"  # another task took it meanwhile: not ours
        if value == "raises":
            raise RuntimeError("a bug in the check")
        return value in ("bad", "taken")

    cache = by_hand.cache("reaped", 10, close=closed, reap=reap)
    for key, value in (("g", "good"), ("b", "bad"), ("t", "taken"), ("r", "raises")):
        cache.put(key, value)
    assert cache.sweep() == ["bad"]
    assert sorted(checked) == ["bad", "good", "raises", "taken"]
    assert closed.values == ["bad"] and closed.under_lock == 0
    assert cache.get("g") == "good" and cache.get("r") == "raises" and cache.get("t") is None


def test_one_housekeeping_thread_starts_with_the_first_entry_that_needs_it(
    registry: Registry,
) -> None:
    closed = Closed(registry)
    plain = registry.cache("plain", 10, close=closed)
    expiring = registry.cache("expiring", 10, max_age_s=0.05, close=closed)
    reaped = registry.cache(
        "reaped", 10, close=closed, reap=lambda v: v == "bad", sweep_every_s=0.02
    )
    plain.put("p", "plain")
    assert registry.thread is None  # nothing to sweep: no thread (nor at import)
    assert registry.sweep_due() is None
    expiring.put("e", "expiring")
    reaped.put("g", "good")
    reaped.put("b", "bad")
    thread = registry.thread
    assert thread is not None and thread.name == "test-housekeeping"
    deadline = time.monotonic() + 10
    while len(closed.values) < 2:
        assert time.monotonic() < deadline, closed.values
        time.sleep(0.01)
    assert sorted(closed.values) == ["bad", "expiring"]  # nobody looked them up
    assert registry.thread is thread
    named = [t for t in threading.enumerate() if t.name == "test-housekeeping"]
    assert named == [thread]
    assert reaped.get("g") == "good" and plain.get("p") == "plain"
    assert registry.sizes() == {"plain": 1, "expiring": 0, "reaped": 1}


def test_the_product_starts_no_housekeeping_thread_at_import() -> None:
    # Spark's daemon forks its workers and must hold no thread of ours when it does.
    import subprocess
    import sys

    code = (
        "import threading\n"
        "import pysparksources.eventhubs._receivers, pysparksources.eventhubs._send\n"
        "import pysparksources.eventhubs.avro.decode, pysparksources.eventhubs.avro.encode\n"
        "print(sorted(t.name for t in threading.enumerate()))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['MainThread']"


def test_concurrent_use_closes_every_value_that_leaves_exactly_once(registry: Registry) -> None:
    closed = Closed(registry)
    cache = registry.cache("busy", 8, close=closed, reap=lambda v: v % 7 == 0, sweep_every_s=0.001)
    made: list[int] = []
    taken: list[int] = []
    counter = iter(range(10**9))
    counter_lock = threading.Lock()

    def new_value() -> int:
        with counter_lock:
            value = next(counter)
            made.append(value)
        return value

    def work(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(3000):
            key = rng.randrange(20)
            action = rng.random()
            if action < 0.4:
                cache.put(key, new_value())
            elif action < 0.7:
                cache.get_or_make(key, new_value)
            elif action < 0.8:
                value = cache.take(key)
                if value is not None:
                    with counter_lock:
                        taken.append(value)
            elif action < 0.85:
                cache.discard(key)
            elif action < 0.87:
                cache.clear()
            else:
                cache.get(key)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    registry.stop()  # the sweeping thread too; then closes what is left
    counts = closed.counts()
    assert max(counts.values()) == 1, [v for v, n in counts.items() if n > 1][:10]
    # Every value made is either taken by a caller or closed, never both, never neither.
    assert sorted([*counts, *taken]) == sorted(made)
    assert len(cache) == 0


def test_two_threads_making_one_value_at_once_share_the_first_and_close_the_other(
    registry: Registry,
) -> None:
    closed = Closed(registry)
    cache = _cache(registry, closed)
    both = threading.Barrier(2)
    got: list[str] = []

    def make(name: str) -> str:
        both.wait(10)  # both are making, outside the lock
        return name

    threads = [
        threading.Thread(target=lambda n=n: got.append(cache.get_or_make("k", lambda: make(n))))
        for n in ("x", "y")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert got[0] == got[1] == cache.get("k")
    assert closed.values == [({"x", "y"} - {got[0]}).pop()]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_starts_empty_and_never_touches_its_parents_entries(
    registry: Registry,
) -> None:
    closed = Closed(registry)
    cache = registry.cache("forked", 10, close=closed, reap=lambda v: False, sweep_every_s=0.01)
    value = registry.value("one-per-process", object)
    cache.put("k", "parent's")
    parents = value.get()
    assert registry.thread is not None
    # A thread of the parent holds the lock while the fork happens: gone in the child, the
    # lock with it, or the child's first lookup would hang forever.
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with registry.lock:
            holding.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    holding.wait(10)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, then leave without running any cleanup of pytest's
        try:
            report = [
                cache.get("k"),  # the parent's entry is not the child's
                len(cache),
                registry.thread is None,  # the parent's thread did not survive the fork
                value.get() is not parents,
            ]
            cache.put("c", "child's")
            report += [
                registry.thread is not None and registry.thread.is_alive(),
                cache.get("c"),
                closed.values,  # nothing of the parent's was closed here
            ]
            os.write(write, repr(report).encode())
        finally:
            os._exit(0)
    os.close(write)
    release.set()
    holder.join(10)
    # A child stuck on the lock would never answer: wait 30 s at most, then end it.
    answered = select.select([read], [], [], 30)[0]
    if not answered:
        os.kill(pid, signal.SIGKILL)
    with os.fdopen(read) as pipe:
        report = pipe.read() if answered else "no answer: the child hung"
    os.waitpid(pid, 0)
    assert report == repr([None, 0, True, True, True, "child's", []])
    assert cache.get("k") == "parent's" and value.get() is parents
    assert closed.values == []


def test_the_eventhubs_caches_are_named_in_the_process_registry() -> None:
    import pysparksources.eventhubs._receivers
    import pysparksources.eventhubs._send
    import pysparksources.eventhubs.avro.decode
    import pysparksources.eventhubs.avro.encode  # noqa: F401

    assert set(PROCESS.sizes()) >= {
        "eventhubs.receivers",
        "eventhubs.producers",
        "eventhubs.reached",
        "eventhubs.settled",
        "eventhubs.credentials",
        "eventhubs.registry-credentials",
        "eventhubs.registry-clients",
        "eventhubs.registry-pipelines",
        "eventhubs.registry-ids",
        "eventhubs.registry-schemas",
        "eventhubs.registry-missing",
        "eventhubs.avro-decoders",
        "eventhubs.avro-writer-schemas",
        "eventhubs.avro-encoders",
    }


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_finds_none_of_the_products_entries() -> None:
    from pysparksources.eventhubs import _send

    _send._REACHED.put("a connection of the parent's", True)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(write, repr(sum(PROCESS.sizes().values())).encode())
        finally:
            os._exit(0)
    os.close(write)
    answered = select.select([read], [], [], 30)[0]
    if not answered:
        os.kill(pid, signal.SIGKILL)
    with os.fdopen(read) as pipe:
        report = pipe.read() if answered else "no answer: the child hung"
    os.waitpid(pid, 0)
    try:
        assert report == "0"
        assert "a connection of the parent's" in _send._REACHED
    finally:
        _send._REACHED.discard("a connection of the parent's")
