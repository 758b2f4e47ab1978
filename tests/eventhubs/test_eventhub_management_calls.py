"""ManagementCalls on plain Python clients: deadlines, one client per call, no leaks.

The SDK-backed behaviour (held $management replies, partition properties) is tested against
the emulator in tests/ehsource/test_ehsource_metadata.py; these check the contract fast.
"""

from __future__ import annotations

import threading
import time

import pytest

from pysparksources.errors import ServiceTimeoutError
from pysparksources.eventhubs._management import ManagementCalls


class Client:
    """Records who uses it; a call on it fails if another thread is already inside."""

    def __init__(self) -> None:
        self.closed = False
        self.inside = 0
        self.lock = threading.Lock()

    def call(self, value: int, delay: float = 0.0, gate: threading.Event | None = None) -> int:
        with self.lock:
            assert not self.closed, "a closed client was used"
            self.inside += 1
            assert self.inside == 1, "two calls shared one client"
        try:
            if gate is not None:
                gate.wait()
            time.sleep(delay)
            return value
        finally:
            with self.lock:
                self.inside -= 1


def _calls(timeout: float, parallel: int = 4) -> tuple[ManagementCalls[Client], list[Client]]:
    made: list[Client] = []

    def new() -> Client:
        made.append(Client())
        return made[-1]

    def close(client: Client) -> None:
        client.closed = True

    return ManagementCalls(new, close, timeout, parallel), made


def test_concurrent_calls_never_share_a_client_and_clients_are_reused() -> None:
    calls, made = _calls(timeout=30, parallel=8)
    for _ in range(20):
        results = calls.run([lambda c, i=i: c.call(i, 0.001) for i in range(32)])
        assert results == list(range(32))
    assert len(made) <= 8  # idle clients are handed out again, not rebuilt per call
    calls.close()
    assert all(c.closed for c in made)


def test_a_timed_out_call_closes_its_client_which_is_never_reused() -> None:
    calls, made = _calls(timeout=0.2)
    gate = threading.Event()
    with pytest.raises(ServiceTimeoutError):
        calls.run([lambda c: c.call(1, gate=gate)])
    stuck = made[0]
    assert calls.run([lambda c: c.call(2)]) == [2]  # at once, on another client
    assert made[1] is not stuck and not made[1].closed
    gate.set()  # the SDK call finally returns: its client is closed, not handed back
    deadline = time.monotonic() + 5
    while not stuck.closed:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    for _ in range(5):  # a closed client handed out again would fail its call
        assert calls.run([lambda c: c.call(3)]) == [3]
    calls.close()


def test_many_timeouts_leave_no_thread_behind_once_the_calls_return() -> None:
    threads_before = threading.active_count()
    calls, made = _calls(timeout=0.02, parallel=3)
    gate = threading.Event()
    for _ in range(30):
        with pytest.raises(ServiceTimeoutError):
            calls.run([lambda c, i=i: c.call(i, gate=gate) for i in range(5)])
    # Each run abandoned at most its 3 workers, never queued calls behind them.
    assert threading.active_count() - threads_before <= 30 * 3
    gate.set()
    deadline = time.monotonic() + 10
    while threading.active_count() > threads_before:
        assert time.monotonic() < deadline, "abandoned calls left threads running"
        time.sleep(0.02)
    assert all(c.closed for c in made)
    assert calls.run([lambda c: c.call(7)]) == [7]
    calls.close()


def test_a_failing_call_raises_its_error_and_its_client_is_replaced() -> None:
    calls, made = _calls(timeout=5)

    def fail(client: Client) -> int:
        raise ConnectionError("service said no")

    with pytest.raises(ConnectionError, match="service said no"):
        calls.run([fail])
    assert made[0].closed
    assert calls.run([lambda c: c.call(5)]) == [5]
    calls.close()
