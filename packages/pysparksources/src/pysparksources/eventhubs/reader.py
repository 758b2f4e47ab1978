"""pyeventhub's readers, in the order the engine calls them.

Driver (one long-lived process per query run): getDefaultReadLimit -> initialOffset ->
prepareForTriggerAvailableNow (AvailableNow only) -> latestOffset(start, limit) ->
reportLatestOffset -> partitions -> commit -> stop. Executors: read(partition). Spark 4.0 and
4.1 call ``latestOffset()`` alone: ``EngineCalls`` supplies the start and limit there.

Offsets are ``{"<hub>": {"<partition>": next sequence number}}`` (the Scala connector's form;
``offsets.py``); a batch reads [start, end) of every partition.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Generator, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader, InputPartition

from pysparksources._core.compat import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    ReadMinRows,
    SupportsTriggerAvailableNow,
)
from pysparksources._core.datasource import read_planned
from pysparksources._core.engine_calls import EngineCalls
from pysparksources._core.worker_gc import rarer_collections
from pysparksources.errors import (
    DataLossError,
    MalformedRecordError,
    OptionError,
    SchemaRegistryError,
)
from pysparksources.eventhubs import NAME
from pysparksources.eventhubs import _task_stats as task_stats
from pysparksources.eventhubs._admission import TriggerGate, next_end
from pysparksources.eventhubs._checkpoint_store import CheckpointStore, CommittedPositions
from pysparksources.eventhubs._metadata import HubMetadata, PartitionInfo
from pysparksources.eventhubs._outages import OutageBudget
from pysparksources.eventhubs._positions import START, Position
from pysparksources.eventhubs._receivers import (
    PositionedReceiver,
    acquire,
    free_links_after,
    release,
)
from pysparksources.eventhubs._refusals import CONFIRM
from pysparksources.eventhubs._task_ranges import read_ranges
from pysparksources.eventhubs.config import SourceConfig
from pysparksources.eventhubs.offsets import HubOffset, HubReport
from pysparksources.eventhubs.planning import (
    EventHubPartition,
    EventHubTask,
    pack_tasks,
    plan_partitions,
)

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

__all__ = ["EventHubBatchReader", "EventHubStreamReader", "read_partition", "read_task"]

log = logging.getLogger(__name__)
Offset = dict[str, Any]
_ROWS_PER_ARROW_BATCH = 8192
_EVENTS_PER_CONVERSION = 256  # see _RowBuffer
_CONCAT_BATCHES = hasattr(pa, "concat_batches")
_STORE_FLUSH_S = 30.0  # longest wait for the last positions to reach the checkpoint store


def _positions_of(config: SourceConfig, offset: Offset) -> dict[str, int]:
    return dict(HubOffset.of_hub(offset, config.connection.event_hub).positions)


def _offset(config: SourceConfig, positions: dict[str, int]) -> Offset:
    return HubOffset(config.connection.event_hub, positions).to_dict()


def _lost(config: SourceConfig, pid: str, first: int, retained: int) -> str:
    return (
        f"events {first}..{retained - 1} of {config.connection.describe()} "
        f"partition {pid} expired (retention) before they were read"
    )


def _data_lost(message: str) -> DataLossError:
    return DataLossError(NAME, message + "; set failOnDataLoss=false to skip them")


def _check_partition_ids(config: SourceConfig, ids: dict[str, Any]) -> None:
    """``partitions`` and per-partition positions must name partitions the hub has, and
    positions only partitions that are read (a typo is not silent)."""
    hub = config.connection.describe()
    if config.partitions is not None:
        unknown = sorted(set(config.partitions) - set(ids), key=int)
        if unknown:
            raise OptionError(
                NAME,
                "partitions",
                f"option 'partitions' names partition(s) {', '.join(unknown)} but {hub} has "
                f"partitions {', '.join(ids)}",
            )
    read = set(ids) if config.partitions is None else set(config.partitions)
    for name, given in (
        ("startingPositions", config.starting_per_partition),
        ("endingPositions", config.ending_per_partition),
    ):
        unknown = sorted(set(given) - set(ids), key=int)
        if unknown:
            raise OptionError(
                NAME,
                name,
                f"option '{name}' names partition(s) {', '.join(unknown)} but {hub} has "
                f"partitions {', '.join(ids)}",
            )
        unread = sorted(set(given) - read, key=int)
        if unread:
            raise OptionError(
                NAME,
                name,
                f"option '{name}' names partition(s) {', '.join(unread)} that option "
                f"'partitions' ({','.join(config.partitions or ())}) does not read",
            )


def _read_partitions(config: SourceConfig, infos: dict[str, PartitionInfo]) -> list[str]:
    """The partition ids a query reads: ``partitions`` if given, else every one of the hub."""
    if config.partitions is None:
        return list(infos)
    return [pid for pid in infos if pid in config.partitions]


def _check_checkpoint_partitions(config: SourceConfig, positions: dict[str, int]) -> None:
    """With ``partitions``, a checkpoint must hold exactly those: the set is fixed for the
    life of a checkpoint (a partition dropped would silently stop being read, one added
    would need a starting position that only a new query applies)."""
    if config.partitions is None or set(positions) == set(config.partitions):
        return
    held = ",".join(sorted(positions, key=int))
    resume = json.dumps({pid: {"seqNo": positions[pid]} for pid in sorted(positions, key=int)})
    raise OptionError(
        NAME,
        "partitions",
        f"option 'partitions' is {','.join(config.partitions)} but the checkpoint reads "
        f"partitions {held}; the set is fixed for the life of a checkpoint. To change it, "
        f"start a new checkpoint with startingPositions {resume} (the checkpoint's positions) "
        "and startingPosition for the partitions added",
    )


def _clamp_expired(
    config: SourceConfig, ranges: dict[str, tuple[int, int]], infos: dict[str, PartitionInfo]
) -> dict[str, tuple[int, int]]:
    """failOnDataLoss on the driver: fail, or move a range's start to the first retained event."""
    result = {}
    for pid, (start, until) in ranges.items():
        info = infos.get(pid)
        if info is not None and until > start and start < info.beginning:
            message = _lost(config, pid, start, min(info.beginning, until))
            if config.fail_on_data_loss:
                raise _data_lost(message)
            log.warning(
                "%s: %s; skipping %d events", NAME, message, min(info.beginning, until) - start
            )
            start = min(info.beginning, until)
        result[pid] = (start, until)
    return result


