"""pyfile's readers, in the order the engine calls them.

The data source parses the options and builds ``Reader(config, schema)`` (see
``_core.datasource``); the constructor refuses a missing folder and a schema Spark's file source
refuses. Driver (one long-lived process per query run): getDefaultReadLimit -> initialOffset ->
prepareForTriggerAvailableNow (AvailableNow only) -> latestOffset(start, limit) -> partitions ->
commit(end) -> stop. Executors: read(partition), which needs nothing but the partition. Spark 4.0
and 4.1 call ``latestOffset()`` alone: ``EngineCalls`` supplies the start and limit there.

The offset is ``{"logId": id, "logOffset": n}`` (``offsets.py``): n is a batch id of the
source's own log (see source_log), id names that log. The files of batch n are written to the
log inside latestOffset, before Spark writes the offset to its WAL, so a batch replayed after a
crash holds exactly the same files, as in Spark's FileStreamSource. The id lets the source
refuse a checkpoint written against another log; ``{"logOffset": -1}`` (no id) is the initial
offset of a fresh checkpoint, which is refused when the log already belongs to one.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader, InputPartition

from pysparksources._core.arrow import spark_arrow_schema
from pysparksources._core.compat import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxBytes,
    ReadMaxFiles,
    SupportsTriggerAvailableNow,
)
from pysparksources._core.datasource import read_planned
from pysparksources._core.engine_calls import EngineCalls
from pysparksources._redact import scrubbed
from pysparksources.errors import CheckpointError, OptionError, SchemaError
from pysparksources.files import NAME
from pysparksources.files.config import ReaderOptions, SourceConfig
from pysparksources.files.formats import format_named, read_split
from pysparksources.files.offsets import LogOffset, LogReport
from pysparksources.files.planning import FilePartition, ReadContext, plan_partitions
from pysparksources.files.schema.evolution import evolution_of, warn_if_new_columns
from pysparksources.files.schema.rescue import read_evolving
from pysparksources.files.sink.manifest import committed_files
from pysparksources.files.source.admission import Admission
from pysparksources.files.source.clean_source import SourceCleaner
from pysparksources.files.source.file_index import (
    SourceLister,
    reads_partition_values,
    require_folder,
)
from pysparksources.files.source.notifications.discovery import NotificationDiscovery
from pysparksources.files.source.seen_files import SeenFiles
from pysparksources.files.source.source_log import LogEntry, SourceLog, prune
from pysparksources.files.storage.filesystem import credentials_kept_out, exclusive_create_problem
from pysparksources.files.storage.folder_listing import FileEntry
from pysparksources.files.storage.safe_paths import below

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

__all__ = [
    "FileBatchReader",
    "FileStreamReader",
    "SourceLister",
    "committed_files",
    "reads_partition_values",
    "require_folder",
]

log = logging.getLogger(__name__)
Offset = dict[str, Any]  # as Spark passes and takes offsets: offsets.py's, encoded


def _arrow_schema(schema: StructType, config: SourceConfig) -> pa.Schema:
    fmt = format_named(config.reader.format)
    _check_names(schema)
    target = spark_arrow_schema(schema)
    fmt.check_read_schema(schema, target)
    if fmt.parse_modes:
        _check_corrupt_column(schema, config.reader)
    return target


def _check_names(schema: StructType) -> None:
    """Refuse at query start what Spark's file source refuses when the query is defined."""
    names: dict[str, str] = {}
    for name in schema.names:
        if name.lower() in names:
            raise SchemaError(
                NAME,
                f"the schema's column name {name!r} appears twice ({names[name.lower()]!r} and "
                f"{name!r}; compared case-insensitively, as Spark does by default): rename one",
            )
        names[name.lower()] = name


