"""Driver-side partition metadata, cached briefly because Spark polls latestOffset often."""

from __future__ import annotations

import calendar
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar, cast

from pysparksources.errors import ServiceTimeoutError
from pysparksources.eventhubs import NAME
from pysparksources.eventhubs._group_check import GroupCheck
from pysparksources.eventhubs._management import ManagementCalls
from pysparksources.eventhubs._positions import Position
from pysparksources.eventhubs._receivers import PositionedReceiver
from pysparksources.eventhubs._refusals import CONFIRM, no_such_name, refusal
from pysparksources.eventhubs.config import SourceConfig

__all__ = ["HubMetadata", "PartitionInfo"]

log = logging.getLogger(__name__)

_PARALLEL_CALLS = 16
_STALE_GRACE_S = 10.0  # how long expired info may still answer while a refresh runs
# Management calls a second the driver's refreshes may make when partitionInfoCacheInterval
# is left unset: each is a new AMQP connection and token against Azure. bench latency's p50 at
# 1,000 events/s on 2 partitions: 841 ms with 1 s, 381 ms with 250 ms (a cold JVM), and with a
# warm one 304 / 299 ms with 250 ms against 264 / 305 ms with the default 100 ms (two runs);
# a hub of 32 partitions refreshes every 0.8 s instead.
_CALLS_PER_S = 40.0
# How long a consumer group check at a hub without any event listens for a refusal (nothing
# else can end it; a missing group's two refusals took 2.0 s against the emulator).
_EMPTY_HUB_CHECK_S = 5.0
T = TypeVar("T")


@dataclass(frozen=True)
class PartitionInfo:
    beginning: int  # first retained sequence number
    latest: int  # last enqueued sequence number + 1: the next one to be written
    empty: bool
    # The last event's service offset and enqueue time: whether an event at or after an offset
    # or time position exists at all (None when the service did not say).
    last_offset: str | None = None
    last_enqueued: datetime | None = None