def _from_store(
    config: SourceConfig, store: CheckpointStore, meta: HubMetadata, starts: dict[str, Position]
) -> dict[str, Position]:
    """Starting positions with ``checkpointStore`` replaced by the store's checkpoints: just
    after each one, or the partition's first retained event where there is none (where an
    EventProcessorClient without a checkpoint starts by default)."""
    wanted = [pid for pid, position in starts.items() if position.kind == "checkpointStore"]
    if not wanted:
        return starts
    found = store.starting_positions(meta, wanted)
    chosen = {
        pid: found.get(pid, START) if position.kind == "checkpointStore" else position
        for pid, position in starts.items()
    }
    log.info(
        "%s: starting %s after the %s's checkpoints: %s",
        NAME,
        config.describe(),
        store.describe(),
        ", ".join(f"partition {pid} at {p.describe()}" for pid, p in chosen.items()),
    )
    return chosen


def _record_batch(config: SourceConfig, events: list[Any], partition_id: str) -> pa.RecordBatch:
    # Imported here, on executors: the driver's planner process would otherwise import
    # pyarrow.compute (~60 ms) while the query starts, for nothing.
    from pysparksources.eventhubs._arrowize import to_record_batch
    from pysparksources.eventhubs.avro.decode import decode_batch

    batch = to_record_batch(events, partition_id)
    if not config.body.avro:
        return batch
    return decode_batch(config, batch, [event.content_type for event in events])


class _RowBuffer:
    """Received events turned into Arrow a few hundred at a time, handed on in batches of
    about :data:`_ROWS_PER_ARROW_BATCH` rows.

    The SDK delivers a hundred events or so at a time and Spark's Arrow hop prefers big
    batches, but holding the events themselves until a big batch is full kept thousands of
    SDK objects (a dozen tracked containers each) alive per partition: Python's cyclic garbage
    collector walked them again and again, a third of a backlog read's CPU. Converted early,
    only column buffers wait.
    """

    def __init__(self, config: SourceConfig, partition_id: str) -> None:
        self._config = config
        self._partition_id = partition_id
        self._events: list[Any] = []
        self._converted: list[pa.RecordBatch] = []
        self._rows = 0

    def add(self, events: list[Any]) -> pa.RecordBatch | None:
        """Take a delivery; a full record batch when one is ready."""
        self._events.extend(events)
        self._rows += len(events)
        if len(self._events) >= _EVENTS_PER_CONVERSION:
            self._convert()
        return self.flush() if self._rows >= _ROWS_PER_ARROW_BATCH else None

    def _convert(self) -> None:
        if self._events:
            self._converted.append(_record_batch(self._config, self._events, self._partition_id))
            self._events = []

    def flush(self) -> pa.RecordBatch | None:
        """Everything held, as one record batch (None when nothing is)."""
        self._convert()
        converted, self._converted, self._rows = self._converted, [], 0
        if not converted:
            return None
        if len(converted) == 1:
            return converted[0]
        return pa.concat_batches(converted) if _CONCAT_BATCHES else _concat(converted)


