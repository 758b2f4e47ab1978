"""Management calls (partition ids, partition properties) with a deadline, never sharing a client.

The SDK's README says its clients are not thread-safe and should not be shared across threads,
and its management calls have no deadline: without a reply they wait forever. So every call
here borrows a client that no other call holds, runs on a thread of its own, and hands the
client back only if the call answered within the deadline. A call that did not is abandoned:
its client is closed by its thread once the SDK returns and is never used again, the caller
gets :class:`~pysparksources.errors.ServiceTimeoutError` at once, and the next call takes or
builds a fresh client.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar, cast

from pysparksources.errors import ServiceTimeoutError
from pysparksources.eventhubs import NAME

__all__ = ["ManagementCalls"]

log = logging.getLogger(__name__)
C = TypeVar("C")
T = TypeVar("T")


class _Run(Generic[C, T]):
    """One ``run``: calls handed out to its worker threads in order, results collected."""

    def __init__(self, calls: Sequence[Callable[[C], T]]) -> None:
        self.calls = calls
        self.results: list[T | None] = [None] * len(calls)
        self.error: BaseException | None = None
        self.abandoned = False
        self.done = threading.Event()
        self._next = 0
        self._left = len(calls)
        self._lock = threading.Lock()

    def take(self) -> int | None:
        with self._lock:
            if self.abandoned or self.error is not None or self._next >= len(self.calls):
                return None
            self._next += 1
            return self._next - 1

    def finish(self, index: int, value: T) -> None:
        with self._lock:
            self.results[index] = value
            self._left -= 1
            if self._left == 0:
                self.done.set()

    def fail(self, error: BaseException) -> None:
        with self._lock:
            if self.error is None:
                self.error = error
            self.done.set()

    def abandon(self) -> None:
        with self._lock:
            self.abandoned = True


class ManagementCalls(Generic[C]):
    """Runs calls on clients made by ``new_client``; at most ``parallel`` threads per run."""

    def __init__(
        self,
        new_client: Callable[[], C],
        close_client: Callable[[C], None],
        timeout_s: float,
        parallel: int = 16,
    ) -> None:
        self._new_client = new_client
        self._close_client = close_client
        self._timeout_s = timeout_s
        self._parallel = parallel
        self._idle: list[C] = []
        self._lock = threading.Lock()
        self._closed = False
        self.clients_made = 0

    def run(self, calls: Sequence[Callable[[C], T]]) -> list[T]:
        """Every call's result, in order; raises the first call's error, or
        :class:`ServiceTimeoutError` when they are not all done within the deadline (they are
        abandoned, not waited for)."""
        if not calls:
            return []
        work: _Run[C, T] = _Run(calls)
        for n in range(min(self._parallel, len(calls))):
            threading.Thread(
                target=self._work, args=(work,), daemon=True, name=f"{NAME}-management-{n}"
            ).start()
        if not work.done.wait(self._timeout_s):
            work.abandon()
            raise ServiceTimeoutError(NAME, f"not answered within {self._timeout_s:g}s")
        if work.error is not None:
            raise work.error
        return cast("list[T]", work.results)  # every slot was filled

    def _work(self, work: _Run[C, T]) -> None:
        try:
            client = self._borrow()
        except BaseException as error:
            work.fail(error)
            return
        reusable = True
        try:
            while (index := work.take()) is not None:
                try:
                    value = work.calls[index](client)
                except BaseException as error:
                    reusable = False  # the SDK may have left it half closed
                    work.fail(error)
                    return
                work.finish(index, value)
        finally:
            # A call that outlived the deadline may have left the client in any state.
            self._give_back(client, reusable and not work.abandoned)

    def _borrow(self) -> C:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        client = self._new_client()
        with self._lock:
            self.clients_made += 1
        return client

    def _give_back(self, client: C, reusable: bool) -> None:
        with self._lock:
            if reusable and not self._closed:
                self._idle.append(client)
                return
        self._close(client)

    def _close(self, client: C) -> None:
        try:
            self._close_client(client)
        except Exception:  # closing is best effort
            log.debug("closing a management client failed", exc_info=True)

    def discard_idle(self) -> None:
        """Close the idle clients: the next calls build new ones (``new_client`` may build
        them differently by then)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for client in idle:
            self._close(client)

    def close(self) -> None:
        """Close the idle clients; clients of calls still running close when those return."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for client in idle:
            self._close(client)
