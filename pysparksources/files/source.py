"""pyfile's readers, in the order the engine calls them.

Driver (one long-lived process per query run): getDefaultReadLimit -> initialOffset ->
prepareForTriggerAvailableNow (AvailableNow only) -> latestOffset(start, limit) -> partitions ->
commit(end) -> stop. Executors: read(partition), which needs nothing but the partition.

The offset is ``{"logOffset": n}``, a batch id of the source's own log (see source_log): the
files of batch n are written to that log inside latestOffset, before Spark writes the offset to
its WAL, so a batch replayed after a crash holds exactly the same files, as in Spark's
FileStreamSource.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxBytes,
    ReadMaxFiles,
    SupportsTriggerAvailableNow,
)

from pysparksources._offsets import canonical_offset
from pysparksources._options import OptionError
from pysparksources.files.admission import Admission
from pysparksources.files.clean import SourceCleaner
from pysparksources.files.filesystem import FileLocation
from pysparksources.files.formats_read import read_split
from pysparksources.files.listing import FileEntry, list_files, modification_ms
from pysparksources.files.manifest import committed_files
from pysparksources.files.planning import FilePartition, ReadContext, plan_partitions
from pysparksources.files.seen import SeenFiles
from pysparksources.files.source_log import LogEntry, SourceLog, prune
from pysparksources.files.source_options import SourceConfig, parse_source_options

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

__all__ = ["FileBatchReader", "FileStreamReader", "default_schema"]

log = logging.getLogger(__name__)
Offset = dict[str, Any]
METADATA_DIR = "_spark_metadata"


def default_schema(options: dict[str, str]) -> str:
    """The schema when the user gives none: text has one; other formats need the user's."""
    fmt = {k.lower(): v for k, v in options.items()}.get("format", "parquet").strip().lower()
    if fmt == "text":
        return "value STRING"
    error = OptionError(
        "pyfile",
        "format",
        fmt,
        "a schema is required for this format: spark.readStream.format('pyfile')"
        ".schema('a INT, b STRING')... (pyfile does not infer schemas; only text has one)",
    )
    raise error.with_traceback(None) from None


def _config(options: dict[str, str], streaming: bool) -> SourceConfig:
    try:
        config = parse_source_options(options, streaming)
    except OptionError as error:
        raise error.with_traceback(None) from None
    _require_folder(config)
    return config


def _require_folder(config: SourceConfig) -> None:
    """Refuse a missing folder at query start, as Spark's file source does (a file is read alone).

    Reading a typo'd path as an empty stream would wait forever without a word. A glob may
    match nothing yet: that stays allowed, as in Spark.
    """
    fs = config.location.filesystem()
    if config.pattern is not None or fs.isdir(config.base) or fs.isfile(config.base):
        return
    error = OptionError(
        "pyfile",
        "path",
        config.location.url(config.base),
        "the folder (or file) does not exist: create it before the query starts, "
        "or give a glob pattern, which may match nothing yet",
    )
    raise error.with_traceback(None) from None


def _arrow_schema(schema: StructType, config: SourceConfig) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    target = to_arrow_schema(schema, timezone="UTC")
    if config.reader.format == "text":
        strings = [f for f in target if pa.types.is_string(f.type)]
        if not strings:
            raise OptionError(
                "pyfile", "format", "text", "the text format needs a STRING column (value)"
            ).with_traceback(None)
    return target


# -- listing: plain folders or a sink's _spark_metadata log ----------------------------
def _list_source(config: SourceConfig) -> list[FileEntry]:
    fs: Any = config.location.filesystem()
    if config.pattern is None:
        committed = _committed_files(config, fs)
        if committed is not None:
            return committed
    return list_files(fs, config.base, config.pattern, config.path_glob_filter)