def _concat(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    """pyarrow before 19 has no concat_batches."""
    table = pa.Table.from_batches(batches).combine_chunks()
    return table.to_batches()[0]


class EventHubStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):  # type: ignore[misc]
    """Micro-batch reads with admission control, AvailableNow and lag reporting."""

    def __init__(self, config: SourceConfig, schema: StructType | None = None) -> None:
        self._config = config
        self._meta: HubMetadata | None = None
        self._frozen: dict[str, int] | None = None
        self._latest: dict[str, int] | None = None
        self._enqueued: dict[str, datetime | None] = {}
        self._initial: Offset | None = None
        self._checkpoint_checked = False
        self._added: dict[str, int] = {}
        self._store: CheckpointStore | None = None
        self._committed: CommittedPositions | None = None
        self._infos: dict[str, PartitionInfo] = {}
        self._engine = EngineCalls()
        cfg = self._config
        self._gate = (
            None
            if cfg.min_events_per_trigger is None
            else TriggerGate(cfg.min_events_per_trigger, cfg.max_trigger_delay_s, time.monotonic)
        )

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_meta"] = None
        state["_store"] = state["_committed"] = None
        return state

    def _metadata(self) -> HubMetadata:
        if self._meta is None:
            self._meta = HubMetadata(self._config)
        return self._meta

    def getDefaultReadLimit(self) -> ReadLimit:
        # No composite limit exists for Python sources: with both bounds the engine hands back
        # ReadMinRows and latestOffset applies maxEventsPerTrigger from the options.
        if self._config.min_events_per_trigger is not None:
            return ReadMinRows(self._config.min_events_per_trigger)
        if self._config.max_events_per_trigger is not None:
            return ReadMaxRows(self._config.max_events_per_trigger)
        return ReadAllAvailable()

    def initialOffset(self) -> Offset:
        # Only a query without a checkpoint gets here: starting positions apply once. Spark
        # asks twice while starting (for the first batch's end and again for its start), and
        # an @latest start must give the same answer both times.
        if self._initial is None:
            meta = self._metadata()
            cfg = self._config
            # Reuses the snapshot AvailableNow just took, if any: each fetch is a management
            # call per partition, a connection and token each against Azure.
            infos = meta.partitions()
            _check_partition_ids(cfg, infos)
            starts = {
                pid: cfg.starting_per_partition.get(pid, cfg.starting)
                for pid in _read_partitions(cfg, infos)
            }
            if cfg.checkpoint_store is not None:
                starts = _from_store(cfg, self._checkpoint_store, meta, starts)
            self._initial = _offset(cfg, meta.resolve(starts))
        return self._initial

    def prepareForTriggerAvailableNow(self) -> None:
        meta = self._metadata()
        infos = meta.partitions(fresh=True)
        # A hub without events ends the run at its first trigger: wait for the consumer group
        # check, which nothing else would report (a few seconds at most).
        meta.settle_group_check()
        self._frozen = {pid: infos[pid].latest for pid in _read_partitions(self._config, infos)}

    def latestOffset(self, start: Offset | None = None, limit: ReadLimit | None = None) -> Offset:
        start, limit = self._engine.arguments(
            start, limit, self.initialOffset, self.getDefaultReadLimit
        )
        cfg = self._config
        begin = _positions_of(cfg, start)
        meta = self._metadata()
        meta.expect(begin)  # a restarted query: its checkpoint names the hub's partitions
        infos = meta.partitions()
        if not self._checkpoint_checked:  # a restarted query meets its options here first
            _check_partition_ids(cfg, infos)
            _check_checkpoint_partitions(cfg, begin)
            if cfg.checkpoint_store is not None and cfg.checkpoint_store.update:
                self._checkpoint_store.check_no_processor(_read_partitions(cfg, infos))
            self._checkpoint_checked = True
        self._infos = infos
        # Spark asks for a batch once the last one committed; at the start, nothing before
        # the starting positions is the query's to read, so they are written too.
        self._post_committed(begin)
        latest = {pid: infos[pid].latest for pid in _read_partitions(cfg, infos)}
        self._latest = latest
        # An empty partition may still name the time of an event that has expired: not newest.
        self._enqueued = {
            pid: None if infos[pid].empty else infos[pid].last_enqueued for pid in latest
        }
        if self._frozen is not None:
            latest = dict(self._frozen)
        # A partition the offsets do not name yet enters them at its starting position, and
        # is read from the next batch on: the offset log records where it started.
        added = self._added_starts(begin, latest)
        entered = {**begin, **added}
        current = {pid: n for pid, n in latest.items() if pid not in added}
        beginnings = {pid: info.beginning for pid, info in infos.items()}
        if isinstance(limit, ReadMaxRows):
            max_rows: int | None = limit.max_rows
        elif isinstance(limit, ReadMinRows):
            max_rows = cfg.max_events_per_trigger
            # AvailableNow ends at the first trigger that finds nothing new: holding events
            # back there would end the run early, so it reads at once.
            if self._gate is not None and self._frozen is None:
                everything = next_end(entered, current, beginnings, None)
                waiting = sum(everything[pid] - entered[pid] for pid in everything)
                if not self._gate.admit(waiting):
                    return _offset(cfg, begin)
        else:
            max_rows = None  # ReadAllAvailable
        end = next_end(entered, current, beginnings, max_rows)
        if max_rows is not None:
            self._engine.capped(end != next_end(entered, current, beginnings, None))
        if self._frozen is not None and end == begin and self._committed is not None:
            # The run's last trigger: Spark ends the query without calling stop() in time
            # for a write on another thread, so the last positions are written now.
            self._committed.flush(min(cfg.operation_timeout_s, _STORE_FLUSH_S))
        return _offset(cfg, end)

    def _added_starts(self, begin: dict[str, int], latest: dict[str, int]) -> dict[str, int]:
        """Where partitions missing from ``begin`` start: added to the hub while the query
        runs, or after its checkpoint was made. Their ``startingPositions`` entry if it has
        one, else their first retained event (Spark's Kafka source reads an added partition
        from its earliest offset); resolved once per partition and query run."""
        new = [pid for pid in latest if pid not in begin]
        unresolved = {
            pid: self._config.starting_per_partition.get(pid, START)
            for pid in new
            if pid not in self._added
        }
        if unresolved:
            found = self._metadata().resolve(unresolved)
            log.info(
                "%s: partition(s) %s of %s not in the offsets yet (added to the hub): "
                "reading from sequence number(s) %s",
                NAME,
                ", ".join(found),
                self._config.connection.describe(),
                ", ".join(str(n) for n in found.values()),
            )
            self._added.update(found)
        return {pid: self._added[pid] for pid in new}

    def reportLatestOffset(self) -> Offset | None:
        """The partitions' ends, and when each one's newest event was enqueued
        (:class:`HubReport`).

        Spark only shows this in the progress (``sources[].latestOffset``); it never enters
        the offset log, so the extra key cannot change what a checkpoint holds.
        """
        if self._latest is None:
            return None
        offset = HubOffset(self._config.connection.event_hub, self._latest)
        times = {pid: t for pid, t in self._enqueued.items() if t is not None}
        report: Offset = HubReport(offset, times).to_dict()
        return report

    def partitions(self, start: Offset, end: Offset) -> list[InputPartition]:
        self._engine.planned(end)
        begin = _positions_of(self._config, start)
        until = _positions_of(self._config, end)
        # latestOffset fetched these moments ago; read tasks check retention again anyway.
        infos = self._metadata().partitions(max_age=math.inf)
        # A partition missing from the start enters the offsets in this batch at its starting
        # position (see latestOffset): nothing of it is read before the next batch.
        ranges = {pid: (begin.get(pid, u), u) for pid, u in until.items()}
        ranges = _clamp_expired(self._config, ranges, infos)
        return list(pack_tasks(self._config, plan_partitions(self._config, ranges, len(until))))

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_planned(partition, EventHubTask, read_task)

    @property
    def _checkpoint_store(self) -> CheckpointStore:
        if self._store is None:
            self._store = CheckpointStore(self._config)
        return self._store

    def _post_committed(self, positions: dict[str, int]) -> None:
        """Hand positions Spark committed to the checkpoint store's writer, if there is one."""
        store = self._config.checkpoint_store
        if store is None or not store.update:
            return
        if self._committed is None:
            self._committed = CommittedPositions(self._checkpoint_store, self._config)
        self._committed.post(positions, self._infos)

    def commit(self, end: Offset) -> None:
        # Event Hubs keeps events until retention: nothing to acknowledge, only to mirror.
        self._post_committed(_positions_of(self._config, end))

    def stop(self) -> None:
        self._engine.warn_if_cut_short(NAME, "maxEventsPerTrigger")
        if self._committed is not None:
            self._committed.close(min(self._config.operation_timeout_s, _STORE_FLUSH_S))
        if self._store is not None:
            self._store.close()
        if self._meta is not None:
            self._meta.close()


