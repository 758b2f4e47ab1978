"""pyfile's writers, in the order the engine calls them.

Driver, query start: the data source parses the options and builds
``FileStreamWriter(config, schema, overwrite)``, which checks the columns against the format.
Executors, each task of batch N: ``write(record_batches)`` writes part files straight into
the output folder under unique names (``part-<partition>-b<N>-<uuid>.c<seq><suffix>``) and
returns their list. Driver, once per batch: ``commit(messages, N)`` appends the batch to
``_spark_metadata`` (see :mod:`manifest`); that single atomic file create is what makes the
batch visible to Spark's readers, so files of failed tasks or of a crashed run never are.
A batch id already in the manifest is a replay: tasks write nothing and commit deletes
whatever was written anyway. ``abort`` deletes the batch's files.

Batch writes (``df.write``) stage files under ``_temporary/<job>/`` (ignored by readers,
like every ``_`` name) and move them into place in ``commit``.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage

from pysparksources._core.arrow import spark_arrow_schema
from pysparksources._core.compat import DataSourceStreamArrowWriter
from pysparksources._core.worker_gc import freeze_imports
from pysparksources._redact import scrubbed
from pysparksources.errors import CheckpointError, OptionError
from pysparksources.files import NAME
from pysparksources.files.config import SinkConfig
from pysparksources.files.sink.manifest import METADATA_DIR, ManifestLog, SinkFile, file_uri
from pysparksources.files.sink.part_files import PartFile, check_schema, file_suffix
from pysparksources.files.storage.filesystem import credentials_kept_out
from pysparksources.files.storage.folder_listing import is_hidden
from pysparksources.files.storage.partition_folders import split_by_partition

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

__all__ = ["FileBatchWriter", "FileStreamWriter", "FilesWritten", "WrittenFile"]

log = logging.getLogger(__name__)
STAGING_DIR = "_temporary"


@dataclass(frozen=True)
class WrittenFile:
    """A complete part file, relative to the output folder."""

    relative: str
    size: int
    modification_time: int


@dataclass
class FilesWritten(WriterCommitMessage):  # type: ignore[misc]
    """What one task wrote; ``skipped`` when its batch was already committed."""

    batch_id: int | None
    files: list[WrittenFile] = field(default_factory=list)
    skipped: bool = False


def _files(messages: Iterable[WriterCommitMessage | None]) -> Iterator[WrittenFile]:
    for message in messages:
        if isinstance(message, FilesWritten):
            yield from message.files


def _checked_schema(config: SinkConfig, schema: StructType, overwrite: bool) -> pa.Schema:
    """The input's Arrow schema, once the sink can write it as asked (at query start)."""
    if overwrite:
        raise OptionError.invalid(
            NAME,
            "outputMode",
            f"{NAME} only appends: use outputMode('append') for streams and mode('append') for "
            "batch writes (Spark passed overwrite=True, which complete mode and "
            "mode('overwrite') do)",
        )
    arrow_schema = spark_arrow_schema(schema)
    check_schema(config, arrow_schema)
    return arrow_schema


# -- executors: one task writes its share of a batch --------------------------------------
class _TaskFiles:
    """The part files one task has open, one per partition folder, rolled at the row cap."""

    def __init__(self, config: SinkConfig, schema: pa.Schema, root: str, stem: str) -> None:
        self.config = config
        self.fs: Any = config.location.filesystem()
        self.schema = pa.schema([f for f in schema if f.name not in config.partition_by])
        self.root = root
        self.stem = stem
        self.suffix = file_suffix(config)
        self.open: dict[str, tuple[str, PartFile]] = {}
        self.done: list[tuple[str, PartFile]] = []
        self.sequence = 0

    def _relative(self, folder: str) -> str:
        name = f"{self.stem}.c{self.sequence:03d}{self.suffix}"
        self.sequence += 1
        return f"{folder}/{name}" if folder else name

    def _file(self, folder: str) -> PartFile:
        if folder not in self.open:
            relative = self._relative(folder)
            part = PartFile(self.config, self.fs, f"{self.root}/{relative}", self.schema)
            self.open[folder] = (relative, part)
        return self.open[folder][1]

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        if self.config.partition_by:
            for folder, rows in split_by_partition(batch, self.config.partition_by):
                self._write(folder, rows)
        else:
            self._write("", batch)

    def _write(self, folder: str, batch: pa.RecordBatch) -> None:
        limit = self.config.max_records_per_file
        while batch.num_rows:
            part = self._file(folder)
            room = limit - part.rows if limit else batch.num_rows
            part.write(batch.slice(0, room))
            batch = batch.slice(room)
            if limit and part.rows >= limit:
                self._finish(folder)

    def _finish(self, folder: str) -> None:
        relative, part = self.open.pop(folder)
        part.close()
        self.done.append((relative, part))

    def finish(self) -> list[WrittenFile]:
        """Close every file and report it with its size and time as storage sees them."""
        from pysparksources.files.storage.folder_listing import modification_ms

        for folder in list(self.open):
            self._finish(folder)
        written = []
        for relative, _ in self.done:
            info = self.fs.info(f"{self.root}/{relative}")
            written.append(WrittenFile(relative, int(info.get("size") or 0), modification_ms(info)))
        return written

    def delete_all(self) -> None:
        """Best-effort removal of everything this task wrote (it failed)."""
        paths = [f"{self.root}/{relative}" for relative, _ in self.done]
        for _, part in self.open.values():
            part.discard()
            paths.append(part.path)
        _delete(self.fs, paths)


