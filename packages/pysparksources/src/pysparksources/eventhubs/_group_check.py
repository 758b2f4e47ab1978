"""Whether a consumer group exists, asked with the SDK's public receive.

No management call knows consumer groups; only a receiver's attach does, and the service
refuses a group the hub does not have with ``amqp:not-found``. A receiver built with the SDK's
default retries never says so: it re-attaches forever without calling ``on_error`` (see
``_refusals``). So a :class:`GroupCheck` receives one partition with a client that retries
nothing (``retry_total=0``), from a position where an event is known to be, one event at most:

- an event arrives (``on_event_batch``): the group exists;
- ``on_error`` gets an SDK error whose ``error`` is ``"not-found"``: refused; a second receiver,
  on a new client, must be refused too (``_refusals.CONFIRM``), then the group does not exist;
- any other error, or nothing before the deadline: the check cannot tell.

A refusal reaches ``on_error`` about a second after the attach (azure-eventhub 5.15 joins its
keep-alive thread, which sleeps in one-second steps, before reporting it): two refusals took
2.0 s against pysparksources-emulator. Nothing but an event proves that a group exists, so a
check at a partition that holds none can only end by a refusal or its deadline.

Clients are closed on a thread of their own: closing one takes the SDK up to a second.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from pysparksources.errors import OptionError
from pysparksources.eventhubs import NAME
from pysparksources.eventhubs._refusals import CONFIRM, refusal
from pysparksources.eventhubs.config import SourceConfig

__all__ = ["GroupCheck", "Verdict"]

log = logging.getLogger(__name__)

Verdict = Literal["exists", "missing", "unknown"]


class GroupCheck:
    """One check of ``config.consumer_group``, run on a thread from construction on.

    ``position``/``inclusive`` as for the SDK's ``starting_position`` (an int is a sequence
    number); ``limit_s`` bounds the whole check. ``on_done(check)`` runs on the check's thread
    once :attr:`verdict` is set.
    """

    def __init__(
        self,
        config: SourceConfig,
        partition_id: str,
        position: int | str | datetime,
        inclusive: bool,
        limit_s: float,
        on_done: Callable[[GroupCheck], None] | None = None,
    ) -> None:
        self.config = config
        self.partition_id = partition_id
        self.started = time.monotonic()
        self.deadline = self.started + limit_s
        self.verdict: Verdict | None = None
        self.error: OptionError | None = None  # the error naming the group, when missing
        self._position = position
        self._inclusive = inclusive
        self._on_done = on_done
        self._done = threading.Event()
        self._cancelled = threading.Event()
        self._lock = threading.Lock()
        self._wake: threading.Event | None = None
        threading.Thread(target=self._run, daemon=True, name=f"{NAME}-group-check").start()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the verdict, at most ``timeout`` seconds; whether it came."""
        return self._done.wait(timeout)

    def cancel(self) -> None:
        """Stop checking (the verdict becomes ``unknown`` unless it is already set)."""
        self._cancelled.set()
        with self._lock:
            if self._wake is not None:
                self._wake.set()

    def _run(self) -> None:
        verdict: Verdict = "unknown"
        group = self.config.consumer_group
        try:
            for _ in range(CONFIRM):
                outcome, error = self._receive_once()
                if outcome != "not-found":
                    verdict = "exists" if outcome == "event" else "unknown"
                    break
                named = None if error is None else self.config.connection.refused(error, group)
                if named is None:  # cannot be: refusal() said not-found
                    break
                self.error = named
            else:
                verdict = "missing"
        except Exception:  # the check is best effort: the query's own calls still run
            log.debug("%s: consumer group check failed", NAME, exc_info=True)
        if verdict != "missing":
            self.error = None
        self.verdict = verdict
        log.debug(
            "%s: consumer group %s of %s at partition %s: %s after %.3fs",
            NAME,
            self.config.consumer_group,
            self.config.connection.describe(),
            self.partition_id,
            verdict,
            time.monotonic() - self.started,
        )
        self._done.set()
        if self._on_done is not None:
            self._on_done(self)

    def _receive_once(self) -> tuple[str, BaseException | None]:
        """One receiver, on a client of its own: ``("event", None)``, ``("not-found", error)``,
        ``("error", error)`` or ``("nothing", None)`` (deadline or cancel)."""
        wake = threading.Event()
        got: list[tuple[str, BaseException | None]] = []

        def on_event_batch(_context: Any, events: list[Any]) -> None:
            if events and not got:
                got.append(("event", None))
                wake.set()

        def on_error(_context: Any, error: Exception) -> None:
            if not got:
                got.append(("not-found" if refusal(error) == "not-found" else "error", error))
                wake.set()

        with self._lock:
            if self._cancelled.is_set():
                return "nothing", None
            self._wake = wake
        config = self.config
        client = config.connection.consumer_client(
            config.consumer_group, partition_ids=(self.partition_id,), first_contact=True
        )

        def receive() -> None:
            try:
                client.receive_batch(
                    on_event_batch=on_event_batch,
                    on_error=on_error,
                    partition_id=self.partition_id,
                    starting_position=self._position,
                    starting_position_inclusive=self._inclusive,
                    max_batch_size=1,
                    prefetch=1,
                )
            except Exception as error:  # e.g. the client could not be set up
                on_error(None, error)

        threading.Thread(target=receive, daemon=True, name=f"{NAME}-group-check-receive").start()
        wake.wait(max(0.0, self.deadline - time.monotonic()))
        threading.Thread(
            target=_close_quietly, args=(client,), daemon=True, name=f"{NAME}-group-check-close"
        ).start()
        return got[0] if got else ("nothing", None)


def _close_quietly(client: Any) -> None:
    try:
        client.close()
    except Exception:  # closing is best effort
        log.debug("%s: closing a consumer group check's client failed", NAME, exc_info=True)