class EventHubBatchReader(DataSourceReader):  # type: ignore[misc]
    """spark.read: events between startingPosition(s) and endingPosition(s) at read time."""

    def __init__(self, config: SourceConfig, schema: StructType | None = None) -> None:
        self._config = config

    def partitions(self) -> list[InputPartition]:
        cfg = self._config
        meta = HubMetadata(cfg)
        try:
            infos = meta.partitions(fresh=True)
            _check_partition_ids(cfg, infos)
            read = _read_partitions(cfg, infos)
            starts = {p: cfg.starting_per_partition.get(p, cfg.starting) for p in read}
            if cfg.checkpoint_store is not None:
                store = CheckpointStore(cfg)
                try:
                    starts = _from_store(cfg, store, meta, starts)
                finally:
                    store.close()
            lows = meta.resolve(starts)
            highs = meta.resolve({p: cfg.ending_per_partition.get(p, cfg.ending) for p in read})
            ranges = {pid: (lows[pid], min(highs[pid], infos[pid].latest)) for pid in read}
            meta.settle_group_check()  # a hub without events: no task would report it
        finally:
            meta.close()
        ranges = _clamp_expired(cfg, ranges, infos)
        return list(pack_tasks(cfg, plan_partitions(cfg, ranges, len(infos))))

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_planned(partition, EventHubTask, read_task)