def _delete(fs: Any, paths: Iterable[str]) -> None:
    for path in paths:
        try:
            fs.rm_file(path)
        except FileNotFoundError:
            pass
        except Exception as exc:  # cleanup must never hide the real outcome
            log.warning("%s: could not delete %s (%s)", NAME, scrubbed(path), type(exc).__name__)


def _untracked_files_of_batch(fs: Any, root: str, batch_id: int) -> list[str]:
    """Part files tagged with ``batch_id`` anywhere under ``root`` (Hive folders included)."""
    tag = f"-b{batch_id}-"
    try:
        found = fs.find(root)
    except FileNotFoundError:
        return []
    prefix = root.rstrip("/") + "/"
    leftovers = []
    for path in map(str, found):
        *folders, name = path.removeprefix(prefix).split("/")
        if name.startswith("part-") and tag in name and not any(map(is_hidden, folders)):
            leftovers.append(path)
    return leftovers


def _task_stem(batch_id: int | None) -> tuple[int, str]:
    from pyspark import TaskContext

    context = TaskContext.get()
    partition = context.partitionId() if context is not None else 0
    tag = f"-b{batch_id}" if batch_id is not None else ""
    return partition, f"part-{partition:05d}{tag}-{uuid.uuid4()}"


def _as_utc(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """The batch typed as ``schema``, whose timestamps are tagged UTC.

    Spark tags the timestamps it hands a Python writer with the session time zone (``Etc/UTC``,
    ``America/Los_Angeles``...). The values are UTC microseconds whatever the tag, so retagging
    is free; without it the parquet writer refuses every batch of a session not named "UTC".
    """
    if batch.schema.equals(schema):
        return batch
    return batch.cast(schema)


def _write_all(
    config: SinkConfig, schema: pa.Schema, root: str, stem: str, batches: Iterator[pa.RecordBatch]
) -> list[WrittenFile]:
    files = _TaskFiles(config, schema, root, stem)
    try:
        for batch in batches:
            files.write(_as_utc(batch, schema))
        return files.finish()
    except BaseException:
        files.delete_all()
        raise


# -- streaming ----------------------------------------------------------------------------
class FileStreamWriter(DataSourceStreamArrowWriter):  # type: ignore[misc]
    """Spark's FileStreamSink over fsspec and Arrow: exactly-once via ``_spark_metadata``."""

    @credentials_kept_out("the sink could not prepare its output folder")
    def __init__(self, config: SinkConfig, schema: StructType, overwrite: bool) -> None:
        self.config = config
        self.schema = _checked_schema(config, schema, overwrite)
        # Like Spark's sink: the log folder exists from the start, so readers honour it (and
        # ignore stray files) even before the first batch commits.
        self.config.location.filesystem().makedirs(self.config.metadata.path, exist_ok=True)

    def _manifest(self) -> ManifestLog:
        config = self.config
        return ManifestLog(config.metadata, config.compact_interval, config.retention)

    @credentials_kept_out("the sink could not write its files")
    def write(self, iterator: Iterator[pa.RecordBatch]) -> FilesWritten:
        from pyspark import TaskContext

        freeze_imports()
        context = TaskContext.get()
        raw = context.getLocalProperty("streaming.sql.batchId") if context else None
        batch_id = int(raw) if raw is not None else None
        if batch_id is not None and self._manifest().is_committed(batch_id):
            for _ in iterator:  # a replay of a committed batch: write nothing
                pass
            return FilesWritten(batch_id, skipped=True)
        _, stem = _task_stem(batch_id)
        files = _write_all(self.config, self.schema, self.config.location.path, stem, iterator)
        return FilesWritten(batch_id, files)

    @credentials_kept_out("the sink could not commit a batch")
    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        written = list(_files(messages))
        manifest = self._manifest()
        if manifest.is_replay(batchId):
            # Spark replays the last batch after a crash; its files are already listed.
            log.info("%s: batch %d is already in the manifest; skipping", NAME, batchId)
            self._delete(written)
            return
        entries = [
            SinkFile(file_uri(self.config.base_url, f.relative), f.size, f.modification_time)
            for f in written
        ]
        try:
            manifest.add(batchId, entries)
        except FileExistsError:
            raise CheckpointError(
                NAME,
                f"batch {batchId} of {self.config.base_url} was committed by another "
                "writer at the same time; two queries must not write to one output folder",
            ) from None

    @credentials_kept_out("the sink could not clean up an aborted batch")
    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Delete the batch's files, including those of tasks that finished after the failure.

        Spark passes only the messages of tasks done when the job failed; a task finishing a
        moment later leaves its part file unreported. The batch tag in the file names finds
        those too. A batch already in the manifest is a replay whose files are live: untouched.
        """
        self._delete(_files(messages))
        if self._manifest().is_committed(batchId):
            return
        fs: Any = self.config.location.filesystem()
        root = self.config.location.path
        _delete(fs, _untracked_files_of_batch(fs, root, batchId))

    def _delete(self, files: Iterable[WrittenFile]) -> None:
        root = self.config.location.path
        _delete(self.config.location.filesystem(), (f"{root}/{f.relative}" for f in files))


# -- batch --------------------------------------------------------------------------------
class FileBatchWriter(DataSourceArrowWriter):  # type: ignore[misc]
    """``df.write.format("pyfile")``: append files, visible all at once in ``commit``."""

    @credentials_kept_out("the sink could not look at its output folder")
    def __init__(self, config: SinkConfig, schema: StructType, overwrite: bool) -> None:
        self.config = config
        self.schema = _checked_schema(config, schema, overwrite)
        fs: Any = config.location.filesystem()
        if fs.isdir(config.metadata.path):
            raise OptionError.invalid(
                NAME,
                "path",
                f"this folder is a streaming sink's output (it has {METADATA_DIR}): files "
                "written by a batch job would be invisible to its readers; write elsewhere",
                config.base_url,
            )
        self.job = uuid.uuid4().hex

    @property
    def _staging(self) -> str:
        return f"{self.config.location.path}/{STAGING_DIR}/{self.job}"

    @credentials_kept_out("the sink could not write its files")
    def write(self, iterator: Iterator[pa.RecordBatch]) -> FilesWritten:
        freeze_imports()
        _, stem = _task_stem(None)
        files = _write_all(self.config, self.schema, self._staging, stem, iterator)
        return FilesWritten(None, files)

    @credentials_kept_out("the sink could not commit its files")
    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        fs: Any = self.config.location.filesystem()
        root = self.config.location.path
        for f in _files(messages):
            target = f"{root}/{f.relative}"
            fs.makedirs(target.rsplit("/", 1)[0], exist_ok=True)
            fs.mv(f"{self._staging}/{f.relative}", target)
        self._remove_staging(fs)

    @credentials_kept_out("the sink could not clean up an aborted write")
    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        self._remove_staging(self.config.location.filesystem())

    def _remove_staging(self, fs: Any) -> None:
        try:
            if fs.exists(self._staging):
                fs.rm(self._staging, recursive=True)
            parent = f"{self.config.location.path}/{STAGING_DIR}"
            if fs.isdir(parent) and not fs.ls(parent):
                fs.rmdir(parent)
        except Exception as exc:
            log.warning(
                "%s: could not remove %s (%s)", NAME, scrubbed(self._staging), type(exc).__name__
            )