class HubMetadata:
    """Partition ids and properties, reused for a short interval.

    Every management call runs on a client of its own, with operationTimeout as its deadline
    (see :mod:`_management`): the query thread, the background refresh and the concurrent
    partition-properties calls never share an SDK client.

    The first fetch is the query's first contact with the service, where whatever does not
    exist fails at once, named (``EventHubConnection.refused``): the hub (management calls
    answer amqp:not-found) and the namespace (a refused connection, a host name that does not
    exist), on clients that retry nothing; any other error sends the calls again on clients
    with the SDK's retries, which every later fetch uses. Then the consumer group, which no
    management call knows of: a :class:`GroupCheck` reads the last event of a partition that
    has one (the properties just read say which), and the fetch waits for its verdict, within
    operationTimeout. When no partition holds an event, nothing can prove that the group
    exists: the check listens for a refusal for a few seconds in the background and the next
    call (Spark polls latestOffset) raises it; :meth:`settle_group_check` waits for it where a
    read would otherwise end before it (spark.read, AvailableNow).
    """

    def __init__(self, config: SourceConfig) -> None:
        self._config = config
        self._calls: ManagementCalls[Any] = ManagementCalls(
            self._new_client, _close_client, config.operation_timeout_s, _PARALLEL_CALLS
        )
        self._fetched_at = -1e18
        self._infos: dict[str, PartitionInfo] = {}
        self._ids: list[str] | None = None
        self._ids_at = -1e18
        self._refresher: ThreadPoolExecutor | None = None
        self._refreshing: Future[dict[str, PartitionInfo]] | None = None
        self._stored_started = -1e18
        self._lock = threading.Lock()
        # Ids the hub probably has (the options name them, or a checkpoint or an earlier read
        # did): their properties are asked for alongside the ids themselves.
        self._expected: set[str] = set(config.partitions or ()) | set(config.starting_per_partition)
        self._speculating: ThreadPoolExecutor | None = None
        # Until a fetch succeeds (or fails in a way a retry may mend), management calls run
        # on clients that retry nothing: what does not exist fails at once.
        self._first_contact = True
        self._group_check: GroupCheck | None = None

    def _new_client(self) -> Any:
        return self._config.connection.consumer_client(
            self._config.consumer_group, first_contact=self._first_contact
        )

    def expect(self, partition_ids: Iterable[str]) -> None:
        """Note partition ids the hub probably has (a checkpoint's): when the ids are next read,
        these partitions' properties are read at the same time, not after."""
        self._expected.update(partition_ids)

    def _ids_due(self, now: float, fresh: bool) -> bool:
        # Partition counts change rarely (only upwards, on Premium/Dedicated): re-read them
        # every partitionDiscoveryInterval.
        return fresh or self._ids is None or now - self._ids_at >= self._config.discovery_s

    def _read_ids(self, now: float) -> list[str]:
        (ids,) = self._bounded([lambda client: client.get_partition_ids()], "partition ids")
        self._ids = [str(pid) for pid in ids]
        self._ids_at = now
        self._expected = set(self._ids)
        return self._ids

    def info_cache_s(self) -> float:
        """How long partition properties are reused: partitionInfoCacheInterval, and unless the
        user set it, long enough to stay within :data:`_CALLS_PER_S` management calls a second
        (one call per partition per refresh)."""
        interval = self._config.info_cache_s
        if self._config.info_cache_given:
            return interval
        return max(interval, len(self._infos) / _CALLS_PER_S)

    def partitions(
        self, fresh: bool = False, max_age: float | None = None
    ) -> dict[str, PartitionInfo]:
        """Every partition's info, fetched again when older than ``max_age`` seconds
        (default partitionInfoCacheInterval; ``fresh`` means 0).

        With the default age, info that has just expired is still returned while a
        background fetch replaces it: Spark polls latestOffset between and before batches,
        and a fetch on the query thread (~20 ms against the emulator, a new connection and
        token per call against Azure) would delay every micro-batch by that much.
        """
        self._raise_group_verdict()
        limit = 0.0 if fresh else self.info_cache_s() if max_age is None else max_age
        age = time.monotonic() - self._fetched_at
        if age < limit:
            return self._infos
        if max_age is None and not fresh and self._infos and age < limit + _STALE_GRACE_S:
            self._refresh_in_background()
            return self._infos
        started = time.monotonic()
        self._store(self._fetch(fresh), started)
        return self._infos

    def _fetch(self, fresh: bool) -> dict[str, PartitionInfo]:
        if self._group_check is not None:
            return self._fetch_infos(fresh)
        infos = self._fetch_infos(fresh)
        self._end_first_contact()
        check, has_event = self._check_group(infos)
        self._group_check = check
        if not has_event:
            return infos  # nothing to read, nothing to prove it with: see the class docstring
        if not check.wait(self._config.operation_timeout_s):
            log.warning(
                "%s: checking consumer group %s of %s took longer than operationTimeout "
                "(%gs); going on",
                NAME,
                self._config.consumer_group,
                self._config.connection.describe(),
                self._config.operation_timeout_s,
            )
        self._raise_group_verdict()
        return infos

    def _end_first_contact(self) -> None:
        """Later calls use clients with the SDK's retries (the idle ones retry nothing)."""
        if self._first_contact:
            self._first_contact = False
            self._calls.discard_idle()

    def _check_group(self, infos: dict[str, PartitionInfo]) -> tuple[GroupCheck, bool]:
        """A check of the consumer group at the last event of a partition (one read by the
        query if it can), else at the end of the first partition read, for a short while;
        and whether it reads an event."""
        config = self._config
        read = [pid for pid in infos if config.partitions is None or pid in config.partitions]
        with_events = [pid for pid in read + list(infos) if not infos[pid].empty]
        if with_events:
            pid = with_events[0]
            last = infos[pid].latest - 1
            return GroupCheck(config, pid, last, True, config.operation_timeout_s), True
        pid = (read or list(infos) or ["0"])[0]
        limit = min(config.operation_timeout_s, _EMPTY_HUB_CHECK_S)
        return GroupCheck(config, pid, "@latest", False, limit), False

    def _raise_group_verdict(self) -> None:
        check = self._group_check
        if check is not None and check.error is not None and check.verdict == "missing":
            raise check.error.bare()

    def settle_group_check(self) -> None:
        """Wait for the consumer group check still running (a hub without events), within its
        few seconds, and raise its verdict: for reads that would end before it arrives."""
        check = self._group_check
        if check is not None:
            check.wait(max(0.0, check.deadline - time.monotonic()) + 1.0)
            self._raise_group_verdict()

    def _fetch_infos(self, fresh: bool) -> dict[str, PartitionInfo]:
        # Each management call opens a connection of its own (~15 ms against the emulator with
        # _handshake's prompt clients, ~0.4 s at the SDK's own pace), so independent calls
        # overlap: properties of every partition at once and, when the ids are due as well, the
        # expected partitions' properties beside the ids call. That saves a round at a query's
        # (re)start, where latestOffset waits for it.
        now = time.monotonic()
        found: dict[str, PartitionInfo] = {}
        if not self._ids_due(now, fresh):
            ids = cast(list[str], self._ids)
        elif not self._expected:
            ids = self._read_ids(now)
        else:
            guessed = sorted(self._expected, key=int)
            early = self._speculator().submit(self._guess, guessed)
            ids = self._read_ids(now)
            if set(ids) >= set(guessed):  # else a guess named no partition: do not wait for it
                found = {pid: i for pid, i in zip(guessed, early.result(), strict=True) if i}
        missing = [pid for pid in ids if pid not in found]
        found.update(
            zip(
                missing,
                self._bounded(
                    [functools.partial(_partition_info, pid=pid) for pid in missing],
                    "partition properties",
                ),
                strict=True,
            )
        )
        return {pid: found[pid] for pid in sorted(ids, key=int)}

    def _guess(self, pids: list[str]) -> list[PartitionInfo | None]:
        """Properties of partitions that may not exist: None where the call failed (a missing
        partition fails after the SDK's retries; the ids call decides what exists)."""
        return self._bounded(
            [functools.partial(_partition_info_or_none, pid=pid) for pid in pids],
            "partition properties",
        )

    def _speculator(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._speculating is None:
                self._speculating = ThreadPoolExecutor(1, f"{NAME}-metadata-guess")
            return self._speculating

    def _store(self, infos: dict[str, PartitionInfo], started: float) -> None:
        with self._lock:
            if started >= self._stored_started:  # an older, slower fetch never wins
                self._infos = infos
                self._stored_started = started
                # Age counts from the end of the fetch, or a slow fetch would never be reused.
                self._fetched_at = time.monotonic()

    def _refresh_in_background(self) -> None:
        with self._lock:
            if self._refreshing is not None:
                return
            if self._refresher is None:
                self._refresher = ThreadPoolExecutor(1, f"{NAME}-metadata-refresh")
            started = time.monotonic()
            self._refreshing = self._refresher.submit(self._fetch_infos, False)
        self._refreshing.add_done_callback(lambda done: self._refreshed(done, started))

    def _refreshed(self, done: Future[dict[str, PartitionInfo]], started: float) -> None:
        with self._lock:
            self._refreshing = None
        error = done.exception()
        if error is None:
            self._store(done.result(), started)
        else:  # past the grace period the query thread fetches itself and fails if it must
            log.warning("%s: refreshing partition info failed: %s", NAME, error)

    def _bounded(self, calls: Sequence[Callable[[Any], T]], what: str) -> list[T]:
        """The calls' results, failing after operationTimeout: the SDK's management calls have
        no deadline of their own, so a service that never answers would stall the query.

        What does not exist fails naming it; an amqp:not-found answer only once the calls,
        run again on new clients, get it again (``_refusals.CONFIRM``). At first contact,
        an error that names nothing (a resolver that did not answer, a failed
        authentication...) sends the calls again on clients with the SDK's retries.
        """
        not_found = 0
        while True:
            first_contact = self._first_contact
            try:
                return self._calls.run(calls)
            except ServiceTimeoutError:
                raise ServiceTimeoutError(
                    NAME,
                    f"reading {what} of {self._config.connection.describe()} took longer than "
                    f"operationTimeout ({self._config.operation_timeout_s:g}s)",
                ) from None
            except Exception as error:
                found = refusal(error)
                refused = self._config.connection.refused(error)
                if found == "not-found" and not_found + 1 < CONFIRM:
                    not_found += 1
                    log.info("%s: %s answered not-found; asking again", NAME, what)
                    continue
                if first_contact and (
                    (found is None and refused is None)
                    or (found == "unresolved" and not no_such_name(error))
                ):
                    log.info("%s: %s failed (%r); retrying as the SDK does", NAME, what, error)
                    self._end_first_contact()
                    continue
                if refused is None:
                    raise
                raise refused.bare() from None

    def resolve(self, positions: dict[str, Position]) -> dict[str, int]:
        """The next sequence number to read in each partition for its position.

        Offsets and enqueued times need a receiver to find the first event at or after them;
        those partitions are searched concurrently, each for up to operationTimeout.
        """
        infos = self.partitions()
        resolved: dict[str, int] = {}
        searches: dict[str, Position] = {}
        for pid, position in positions.items():
            known = _resolve_from_properties(position, infos[pid])
            if known is None:
                searches[pid] = position
            else:
                resolved[pid] = known
        if searches:
            workers = min(len(searches), _PARALLEL_CALLS)
            with ThreadPoolExecutor(workers, f"{NAME}-resolve") as pool:
                found = {pid: pool.submit(self._search, pid, p) for pid, p in searches.items()}
                resolved.update({pid: future.result() for pid, future in found.items()})
        return {pid: resolved[pid] for pid in positions}

    def _search(self, pid: str, position: Position) -> int:
        """The sequence number of the first event at or after an offset or time position,
        which the partition's properties say exists."""
        start: str | Any = position.offset if position.kind == "offset" else position.enqueued_time
        receiver = PositionedReceiver(
            self._config, pid, start, position.inclusive, sdk_retries=True
        )
        limit = self._config.operation_timeout_s
        try:
            first = receiver.first_event(limit)
        finally:
            receiver.close()
        if first is None:
            # Starting at the end instead would skip the events the partition holds there.
            raise ServiceTimeoutError(
                NAME,
                f"finding {position.describe()} in partition {pid} of "
                f"{self._config.connection.describe()} took longer than operationTimeout "
                f"({limit:g}s): the partition holds events at or after it, but none arrived "
                "(the service, its link or the credential answer slowly); raise "
                "operationTimeout or retry",
            )
        return int(first.sequence_number)

    def close(self) -> None:
        if self._group_check is not None:
            self._group_check.cancel()
        for pool in (self._refresher, self._speculating):
            if pool is not None:
                pool.shutdown(wait=False)
        self._refresher = self._speculating = None
        self._calls.close()


def _close_client(client: Any) -> None:
    client.close()


def _partition_info_or_none(client: Any, pid: str) -> PartitionInfo | None:
    try:
        return _partition_info(client, pid)
    except Exception:
        log.debug("%s: properties of expected partition %s not read", NAME, pid, exc_info=True)
        return None


def _partition_info(client: Any, pid: str) -> PartitionInfo:
    props = client.get_partition_properties(pid)
    last = int(props["last_enqueued_sequence_number"])
    empty = bool(props["is_empty"])
    beginning = last + 1 if empty else int(props["beginning_sequence_number"])
    offset = props.get("last_enqueued_offset")
    return PartitionInfo(
        beginning,
        last + 1,
        empty,
        last_offset=None if offset is None else str(offset),
        last_enqueued=props.get("last_enqueued_time_utc"),
    )


def _epoch_ms(moment: datetime) -> int:
    """Milliseconds since the epoch, computed as the SDK does for its enqueued-time filter."""
    return calendar.timegm(moment.utctimetuple()) * 1000 + moment.microsecond // 1000


def _event_at_or_after(position: Position, info: PartitionInfo) -> bool:
    """Whether the partition holds an event at or after an offset or time position.

    The last event decides: offsets and enqueue times only grow within a partition. When the
    service did not report it, assume there is one (and search for it).
    """
    if position.kind == "offset":
        last = info.last_offset
        if last is None or not last.isdigit():
            return True
        wanted, last_offset = int(position.offset), int(last)
        return last_offset > wanted or (position.inclusive and last_offset == wanted)
    if info.last_enqueued is None or position.enqueued_time is None:
        return True
    wanted, last_ms = _epoch_ms(position.enqueued_time), _epoch_ms(info.last_enqueued)
    return last_ms > wanted or (position.inclusive and last_ms == wanted)


def _resolve_from_properties(position: Position, info: PartitionInfo) -> int | None:
    """The sequence number ``position`` names, when the properties alone tell; else None."""
    simple = position.resolve_simple(info.beginning, info.latest)
    if simple is not None:
        return simple
    if info.empty or not _event_at_or_after(position, info):
        return info.latest  # the first event at or after it is the next one written
    return None