def read_task(task: EventHubTask) -> Iterator[pa.RecordBatch]:
    """Every range of a read task, at the same time when there are several (_task_ranges),
    with the worker's garbage collector collecting young objects rarely meanwhile
    (received events wait in queues in their thousands: ``worker_gc.rarer_collections``)."""
    together = len(task.ranges)
    with rarer_collections():
        yield from read_ranges(task.ranges, lambda part: read_partition(part, together))


def read_partition(
    part: EventHubPartition, ranges_in_task: int = 1
) -> Generator[pa.RecordBatch, None, None]:
    """Events [start, until) of one partition as RecordBatches, through the receiver cache."""
    cfg = part.config
    began = time.monotonic()
    receiver, reuse = acquire(cfg, part.partition_id, part.start)
    count = 0
    ok = False

    def on_gap(expected: int, got: int) -> None:
        message = _lost(cfg, part.partition_id, expected, got)
        if cfg.fail_on_data_loss:
            raise _data_lost(message)
        log.warning("%s: %s; skipping %d events", NAME, message, got - expected)

    outage = OutageBudget(cfg, part.partition_id)  # link failures: see _outages
    refusals = 0
    rows = _RowBuffer(cfg, part.partition_id)
    try:
        while True:
            try:
                for events in receiver.take(part.until, on_gap, outage.until):
                    count += len(events)
                    full = rows.add(events)
                    if full is not None:
                        yield full
                    outage.progressed()
                break
            except OptionError:
                # The consumer group does not exist: a group check found it missing (confirmed
                # already), or the SDK reported a refused receiver (amqp:not-found), which a new
                # receiver must confirm (passing trouble gets the same condition).
                refusals += 1
                if refusals >= CONFIRM or receiver.group_missing or receiver.next_seq is None:
                    raise
                receiver.close()
                receiver = PositionedReceiver(cfg, part.partition_id, receiver.next_seq)
            except (DataLossError, MalformedRecordError, SchemaRegistryError):
                raise  # not the link's fault: reconnecting would not help
            except TimeoutError:
                # Nothing for receiverTimeout since the partition's last event.
                first = part.start if receiver.next_seq is None else receiver.next_seq
                raise outage.exhausted(first, part.until, receiver.group_note()) from None
            except Exception as error:
                # A failed link (the receivers' clients do not retry): resume on a new one
                # where it stopped, while receiverTimeout lasts (OutageBudget.retry raises
                # once it is spent).
                if receiver.next_seq is None:
                    raise
                pause = outage.retry(error, receiver.next_seq, part.until)
                receiver.close()
                free_links_after(error, receiver)
                time.sleep(pause)
                receiver = PositionedReceiver(cfg, part.partition_id, receiver.next_seq)
        last = rows.flush()
        if last is not None:
            yield last
        ok = True
    finally:
        release(receiver, ok)
        task_stats.record(part, reuse, count, time.monotonic() - began, ranges_in_task)