def _check_corrupt_column(schema: StructType, reader: ReaderOptions) -> None:
    """Spark's rule: the column that takes malformed records' text is a nullable STRING."""
    from pyspark.sql.types import StringType

    if reader.corrupt_column not in schema.names:
        return
    column = schema[reader.corrupt_column]
    if not isinstance(column.dataType, StringType) or not column.nullable:
        raise SchemaError(
            NAME,
            f"the schema's column {column.name!r} takes malformed records' text "
            "(columnNameOfCorruptRecord), so it must be a nullable STRING, not "
            f"{column.dataType.simpleString()}{'' if column.nullable else ' NOT NULL'}",
        )


@dataclass
class _DriverState:
    """Driver-only state built at the first engine call (never pickled to executors)."""

    log: SourceLog
    seen: SeenFiles
    admission: Admission
    cleaner: SourceCleaner
    lister: SourceLister
    current: int
    log_id: str | None
    claimed: bool
    history: list[LogEntry] = field(default_factory=list)
    frozen: list[FileEntry] | None = None
    cleaned_through: int | None = None
    discovery: NotificationDiscovery | None = None  # discovery=notifications


class FileStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):  # type: ignore[misc]
    """Spark's FileStreamSource over fsspec: admission control, AvailableNow, exactly once."""

    def __init__(self, config: SourceConfig, schema: StructType) -> None:
        require_folder(config)
        self._config = config
        self._target = _arrow_schema(schema, config)
        self._evolution = evolution_of(config, schema, stream=True)
        self._state: _DriverState | None = None
        self._engine = EngineCalls()

    def __getstate__(self) -> dict[str, Any]:
        # Executors need only the partition; never ship the lease thread or the seen map.
        state = dict(self.__dict__)
        state["_state"] = None
        return state

    def _driver(self) -> _DriverState:
        if self._state is not None:
            return self._state
        cfg = self._config
        if cfg.log_location is None:  # the parser requires it for streams
            raise OptionError.required(NAME, "sourceLogLocation", "streams keep a source log")
        problem = exclusive_create_problem(cfg.log_location)
        if problem is not None:  # the log's batch files must never be replaced
            error = OptionError.invalid(NAME, "sourceLogLocation", problem, cfg.log_location.url())
            raise error.bare() from None
        source_log = SourceLog(
            cfg.log_location,
            compact_interval=cfg.log_compact_interval,
            cleanup_delay_ms=cfg.log_cleanup_delay_ms,
            deletion=cfg.log_deletion,
        )
        source_log.acquire(cfg.lease_timeout_s)
        history = source_log.restore()
        seen = SeenFiles(cfg.effective_max_file_age_ms, cfg.file_name_only)
        for entry in history:
            seen.add(entry.path, entry.timestamp)
        seen.purge()
        current = max((e.batch_id for e in history), default=-1)
        current = max(current, source_log.latest_batch_id())
        admission = Admission(
            seen,
            latest_first=cfg.latest_first,
            max_cached_files=cfg.max_cached_files,
            discard_ratio=cfg.discard_cached_input_ratio,
        )
        cleaner = SourceCleaner(cfg.clean_source, cfg.location, cfg.archive_location, cfg.base)
        log_id = source_log.identity()
        lister = SourceLister(cfg)
        discovery = None
        if cfg.notifications is not None:
            discovery = NotificationDiscovery(cfg, seen, history, lister)
            # Files waiting for a batch stay with the discovery, which holds their messages.
            admission.cache_enabled = False
        self._state = _DriverState(
            source_log,
            seen,
            admission,
            cleaner,
            lister,
            current,
            log_id,
            claimed=source_log.is_claimed(),
            history=history,
            cleaned_through=source_log.cleaned_through(),
            discovery=discovery,
        )
        return self._state

    # -- offsets and the log's identity ------------------------------------------------
    def _offset(self, batch_id: int) -> LogOffset:
        state = self._driver()
        return LogOffset(batch_id, None if batch_id < 0 else state.log_id)

    def _position(self, offset: Any) -> int:
        """The log batch id of an offset Spark passed, refusing one of another log."""
        state = self._driver()
        parsed = LogOffset.from_json(offset)
        position, log_id = parsed.batch_id, parsed.log_id
        url = state.log.location.url()
        if log_id is not None and log_id != state.log_id:
            holds = (
                f"holds log {state.log_id}"
                if state.log_id is not None
                else "holds no source log (empty or deleted)"
            )
            raise CheckpointError(
                NAME,
                f"the checkpoint's offsets belong to source log {log_id}, but "
                f"sourceLogLocation {url} {holds}. sourceLogLocation must stay the same for "
                "the life of a checkpoint: point it back at the log this checkpoint used, or "
                "start a new checkpoint with a new, empty sourceLogLocation.",
            )
        if position > state.current:
            raise CheckpointError(
                NAME,
                f"the checkpoint is at source batch {position} but the source log at "
                f"{url} ends at {state.current}; sourceLogLocation must stay the same for the "
                "life of a checkpoint",
            )
        if position >= 0:
            self._claim(position)
        return position

    def _claim(self, position: int) -> None:
        """An offset of this log is in a checkpoint: remember it (once), adopting old logs."""
        state = self._driver()
        if state.claimed:
            return
        # A log written before logs had ids, restarted from its checkpoint: adopt it.
        log_id = state.log_id if state.log_id is not None else self._create_identity()
        state.log.claim(log_id, position)
        state.claimed = True

    def _create_identity(self) -> str:
        state = self._driver()
        log_id = state.log_id = state.log.create_identity()
        if self._config.clean_source != "off" and state.current < 0:
            # A new log records from the start how far cleaning got. One without the record
            # (older, or run with cleanSource off) is cleaned from its next commit on.
            state.log.set_cleaned_through(-1)
            state.cleaned_through = -1
        return log_id

    def _refuse_used_log(self) -> None:
        """Spark passes the initial offset only to a fresh checkpoint: the log must be unused."""
        state = self._driver()
        used = state.claimed or (state.log_id is None and state.current >= 0)
        if not used:
            return  # empty, or batches written before a crash kept their offsets out of a WAL
        url = state.log.location.url()
        raise CheckpointError(
            NAME,
            f"sourceLogLocation {url} already holds the source log of another "
            f"checkpoint (batches 0..{state.current}, already read by a query), and this query "
            "starts from a fresh checkpoint: it would read every file of those batches again. "
            "Give this query a new, empty sourceLogLocation, or delete that folder to really "
            "start over (every file is then read again).",
        )

    # -- engine calls, in order --------------------------------------------------------
    def getDefaultReadLimit(self) -> ReadLimit:
        if self._config.max_files_per_trigger is not None:
            return ReadMaxFiles(self._config.max_files_per_trigger)
        if self._config.max_bytes_per_trigger is not None:
            return ReadMaxBytes(self._config.max_bytes_per_trigger)
        return ReadAllAvailable()

    def initialOffset(self) -> Offset:
        # The same for every run (Spark re-asks it for the start of batch 0): no log id here.
        return LogOffset(-1).to_dict()

    def prepareForTriggerAvailableNow(self) -> None:
        # One listing (or one drain of the queue) now; the batches of this run only take
        # files from it.
        state = self._driver()
        if state.discovery is not None:
            state.discovery.freeze()
        else:
            state.frozen = state.lister.files()
        state.admission.cache_enabled = False
        state.admission.clear_cache()

    def _new_files(self) -> list[FileEntry]:
        state = self._driver()
        if state.discovery is not None:
            return state.discovery.new_files()
        files = state.frozen if state.frozen is not None else state.lister.files()
        seen = state.seen
        return [f for f in files if seen.is_new(f.path, f.timestamp)]

    @credentials_kept_out("could not find new files")
    def latestOffset(self, start: Offset | None = None, limit: ReadLimit | None = None) -> Offset:
        start, limit = self._engine.arguments(
            start, limit, self.initialOffset, self.getDefaultReadLimit
        )
        state = self._driver()
        position = self._position(start)
        if position < 0:
            self._refuse_used_log()
        if state.discovery is not None:
            # Spark plans the batch after ``start`` only once ``start`` is in its commit log.
            state.discovery.committed(position)
        files = state.admission.select(limit, self._new_files)
        self._engine.capped(state.admission.left_over)
        if files:
            batch_id = state.current + 1
            entries = [LogEntry(f.path, f.timestamp, batch_id, f.size) for f in files]
            if state.log_id is None:
                self._create_identity()
            if state.log.is_compaction_batch(batch_id):
                # Spark's engine asks for batch n+1 only once batch n (``position``) committed;
                # batches cleanSource has not reached yet keep their entries too.
                keep_from = position
                if self._config.clean_source != "off" and state.cleaned_through is not None:
                    keep_from = min(position, state.cleaned_through + 1)
                state.history = prune(state.history, self._purge_point(files), keep_from)
            # Durable before Spark writes this offset to its WAL: a replay reads these files.
            state.log.add(batch_id, entries, state.history)
            state.history.extend(entries)
            for f in files:
                state.seen.add(f.path, f.timestamp)
            state.seen.purge()
            state.current = batch_id
            if state.discovery is not None:
                state.discovery.taken(files, batch_id)
        return self._offset(state.current).to_dict()

    def _purge_point(self, files: list[FileEntry]) -> int | None:
        """Where the seen-files map purges once ``files`` are added (None: it never does)."""
        max_age = self._config.effective_max_file_age_ms
        if max_age is None:
            return None
        newest = max([self._driver().seen.latest_timestamp, *(f.timestamp for f in files)])
        return newest - max_age

    def reportLatestOffset(self) -> Offset | None:
        """The latest offset, and with notifications what became of the queue's messages.

        Spark shows this only in the progress (``sources[].latestOffset``); it never enters the
        offset log. ``@notifications`` holds the counts of
        :meth:`NotificationDiscovery.counts` (:class:`LogReport`).
        """
        if self._state is None:
            return None
        discovery = self._state.discovery
        counts = None if discovery is None else discovery.counts()
        report: Offset = LogReport(self._offset(self._state.current), counts).to_dict()
        return report

    @credentials_kept_out("could not plan a batch")
    def partitions(self, start: Offset, end: Offset) -> list[InputPartition]:
        self._engine.planned(end)
        self._driver()
        # Spark plans a batch only after writing its end offset: that claims the log.
        first, last = self._position(start) + 1, self._position(end)
        entries = self._logged(first, last)
        cfg = self._config
        context = ReadContext(
            cfg.location,
            self._target,
            cfg.reader,
            cfg.log_location if cfg.reader.ignore_corrupt_files else None,
            last,
            self._evolution,
        )
        files = [(e.path, e.size if e.size >= 0 else _size_of(cfg, e.path)) for e in entries]
        return list(
            plan_partitions(
                files,
                cfg.base,
                context,
                cfg.max_partition_bytes,
                cfg.open_cost_bytes,
                with_partition_values=reads_partition_values(cfg),
            )
        )

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_planned(partition, FilePartition, read_partition)

    def commit(self, end: Offset) -> None:
        state = self._driver()
        last = self._position(end)
        if state.discovery is not None:
            state.discovery.committed(last)
        if self._config.clean_source == "off":
            return
        # Every log batch since the last cleaned one: a Spark batch may span several (a batch
        # written just before a crash joins the next one), and the log remembers across runs
        # how far cleaning got. A log written before that record existed starts here.
        done = state.cleaned_through
        first = last if done is None else done + 1
        if last >= first >= 0:
            try:
                paths = [e.path for e in self._logged(first, last)]
                state.cleaner.submit(paths, then=lambda: state.log.set_cleaned_through(last))
            except Exception as error:  # cleaning is best effort, as in Spark
                log.warning(
                    "%s: cleanSource skipped batches %d..%d: %s",
                    NAME,
                    first,
                    last,
                    scrubbed(str(error)),
                )
        state.cleaned_through = max(last, done if done is not None else -1)

    def _logged(self, first: int, last: int) -> list[LogEntry]:
        """The files of log batches ``first..last``, each checked to be under the source's
        folder: the log says what to read and what cleanSource deletes, and is read back."""
        entries = self._driver().log.get_range(first, last)
        cfg = self._config
        for entry in entries:
            if not below(entry.path, cfg.base):  # None (outside, or refused) or the root itself
                where = cfg.log_location
                raise CheckpointError(
                    NAME,
                    f"source log batch {entry.batch_id} in "
                    f"{where.url() if where else 'the source log'} lists "
                    f"{cfg.location.url(entry.path[:200])!r}, which is not a file below the "
                    f"source path {cfg.location.url()} (docs/pyfile-source.md, 'Paths that are "
                    "never read'): the log was edited, or written for another path; restore "
                    "it, or start with a new sourceLogLocation and checkpointLocation",
                ).bare()
        return entries

    def stop(self) -> None:
        self._engine.warn_if_cut_short(NAME, "maxFilesPerTrigger or maxBytesPerTrigger")
        if self._state is not None:
            if self._state.discovery is not None:
                self._state.discovery.close()
            self._state.cleaner.close()
            self._state.log.release()
            self._state = None