def _committed_files(config: SourceConfig, fs: Any) -> list[FileEntry] | None:
    """Files a file sink committed, when the folder holds its ``_spark_metadata`` log."""
    metadata = config.base.rstrip("/") + "/" + METADATA_DIR
    if not fs.isdir(metadata):
        return None
    # The location carries the fs.* storage options: a remote store's manifest needs them.
    folder = FileLocation(config.location.protocol, config.base, config.location.storage_options)
    paths = committed_files(folder)
    if paths is None:
        return None
    entries = []
    for url in paths:
        path = _manifest_path(url)
        try:
            info = fs.info(path)
        except FileNotFoundError:
            continue
        entries.append(FileEntry(path, modification_ms(info), int(info.get("size") or 0)))
    return entries


def _manifest_path(url: str) -> str:
    """A manifest's full URI (``file:/x``, ``file:///x``, ``abfs://c@a/x``) as an fsspec path."""
    from fsspec.core import split_protocol, strip_protocol

    if url.startswith("file:"):
        return "/" + url[len("file:") :].lstrip("/")
    return str(strip_protocol(url)) if split_protocol(url)[0] else url


def _check_offset(offset: Any) -> int:
    if not isinstance(offset, dict) or set(offset) != {"logOffset"}:
        raise ValueError(
            f"pyfile: offset {offset!r} in the checkpoint was not written by pyfile's source; "
            "start from a new checkpointLocation"
        )
    return int(offset["logOffset"])


@dataclass
class _DriverState:
    """Driver-only state built at the first engine call (never pickled to executors)."""

    log: SourceLog
    seen: SeenFiles
    admission: Admission
    cleaner: SourceCleaner
    current: int
    history: list[LogEntry] = field(default_factory=list)
    frozen: list[FileEntry] | None = None
    cleaned_through: int | None = None


class FileStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):  # type: ignore[misc]
    """Spark's FileStreamSource over fsspec: admission control, AvailableNow, exactly once."""

    def __init__(self, options: dict[str, str], schema: StructType) -> None:
        self._config = _config(options, streaming=True)
        self._target = _arrow_schema(schema, self._config)
        self._state: _DriverState | None = None

    def __getstate__(self) -> dict[str, Any]:
        # Executors need only the partition; never ship the lease thread or the seen map.
        state = dict(self.__dict__)
        state["_state"] = None
        return state

    def _driver(self) -> _DriverState:
        if self._state is not None:
            return self._state
        cfg = self._config
        assert cfg.log_location is not None
        source_log = SourceLog(cfg.log_location)
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
        cleaner = SourceCleaner(cfg.clean_source, cfg.location, cfg.archive_location)
        self._state = _DriverState(source_log, seen, admission, cleaner, current, history)
        return self._state

    # -- engine calls, in order --------------------------------------------------------
    def getDefaultReadLimit(self) -> ReadLimit:
        if self._config.max_files_per_trigger is not None:
            return ReadMaxFiles(self._config.max_files_per_trigger)
        if self._config.max_bytes_per_trigger is not None:
            return ReadMaxBytes(self._config.max_bytes_per_trigger)
        return ReadAllAvailable()

    def initialOffset(self) -> Offset:
        return canonical_offset({"logOffset": -1})

    def prepareForTriggerAvailableNow(self) -> None:
        # One listing now; the batches of this run only take files from it.
        state = self._driver()
        state.frozen = _list_source(self._config)
        state.admission.cache_enabled = False
        state.admission.clear_cache()

    def _new_files(self) -> list[FileEntry]:
        state = self._driver()
        files = state.frozen if state.frozen is not None else _list_source(self._config)
        seen = state.seen
        return [f for f in files if seen.is_new(f.path, f.timestamp)]

    def latestOffset(self, start: Offset, limit: ReadLimit) -> Offset:
        state = self._driver()
        position = _check_offset(start)
        if position > state.current:
            raise RuntimeError(
                f"pyfile: the checkpoint is at source batch {position} but the source log at "
                f"{state.log.location.url()} ends at {state.current}; sourceLogLocation must "
                "stay the same for the life of a checkpoint"
            )
        files = state.admission.select(limit, self._new_files)
        if files:
            batch_id = state.current + 1
            entries = [LogEntry(f.path, f.timestamp, batch_id, f.size) for f in files]
            if state.log.is_compaction_batch(batch_id):
                # Spark's engine asks for batch n+1 only once batch n (``position``) committed.
                state.history = prune(state.history, self._purge_point(files), position)
            # Durable before Spark writes this offset to its WAL: a replay reads these files.
            state.log.add(batch_id, entries, state.history)
            state.history.extend(entries)
            for f in files:
                state.seen.add(f.path, f.timestamp)
            state.seen.purge()
            state.current = batch_id
        return canonical_offset({"logOffset": state.current})

    def _purge_point(self, files: list[FileEntry]) -> int | None:
        """Where the seen-files map purges once ``files`` are added (None: it never does)."""
        max_age = self._config.effective_max_file_age_ms
        if max_age is None:
            return None
        newest = max([self._driver().seen.latest_timestamp, *(f.timestamp for f in files)])
        return newest - max_age

    def reportLatestOffset(self) -> Offset | None:
        if self._state is None:
            return None
        return canonical_offset({"logOffset": self._state.current})

    def partitions(self, start: Offset, end: Offset) -> list[InputPartition]:
        state = self._driver()
        first, last = _check_offset(start) + 1, _check_offset(end)
        entries = state.log.get_range(first, last)
        cfg = self._config
        context = ReadContext(
            cfg.location,
            self._target,
            cfg.reader,
            cfg.log_location if cfg.reader.ignore_corrupt_files else None,
            last,
        )
        files = [(e.path, e.size if e.size >= 0 else _size_of(cfg, e.path)) for e in entries]
        return list(
            plan_partitions(
                files,
                cfg.base,
                context,
                cfg.max_partition_bytes,
                cfg.open_cost_bytes,
                with_partition_values=not cfg.recursive_file_lookup,
            )
        )

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, FilePartition)
        return read_partition(partition)

    def commit(self, end: Offset) -> None:
        state = self._driver()
        last = _check_offset(end)
        if self._config.clean_source == "off":
            return
        first = (state.cleaned_through if state.cleaned_through is not None else -1) + 1
        if state.cleaned_through is None:
            # After a restart only the batch ending here is known to be unclean.
            first = last
        if last >= first >= 0:
            try:
                state.cleaner.submit(e.path for e in state.log.get_range(first, last))
            except Exception as error:  # cleaning is best effort, as in Spark
                log.warning("pyfile: cleanSource skipped batches %d..%d: %s", first, last, error)
        state.cleaned_through = last

    def stop(self) -> None:
        if self._state is not None:
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
            name = hashlib.sha1(path.encode("utf-8")).hexdigest()
            target = f"{context.corrupt_log.path.rstrip('/')}/corrupt/{name}.json"
            record = {"batchId": context.batch_id, "path": path, "problem": problem}
            fs.makedirs(target.rsplit("/", 1)[0], exist_ok=True)
            fs.pipe_file(target, json.dumps(record).encode("utf-8"))
        except Exception as error:  # the record is a convenience; the log line stays
            log.warning("pyfile: could not record corrupt file %s: %s", path, error)

    for split in partition.splits:
        yield from read_split(
            context.location, split, context.target, context.reader, record_corrupt
        )


class FileBatchReader(DataSourceReader):  # type: ignore[misc]
    """``spark.read.format("pyfile")``: every file there now, planned like a stream batch."""

    def __init__(self, options: dict[str, str], schema: StructType) -> None:
        self._config = _config(options, streaming=False)
        self._target = _arrow_schema(schema, self._config)

    def partitions(self) -> list[InputPartition]:
        cfg = self._config
        files = sorted(_list_source(cfg), key=lambda f: f.path)
        context = ReadContext(cfg.location, self._target, cfg.reader)
        planned = plan_partitions(
            [(f.path, f.size) for f in files],
            cfg.base,
            context,
            cfg.max_partition_bytes,
            cfg.open_cost_bytes,
            with_partition_values=not cfg.recursive_file_lookup,
        )
        # No files: one partition reading nothing, so the frame is empty, as Spark's is (the
        # engine fails with a bare AssertionError on an empty partition list).
        return list(planned) or [FilePartition(0, (), context)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, FilePartition)
        return read_partition(partition)


def describe(location: FileLocation) -> str:
    """A location for messages: the URL, never its storage options."""
    return location.url()
