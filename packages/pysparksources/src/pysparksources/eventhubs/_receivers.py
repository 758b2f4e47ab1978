"""Executor-side positioned receivers, cached across tasks of one Python worker.

Python workers are reused across micro-batches, so a process cache (``eventhubs.receivers``
in :mod:`pysparksources._core.process_caches`) keeps, per (connection, consumer group,
partition and every setting a receiver is built with), a receiver standing where the last task
stopped. A background thread runs the SDK's ``receive_batch`` into a queue bounded in bytes
across all receivers of the process (backpressure: the SDK callback blocks while there is no
room); a task drains it up to its range end and parks the receiver. A task that starts
elsewhere recreates it. The process's housekeeping thread closes receivers parked longer than
receiverIdleTimeout, and a parked receiver that burns CPU without receiving (see
``PositionedReceiver.spinning``). Each receiver owns its SDK client: closing a client is the
SDK's only way to stop one ``receive_batch`` call.

A receiver's client retries nothing (``_outages.RECEIVER_CLIENT``): the SDK's default retries
re-attach a refused link forever without calling ``on_error``, so a failed link ends its
receiver with the SDK's error and the task decides (``_outages.OutageBudget``: a new link
where this one stopped, within receiverTimeout). A parked receiver whose link failed is
closed by the housekeeping thread. A link that stays attached but brings nothing for
:data:`_GROUP_CHECK_AFTER_S` while it is waited for, though the events it waits for exist,
checks its consumer group once (``_group_check.GroupCheck``, from where it stands) and fails
with the error naming the group when the check finds it missing.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from pysparksources._core.process_caches import PROCESS
from pysparksources.errors import ServiceTimeoutError
from pysparksources.eventhubs import NAME
from pysparksources.eventhubs._group_check import GroupCheck
from pysparksources.eventhubs._outages import RECEIVER_CLIENT
from pysparksources.eventhubs._parked_links import (
    Slot,
    ask_to_close,
    is_asked_to_close,
    parked,
    unparked,
)
from pysparksources.eventhubs._refusals import condition, refusal
from pysparksources.eventhubs.config import SourceConfig

__all__ = [
    "PositionedReceiver",
    "acquire",
    "close_all",
    "effective_prefetch",
    "free_links_after",
    "reap_once",
    "release",
    "skip_limit",
]

log = logging.getLogger(__name__)
# The SDK hands a receiver's events over in runs of up to prefetchCount frames, and a run ends
# early only when a socket read times out: 0.2 s by default over AMQP, so the last events a
# task waits for arrived up to 0.2 s late, every batch (a new receiver reading 90 waiting
# events: 247 ms median, 49 ms with 20 ms; measured against the emulator). A parked receiver
# then wakes 50 times a second, far below the spin check's share of a core. WebSockets keep
# the SDK's 1 s: their reads are not framed the same way.
_SOCKET_TIMEOUT_S = 0.02
# How far a receiver reads ahead, in events: 4 x receiveBatchSize (and the byte budget). Counted
# in events, not in the SDK's batches: at a steady trickle the SDK hands over batches of a few
# events, and a bound of 4 batches parked a receiver ~200 events ahead at 1,000 events/s, so
# the next task received the rest on its own clock (~100 ms for 1,000 events, not ~10 ms).
_QUEUE_BATCHES = 4
# A parked receiver reads ahead one receiveBatchSize only. Spark hands a partition's next batch
# to any idle worker, so with two executors half the parked receivers are never taken again
# (the partition moved on elsewhere): what they read ahead is decoded for nothing, and with
# 4 batches that was a third of a backlog read's CPU (32 partitions on two one-core workers,
# bench eventhubs-scale). One batch still holds a trickle's next trigger (500 events: half a
# second at 1,000 events/s a partition), and a task that takes the receiver lifts the bound.
_PARKED_QUEUE_BATCHES = 1
# Python objects of one received event besides its body (EventData, annotations): ~1.4 KB
# measured with tracemalloc on azure-eventhub 5.15.
_EVENT_OVERHEAD_BYTES = 1536
# The largest event Event Hubs (and the emulator) accepts, 1 MiB, as the budget counts it.
_MAX_EVENT_BYTES = 1024 * 1024 + _EVENT_OVERHEAD_BYTES
# A parked receiver's thread is idle (0.2 % of a core measured) or blocked on a full queue.
# One whose service vanished retries the connection in the SDK's loop with no pause: a full
# core, measured on azure-eventhub 5.15, so every second it spins is a second of a core lost.
# Checking 10 times a second closes it within about 0.3 s; a thread above 5 % of the time
# between checks, two checks running, counts.
_REAP_INTERVAL_S = 0.1
_SPIN_CPU_SHARE = 0.05
_SPIN_STRIKES = 2
# Receivers one Python worker parks at most, the least recently parked closed first: each
# parked one's thread wakes 50 times a second (0.2 % of a core), so 256 stay under half a core.
_MAX_PARKED = 256
# How long a receiver may bring nothing, while a task (or the driver) waits for an event that
# exists, before it checks its consumer group: a new receiver's first events come within a
# fraction of a second, so this only fires when something is wrong.
_GROUP_CHECK_AFTER_S = 2.0


def effective_prefetch(config: SourceConfig) -> int:
    """prefetchCount, capped so that twice that many of the largest events fit
    receiverBufferBytes (31 with the default 64 MiB), and at least 1.

    The SDK grants the service ``prefetch`` events of credit and reads up to that many from the
    socket before it hands them to :meth:`PositionedReceiver._on_batch`, in events, whatever
    their size: what it holds then sits outside the byte budget until the callback takes it.
    Per receiver that is at most one prefetch, two when receiveBatchSize is below it (events
    left in the SDK's own buffer), so two prefetches of 1 MiB events fit the budget.
    """
    return max(1, min(config.prefetch, config.buffer_bytes // (2 * _MAX_EVENT_BYTES)))


def _event_bytes(event: Any) -> int:
    """Memory one received event holds, roughly: its body plus the SDK's objects around it."""
    body = event.raw_amqp_message.body
    if isinstance(body, (bytes, str)):
        return len(body) + _EVENT_OVERHEAD_BYTES
    try:
        return sum(map(len, body)) + _EVENT_OVERHEAD_BYTES
    except TypeError:  # an AMQP value body: small, or at least not measurable cheaply
        return _EVENT_OVERHEAD_BYTES


class _ByteBudget:
    """Bytes of received events waiting in this process's receivers, all partitions together.

    A receiver may add events while the total stays within its limit (receiverBufferBytes;
    half of it while parked, so parked receivers never take the room of the one a task is
    reading), and always when it holds none: an event larger than the limit still flows,
    one at a time.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._held: dict[PositionedReceiver, int] = {}
        self.used = 0

    def room(self, owner: PositionedReceiver) -> int:
        with self._cond:
            return owner.buffer_limit() - self.used

    def reserve(self, owner: PositionedReceiver, size: int, stop: threading.Event) -> bool:
        """Wait for room for ``size`` bytes and take it; False once ``stop`` is set."""
        with self._cond:
            while not stop.is_set():
                held = self._held.get(owner, 0)
                if held == 0 or self.used + size <= owner.buffer_limit():
                    self._held[owner] = held + size
                    self.used += size
                    return True
                self._cond.wait(0.2)
            return False

    def release(self, owner: PositionedReceiver, size: int) -> None:
        with self._cond:
            held = self._held.get(owner)
            if held is None:  # forgotten: the receiver was closed
                return
            if held > size:
                self._held[owner] = held - size
            else:
                del self._held[owner]
            self.used -= min(held, size)
            self._cond.notify_all()

    def forget(self, owner: PositionedReceiver) -> None:
        """Give back everything a closed receiver held (its queue is dropped with it)."""
        with self._cond:
            self.used -= self._held.pop(owner, 0)
            self._cond.notify_all()

    def wake(self) -> None:
        """A receiver's limit grew (it was taken for a task): waiting receivers look again."""
        with self._cond:
            self._cond.notify_all()


# One budget per process; a forked child makes its own (the parent's may be held by a thread
# the child does not have).
_BUDGET = PROCESS.value("eventhubs.receiver-budget", _ByteBudget)


class PositionedReceiver:
    """One partition's ``receive_batch`` on a thread, feeding a bounded queue of event lists."""

    def __init__(
        self,
        config: SourceConfig,
        partition_id: str,
        position: int | str | datetime,
        inclusive: bool = True,
        sdk_retries: bool = False,
    ) -> None:
        self.config = config
        self.partition_id = partition_id
        # Registered while parked, so the machine's workers together stay within Event Hubs'
        # five readers per partition (_parked_links).
        self.slot = Slot(config.connection.describe(), config.consumer_group, partition_id)
        self.token = uuid.uuid4().hex[:12]
        self.next_seq: int | None = (
            (position if inclusive else position + 1) if isinstance(position, int) else None
        )
        self._position, self._inclusive = position, inclusive
        self._group_check: GroupCheck | None = None
        self._checked_at = -1  # the deliveries count when the last group check started
        self.group_missing = False  # a group check found the consumer group missing
        self._active = True  # read by a task (or the driver) now, not parked
        self._pending: list[Any] = []
        self._queue: queue.Queue[tuple[list[Any], int] | BaseException] = queue.Queue()
        self._ahead = threading.Condition()  # guards _queued; signalled as tasks take events
        self._queued = 0  # events in the queue
        self._ahead_limit = _QUEUE_BATCHES * config.receive_batch_size
        self._parked_ahead_limit = _PARKED_QUEUE_BATCHES * config.receive_batch_size
        self._stop = threading.Event()
        self._failed = False
        self._deliveries = 0
        self._spin_marks: tuple[float, float, int] | None = None  # CPU, clock, deliveries
        self._spin_strikes = 0
        # A read task retries failed links itself (_outages); a one-off lookup on the driver
        # (``sdk_retries``) keeps the SDK's retries, which ride out a refused attach such as
        # the service's limit of five receivers per partition and consumer group.
        client_kwargs = {} if sdk_retries else dict(RECEIVER_CLIENT)
        if not config.connection.websockets:
            client_kwargs["socket_timeout"] = _SOCKET_TIMEOUT_S
        self._client = config.connection.consumer_client(
            config.consumer_group, partition_ids=(partition_id,), **client_kwargs
        )
        kwargs: dict[str, Any] = {
            "on_event_batch": self._on_batch,
            "on_error": self._on_error,
            "partition_id": partition_id,
            "starting_position": position,
            "starting_position_inclusive": inclusive,
            "max_batch_size": config.receive_batch_size,
            "max_wait_time": None,
            "prefetch": effective_prefetch(config),
        }
        if config.exclusive:
            kwargs["owner_level"] = 0
        self._thread = threading.Thread(
            target=self._run, kwargs=kwargs, daemon=True, name=f"eh-receiver-{partition_id}"
        )
        self._thread.start()

    def _run(self, **kwargs: Any) -> None:
        try:
            self._client.receive_batch(**kwargs)
        except BaseException as e:  # surfaced to the task that drains the queue
            self._failed = True
            self._put(self._named(e))

    def _named(self, error: BaseException) -> BaseException:
        """amqp:not-found (the consumer group does not exist) as the error naming the group;
        anything else as it is (a lost connection is the task's to retry)."""
        if refusal(error) != "not-found":
            return error
        refused = self.config.connection.refused(error, self.config.consumer_group)
        return error if refused is None else refused.bare()

    def _put(self, item: tuple[list[Any], int] | BaseException) -> None:
        """Queue events once fewer than the read-ahead limit wait (always when none do);
        an error at once."""
        if isinstance(item, BaseException):
            self._queue.put(item)
            return
        count = len(item[0])
        with self._ahead:
            while self._queued and self._queued + count > self._read_ahead_limit():
                if self._stop.is_set():
                    return
                self._ahead.wait(0.2)
            self._queued += count
        self._queue.put(item)

    def _read_ahead_limit(self) -> int:
        return self._ahead_limit if self._active else self._parked_ahead_limit

    def _taken(self, count: int) -> None:
        with self._ahead:
            self._queued -= count
            self._ahead.notify_all()

    def _on_batch(self, _context: Any, events: list[Any]) -> None:
        """Queue the SDK's batch in chunks that fit the process's byte budget (blocking the
        SDK, which then stops reading from the socket, until a task makes room)."""
        if not events:
            return
        self._deliveries += 1
        sizes = [_event_bytes(event) for event in events]
        start = 0
        while start < len(events):
            room = _BUDGET.get().room(self)
            end, size = start + 1, sizes[start]
            while end < len(events) and size + sizes[end] <= room:
                size += sizes[end]
                end += 1
            if not _BUDGET.get().reserve(self, size, self._stop):
                return  # closed
            self._put((events[start:end], size))
            start = end

    def buffer_limit(self) -> int:
        """Bytes all receivers of the process may hold while this one adds events."""
        limit = self.config.buffer_bytes
        return limit if self._active else limit // 2

    def waiting(self) -> tuple[int, int]:
        """Events received but not yet taken by a task, and the bytes counted for them."""
        with self._queue.mutex:
            items = [item for item in self._queue.queue if not isinstance(item, BaseException)]
        return sum(len(events) for events, _ in items), sum(size for _, size in items)

    def _on_error(self, _context: Any, error: BaseException) -> None:
        self._failed = True  # a parked receiver that failed is not reused
        self._put(self._named(error))

    @property
    def failed(self) -> bool:
        """The link failed (the SDK's error waits in the queue), or the group is missing."""
        return self._failed

    @property
    def closed(self) -> bool:
        """:meth:`close` was called (by a task, or by the housekeeping thread)."""
        return self._stop.is_set()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive() and not self._stop.is_set() and not self._failed

    def next_events(self, timeout: float) -> list[Any]:
        """The next received events (leftovers first); TimeoutError when none arrive.

        Past :data:`_GROUP_CHECK_AFTER_S` without any, the consumer group is checked (once per
        silence): a missing group ends the wait with the error naming it.
        """
        if self._pending:
            events, self._pending = self._pending, []
            return events
        deadline = time.monotonic() + timeout
        check_at = time.monotonic() + _GROUP_CHECK_AFTER_S
        while True:
            now = time.monotonic()
            checking = self._checked_at != self._deliveries and check_at < deadline
            try:
                item = self._queue.get(timeout=max(0.0, (check_at if checking else deadline) - now))
                break
            except queue.Empty:
                if not checking:
                    raise TimeoutError from None
                self._check_group(deadline)
        if isinstance(item, BaseException):
            raise item
        events, size = item
        _BUDGET.get().release(self, size)
        self._taken(len(events))
        return events

    def take(
        self,
        until: int,
        on_gap: Callable[[int, int], None],
        deadline: Callable[[], float] | None = None,
    ) -> Iterator[list[Any]]:
        """Yield event lists up to sequence number ``until`` (exclusive); keep the rest.

        ``on_gap(expected, got)`` runs when the service skipped expired events; it raises to
        fail the task or returns to continue from ``got``. Each wait for events lasts
        receiverTimeout, or with ``deadline`` until the ``time.monotonic()`` it answers at that
        moment (a read task's ``OutageBudget``), and a bare ``TimeoutError`` ends it.
        """
        assert self.next_seq is not None
        while self.next_seq < until:
            try:
                if deadline is None:
                    events = self.next_events(self.config.receiver_timeout_s)
                else:
                    events = self.next_events(max(0.0, deadline() - time.monotonic()))
            except TimeoutError:
                if deadline is not None:
                    raise
                raise ServiceTimeoutError(
                    NAME,
                    f"no event from {self.config.connection.describe()} partition "
                    f"{self.partition_id} within receiverTimeout "
                    f"({self.config.receiver_timeout_s:g}s) while reading sequence numbers "
                    f"{self.next_seq}..{until - 1}{self.group_note()}",
                ) from None
            inside = self._within(events, until, on_gap)
            if inside:
                yield inside

    def _within(
        self, events: list[Any], until: int, on_gap: Callable[[int, int], None]
    ) -> list[Any]:
        """The events of one delivery below ``until`` that this receiver has not passed yet;
        those at or past ``until`` are kept for the next task, ``next_seq`` moves on.

        A delivery holds consecutive events of one partition in sequence order, so its ends
        decide: when both lie in [next_seq, until) the whole list is taken without looking at
        each event (a sequence number is an SDK property read, about 1 µs, and a backlog task
        spends most of its time on per-event work).
        """
        assert self.next_seq is not None
        first, last = events[0].sequence_number, events[-1].sequence_number
        if first == self.next_seq and last < until:
            self.next_seq = last + 1
            return events
        # A reconnecting SDK may redeliver: drop what this receiver already passed.
        events = [e for e in events if e.sequence_number >= self.next_seq]
        if not events:
            return []
        first = events[0].sequence_number
        if first > self.next_seq:
            on_gap(self.next_seq, min(first, until))
        inside = [e for e in events if e.sequence_number < until]
        self._pending = [e for e in events if e.sequence_number >= until]
        self.next_seq = inside[-1].sequence_number + 1 if inside else until
        if self._pending:
            self.next_seq = until
        return inside

    def first_event(self, timeout: float) -> Any | None:
        """The first event at the position, or None if none arrives in ``timeout``."""
        try:
            return self.next_events(timeout)[0]
        except TimeoutError:
            return None

    def park(self) -> None:
        self._active = False
        self._spin_marks, self._spin_strikes = None, 0

    def reuse(self, config: SourceConfig) -> None:
        """Taken from the cache for a task: that query's timeouts and budget apply now."""
        self.config = config
        self._active = True
        with self._ahead:  # the SDK's thread may wait for the parked bound: lifted now
            self._ahead.notify_all()
        _BUDGET.get().wake()

    def spinning(self) -> bool:
        """Whether this parked receiver has burnt CPU without receiving for a few checks.

        When Event Hubs becomes unreachable (an outage, a stopped emulator), the SDK's receive
        loop retries the connection without pausing and reports nothing to ``on_error``; left
        parked, the receiver would use a core until ``receiverIdleTimeout``. Called once per
        reaper round; platforms without per-thread CPU clocks never report spinning.
        """
        cpu, now = _thread_cpu_seconds(self._thread), time.monotonic()
        if cpu is None:
            return False
        marks = self._spin_marks
        busy = (
            marks is not None
            and cpu - marks[0] > _SPIN_CPU_SHARE * (now - marks[1])
            and self._deliveries == marks[2]
        )
        self._spin_marks = (cpu, now, self._deliveries)
        self._spin_strikes = self._spin_strikes + 1 if busy else 0
        return self._spin_strikes >= _SPIN_STRIKES

    def _check_group(self, deadline: float) -> None:
        """Start a check of the consumer group from where this receiver stands, within
        ``deadline``; a missing group is queued as this receiver's error."""
        self._checked_at = self._deliveries
        position = self._position if self.next_seq is None else self.next_seq
        inclusive = self._inclusive or self.next_seq is not None
        limit = deadline - time.monotonic()
        self._group_check = GroupCheck(
            self.config, self.partition_id, position, inclusive, limit, self._group_checked
        )

    def group_note(self) -> str:
        """What a receiverTimeout error adds when the consumer group check could not tell."""
        check = self._group_check
        if check is None or check.verdict == "exists":
            return ""
        return (
            f"; checking whether consumer group '{self.config.consumer_group}' still exists "
            "could not tell either (a group deleted under a running query looks the same)"
        )

    def _group_checked(self, check: GroupCheck) -> None:
        if check.verdict == "missing" and check.error is not None and not self._stop.is_set():
            self._failed = self.group_missing = True
            self._put(check.error.bare())

    def close(self) -> None:
        unparked(self.slot, self.token)
        self._stop.set()
        if self._group_check is not None:
            self._group_check.cancel()
        _BUDGET.get().forget(self)
        try:
            self._client.close()
        except Exception:  # closing is best effort; the thread is a daemon
            log.debug("closing receiver for partition %s failed", self.partition_id)


def _thread_cpu_seconds(thread: threading.Thread) -> float | None:
    clock_id_of = getattr(time, "pthread_getcpuclockid", None)
    if clock_id_of is None or thread.ident is None or not thread.is_alive():
        return None
    try:
        return time.clock_gettime(clock_id_of(thread.ident))
    except (OSError, OverflowError):  # the thread ended between the check and the call
        return None


def _key(config: SourceConfig, partition_id: str) -> tuple[object, ...]:
    """Everything a receiver is built with: a task whose settings differ gets another one."""
    return (
        config.connection.pool_key(),
        config.consumer_group,
        partition_id,
        config.exclusive,
        effective_prefetch(config),
        config.receive_batch_size,
    )


def _needs_closing(receiver: PositionedReceiver) -> bool:
    """Whether a parked receiver is spinning, failed or asked to close by another worker
    (``_parked_links``); the housekeeping thread asks 10 times a second.

    A failed one's SDK loop goes on without a partition to receive, in a tight loop
    (azure-eventhub 5.15 re-claims it only at its next load-balancing round).
    """
    if receiver.spinning():  # first: it counts strikes, so it runs every round
        log.warning(
            "%s: closed the parked receiver of partition %s of %s: it used CPU "
            "without receiving (the connection to Event Hubs is lost and the SDK retries "
            "in a tight loop); the next batch opens a new one",
            NAME,
            receiver.partition_id,
            receiver.config.connection.describe(),
        )
        return True
    return receiver.failed or is_asked_to_close(receiver.slot, receiver.token)


# Parked receivers, closed when they leave: taken by no task for receiverIdleTimeout (each
# entry's age), pushed out by a newer one, or found spinning, failed or asked to close.
_PARKED = PROCESS.cache(
    "eventhubs.receivers",
    _MAX_PARKED,
    close=PositionedReceiver.close,
    reap=_needs_closing,
    sweep_every_s=_REAP_INTERVAL_S,
)


def reap_once() -> list[PositionedReceiver]:
    """Close parked receivers idle past receiverIdleTimeout, spinning, failed or asked to
    close, now (the housekeeping thread does it 10 times a second); return them."""
    closed: list[PositionedReceiver] = _PARKED.sweep()
    return closed


def skip_limit(config: SourceConfig) -> int:
    """How far behind a task's start a cached receiver may stand and still be reused.

    A parked receiver keeps reading ahead: up to ``_QUEUE_BATCHES`` batches in its queue plus
    the SDK's prefetch (:func:`effective_prefetch`), so events that far ahead are (or were
    about to be) in this process already and dropping them is nearly free, while a new link
    costs a connection, a token and an attach (0.1-0.5 s on the emulator, more against Azure).
    Spark hands a partition's batches to whichever Python worker is idle, and with a Python
    sink each task holds two workers, so a partition's receiver is often a few batches behind:
    with the SDK's prefetch alone as the limit, most tasks of a pyeventhub -> pyfile stream at
    1,000 events/s missed.
    """
    return effective_prefetch(config) + _QUEUE_BATCHES * config.receive_batch_size


def acquire(config: SourceConfig, partition_id: str, start: int) -> tuple[PositionedReceiver, str]:
    """A receiver whose next event is ``start`` and how it was found: hit, skip or miss.

    ``hit``: the cached receiver stands exactly there. ``skip``: it stands behind by no more
    than it holds while parked (:func:`skip_limit`), as happens when Spark hands consecutive
    batches of a partition to other Python workers in turn; it drops those events, cheaper
    than a new link. ``miss``: a new receiver.
    """
    cached: PositionedReceiver | None = _PARKED.take(_key(config, partition_id))
    if cached is not None:
        unparked(cached.slot, cached.token)  # in a task now, whatever comes of it
    if cached is not None and cached.alive and cached.next_seq is not None:
        cached.reuse(config)
        behind = start - cached.next_seq
        if behind == 0:
            return cached, "hit"
        if 0 < behind <= skip_limit(config):
            try:
                for _ in cached.take(start, lambda _expected, _got: None):
                    pass  # another worker read these; a gap here loses nothing of ours
            except Exception:
                log.debug("skipping forward on a cached receiver failed; recreating")
            else:
                return cached, "skip"
    if cached is not None:
        cached.close()
    receiver = PositionedReceiver(config, partition_id, start)
    # A new link: other workers on this machine park at most maxParkedReceivers - 1 beside
    # the one this task will park.
    ask_to_close(receiver.slot, keep=config.max_parked - 1)
    return receiver, "miss"


def release(receiver: PositionedReceiver, ok: bool) -> None:
    """Park a receiver for the next task (or close it after a failed task)."""
    if not ok or not receiver.alive or receiver.config.max_parked == 0:
        receiver.close()
        return
    receiver.park()
    # Registered before it is in the cache: a sweep that closes it at once unregisters it.
    parked(receiver.slot, receiver.token)
    _PARKED.put(
        _key(receiver.config, receiver.partition_id),
        receiver,
        max_age_s=receiver.config.idle_timeout_s,
    )  # a receiver parked there before is closed


def free_links_after(error: BaseException, receiver: PositionedReceiver) -> None:
    """After Event Hubs refused a link for its reader limit, ask every receiver parked on this
    machine for that partition to close, so the task's next attempt finds a place."""
    if condition(error) == "amqp:resource-limit-exceeded":
        asked = ask_to_close(receiver.slot, keep=0)
        log.info(
            "%s: partition %s of %s has Event Hubs' five readers of consumer group %s; asked "
            "%d receivers parked on this machine to close",
            NAME,
            receiver.partition_id,
            receiver.config.connection.describe(),
            receiver.config.consumer_group,
            asked,
        )


def close_all() -> None:
    """Close every parked receiver (tests; a worker's receivers otherwise live until reaped)."""
    _PARKED.clear()