def _size_of(config: SourceConfig, path: str) -> int:
    try:
        return int(config.location.filesystem().info(path).get("size") or 0)
    except FileNotFoundError:
        return 0


def read_partition(partition: FilePartition) -> Iterator[pa.RecordBatch]:
    """Every split of a partition, one after another, as Spark-typed batches."""
    context = partition.context

    def record_corrupt(path: str, problem: str) -> None:
        if context.corrupt_log is None:
            return
        try:
            fs: Any = context.corrupt_log.filesystem()
            # Not a secret, only a stable name: the same file's record is replaced on replays
            # (records written by earlier releases used the same name).
            name = hashlib.sha1(path.encode("utf-8"), usedforsecurity=False).hexdigest()
            target = f"{context.corrupt_log.path.rstrip('/')}/corrupt/{name}.json"
            record = {
                "batchId": context.batch_id,
                "path": scrubbed(path),
                "problem": scrubbed(problem),
            }
            fs.makedirs(target.rsplit("/", 1)[0], exist_ok=True)
            fs.pipe_file(target, json.dumps(record).encode("utf-8"))
        except Exception as error:  # the record is a convenience; the log line stays
            log.warning(
                "%s: could not record corrupt file %s: %s",
                NAME,
                scrubbed(path),
                scrubbed(str(error)),
            )

    evolution = context.evolution
    fit = None
    if evolution is not None and not evolution.warns_new_columns:
        fit = functools.partial(read_evolving, evolution=evolution)
    for split in partition.splits:
        if evolution is not None and evolution.warns_new_columns and split.start == 0:
            url = context.location.url(split.path)
            warn_if_new_columns(evolution, split.path, url, context.target.names)
        yield from read_split(
            context.location, split, context.target, context.reader, record_corrupt, fit
        )


class FileBatchReader(DataSourceReader):  # type: ignore[misc]
    """``spark.read.format("pyfile")``: every file there now, planned like a stream batch."""

    def __init__(self, config: SourceConfig, schema: StructType) -> None:
        require_folder(config)
        self._config = config
        self._target = _arrow_schema(schema, config)
        self._evolution = evolution_of(config, schema)

    @credentials_kept_out("could not plan the read")
    def partitions(self) -> list[InputPartition]:
        cfg = self._config
        files = sorted(SourceLister(cfg).files(), key=lambda f: f.path)
        context = ReadContext(cfg.location, self._target, cfg.reader, evolution=self._evolution)
        # No files: no partitions; Spark then runs one task with its empty-plan placeholder,
        # which reads nothing (see read), so the frame is empty, as Spark's is.
        return list(
            plan_partitions(
                [(f.path, f.size) for f in files],
                cfg.base,
                context,
                cfg.max_partition_bytes,
                cfg.open_cost_bytes,
                with_partition_values=reads_partition_values(cfg),
            )
        )

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_planned(partition, FilePartition, read_partition)
