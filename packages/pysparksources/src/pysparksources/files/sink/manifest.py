"""The ``_spark_metadata`` manifest: the log that makes a file sink's output exactly once.

Spark's FileStreamSink writes one log file per micro-batch into ``<output>/_spark_metadata/``
and Spark's readers of the output folder (``spark.read.parquet``, the file stream source, and
pyfile's source) read only the files listed there, so files of failed tasks and of batches
that never committed stay invisible. This module writes and reads that log in Spark's format:

- ``<batchId>``: the line ``v1``, then one JSON object per file, keys in this order:
  ``{"path","size","isDir","modificationTime","blockReplication","blockSize","action"}``;
  ``path`` is a full, percent-encoded URI (``file:///out%20dir/part-...``) and ``action`` is
  ``"add"`` (Spark also understands ``"delete"``).
- ``<batchId>.compact``: every ``compactInterval`` batches (when ``(batchId + 1) % interval
  == 0``), the same format holding every file of all batches so far, so a reader opens one
  compact file plus at most ``interval - 1`` deltas however long the history grows.
- A batch file is created atomically and never overwritten: a second writer of the same
  batch id fails instead of replacing the first's list (``filesystem.create_exclusive``).
- As in Spark, files superseded by a compact file are deleted once the last
  ``minBatchesToRetain`` batches stay readable and the files are ``cleanupDelay`` old
  (:class:`ManifestRetention`).
"""

from __future__ import annotations

import json
import logging
import time
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from pysparksources._core.checkpoint import log_number
from pysparksources.errors import CheckpointError
from pysparksources.files import NAME
from pysparksources.files.config import SINK_COMPACT_INTERVAL, ManifestRetention
from pysparksources.files.storage.filesystem import FileLocation, create_exclusive, resolve
from pysparksources.files.storage.folder_listing import modification_ms

__all__ = [
    "METADATA_DIR",
    "CommittedFiles",
    "ManifestLog",
    "SinkFile",
    "committed_files",
    "file_uri",
    "uri_to_url",
]

log = logging.getLogger(__name__)
METADATA_DIR = "_spark_metadata"
VERSION = "v1"
# What Hadoop's local filesystem reports; informational only for every reader.
BLOCK_SIZE = 32 * 1024 * 1024
_ACTIONS = ("add", "delete")


def _long(value: Any) -> bool:
    """Whether ``value`` is a JSON integer that fits Spark's long."""
    return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63


@dataclass(frozen=True)
class SinkFile:
    """One manifest line: a file the sink added (or, from other writers, deleted)."""

    path: str
    size: int
    modification_time: int
    action: str = "add"
    is_dir: bool = False

    def to_json(self) -> str:
        return json.dumps(
            {
                "path": self.path,
                "size": self.size,
                "isDir": self.is_dir,
                "modificationTime": self.modification_time,
                "blockReplication": 1,
                "blockSize": BLOCK_SIZE,
                "action": self.action,
            },
            separators=(",", ":"),
            ensure_ascii=False,
        )


def _sink_file(item: Any) -> SinkFile | str:
    """One parsed line as a :class:`SinkFile`, or what in it is not as Spark writes it."""
    if not isinstance(item, dict):
        return "not a JSON object"
    path: Any = item.get("path")
    is_dir = item.get("isDir", False)
    size, modified = item.get("size", 0), item.get("modificationTime", 0)
    action = item.get("action", "add")
    problems = [
        name
        for name, good in (
            ("path", isinstance(path, str) and path != ""),
            ("size", _long(size) and size >= 0),
            ("modificationTime", _long(modified)),
            ("action", action in _ACTIONS),
            ("isDir", isinstance(is_dir, bool)),
        )
        if not good
    ]
    if problems:
        return f"its {', '.join(problems)} not as Spark writes them"
    return SinkFile(path, size, modified, action, is_dir)


def parse_manifest(data: bytes, where: str) -> list[SinkFile]:
    """The entries of one manifest file; a :class:`CheckpointError` naming ``where`` if damaged."""
    try:
        lines = data.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        raise CheckpointError(NAME, f"file sink log {where} is not UTF-8 text") from None
    if lines[0].strip() != VERSION:
        raise CheckpointError(
            NAME, f"{where} is not a {VERSION} file sink log (first line {lines[0][:20]!r})"
        )
    files = []
    for number, line in enumerate(lines[1:], start=2):
        if line.strip():
            try:
                entry = _sink_file(json.loads(line))
            except ValueError as error:
                entry = str(error)
            except RecursionError:
                entry = "nested too deeply"
            if isinstance(entry, SinkFile):
                files.append(entry)
            else:
                raise CheckpointError(
                    NAME,
                    f"file sink log {where}, line {number}, is not a file entry "
                    '{"path": ..., "size": ..., "modificationTime": ..., "action": ...} '
                    f"({entry[:100]}); it was edited or damaged",
                )
    return files


# -- URIs: Spark stores Hadoop Path.toUri.toString, percent-encoding what a URI may not hold ----
_URI_SAFE = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    "-_.!~*'()"  # unreserved
    ",;:$&+="  # punctuation legal in a path
    "/@"
)


def _encode_path(path: str) -> str:
    """Quote a path the way ``java.net.URI``'s multi-argument constructors do.

    ASCII characters outside the legal set become ``%XX``; other non-ASCII characters stay,
    except spaces and controls (``URI.toString`` keeps e.g. ``é`` as is).
    """
    out = []
    for ch in path:
        if ch in _URI_SAFE:
            out.append(ch)
        elif ord(ch) < 128 or unicodedata.category(ch) in ("Zs", "Zl", "Zp", "Cc"):
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8")))
        else:
            out.append(ch)
    return "".join(out)


def file_uri(base_url: str, relative: str) -> str:
    """The manifest ``path`` of ``relative`` (a path under the output folder).

    ``base_url`` is ``file:///abs/path`` for local folders, else the URL the user gave
    (``abfs://container@account.dfs.core.windows.net/out``), so a JVM reader with the matching
    Hadoop filesystem can open the same URI.
    """
    scheme, sep, rest = base_url.partition("://")
    if not sep:
        return _encode_path(base_url.rstrip("/") + "/" + relative)
    authority, slash, path = rest.partition("/")
    full = (slash + path).rstrip("/") + "/" + relative
    return f"{scheme}://{authority}{_encode_path(full)}"


def uri_to_url(uri: str) -> str:
    """A manifest URI as an fsspec URL: percent-decoded, ``file:/x`` spelled ``file:///x``."""
    decoded = unquote(uri)
    if decoded.startswith("file:") and not decoded.startswith("file:///"):
        return "file:///" + decoded[len("file:") :].lstrip("/")
    return decoded


# -- the log ------------------------------------------------------------------------------
class ManifestLog:
    """``<output>/_spark_metadata`` on any fsspec filesystem (driver side, plus cheap task checks).

    A commit reads only what it needs: two or three existence checks, and on a compaction batch
    the previous compact file and the deltas after it, by name. The folder is listed only to
    find the latest batch when those checks cannot tell (the first batch, a manifest written
    with another compact interval) and, once every compact interval, to delete superseded files.

    Parameters
    ----------
    metadata:
        The ``_spark_metadata`` folder.
    compact_interval:
        Batches ``b`` with ``(b + 1) % compact_interval == 0`` are written as ``b.compact``.
    retention:
        When superseded files are deleted (None: never; see
        :class:`~pysparksources.files.config.ManifestRetention`).
    """

    def __init__(
        self,
        metadata: FileLocation,
        compact_interval: int = SINK_COMPACT_INTERVAL,
        retention: ManifestRetention | None = None,
    ) -> None:
        self.metadata = metadata
        self.compact_interval = compact_interval
        self.retention = retention
        self._fs: Any = metadata.filesystem()

    def _path(self, batch_id: int, compact: bool = False) -> str:
        return f"{self.metadata.path}/{batch_id}{'.compact' if compact else ''}"

    def exists(self) -> bool:
        return bool(self._fs.isdir(self.metadata.path))

    def batches(self) -> dict[int, bool]:
        """Batch id -> whether its file is a compact file, from one listing."""
        return {b: c for b, (c, _) in self._listing().items()}

    def _listing(self) -> dict[int, tuple[bool, dict[str, Any]]]:
        """Batch id -> (is compact, fsspec info) for every log file present."""
        # fsspec caches listings per filesystem instance (adlfs, s3fs): never trust one here.
        self._fs.invalidate_cache(self.metadata.path)
        try:
            infos = self._fs.ls(self.metadata.path, detail=True)
        except FileNotFoundError:
            return {}
        found: dict[int, tuple[bool, dict[str, Any]]] = {}
        for info in infos:
            base = str(info["name"]).rstrip("/").rsplit("/", 1)[-1]
            stem, dot, suffix = base.partition(".")
            batch = log_number(stem)
            if batch is None or (dot and suffix != "compact"):
                continue
            if batch not in found or dot:
                found[batch] = (bool(dot), info)
        return found

    def latest_batch_id(self) -> int | None:
        batches = self.batches()
        return max(batches) if batches else None

    def _exists(self, path: str) -> bool:
        return bool(self._fs.exists(path))

    def is_committed(self, batch_id: int) -> bool:
        """Whether ``batch_id`` has a log file (existence checks by name, no listing)."""
        self._fs.invalidate_cache(self.metadata.path)
        expected = self.is_compaction_batch(batch_id)
        # The other name only exists in a log Spark wrote with another compact interval.
        return self._exists(self._path(batch_id, expected)) or self._exists(
            self._path(batch_id, not expected)
        )

    def is_replay(self, batch_id: int) -> bool:
        """Whether ``batch_id`` is not above the latest committed batch (Spark's replay rule).

        Spark's engine commits batches in order, so the latest is ``batch_id`` (a replay) or
        ``batch_id - 1``: two lookups by name answer it. Anything else (the first batch, a
        checkpoint older than the output) is settled by one listing.
        """
        if self.is_committed(batch_id):
            return True
        if batch_id > 0 and self.is_committed(batch_id - 1):
            return False
        latest = self.latest_batch_id()
        return latest is not None and batch_id <= latest

    def is_compaction_batch(self, batch_id: int) -> bool:
        return (batch_id + 1) % self.compact_interval == 0

    def read_batch(self, batch_id: int, compact: bool) -> list[SinkFile]:
        where = self.metadata.url(self._path(batch_id, compact))
        return parse_manifest(self._fs.cat_file(self._path(batch_id, compact)), where)

    def all_files(self) -> list[SinkFile]:
        """Files added and not deleted: the latest compact file, then the deltas after it."""
        return list(CommittedFiles(self).refresh().values())

    def _before_compaction(self, batch_id: int) -> list[SinkFile]:
        """Every live file before compaction batch ``batch_id``, read by name as Spark does.

        That is the previous compact file plus the deltas after it; if one is missing (a log
        written with another interval) the latest state is rebuilt from a listing instead.
        """
        current: dict[str, SinkFile] = {}
        for earlier in range(max(0, batch_id - self.compact_interval), batch_id):
            try:
                entries = self.read_batch(earlier, self.is_compaction_batch(earlier))
            except FileNotFoundError:
                return self.all_files()
            _apply(current, entries)
        return list(current.values())

    def add(self, batch_id: int, files: Iterable[SinkFile]) -> None:
        """Write ``batch_id``'s log file once; raise FileExistsError if it already exists."""
        entries = list(files)
        compact = self.is_compaction_batch(batch_id)
        if compact and batch_id > 0:
            entries = [*self._retained(self._before_compaction(batch_id)), *entries]
        body = "\n".join([VERSION, *(e.to_json() for e in entries)])
        create_exclusive(self.metadata, self._path(batch_id, compact), body.encode("utf-8"))
        self.delete_expired(batch_id)

    # -- retention ---------------------------------------------------------------------------
    def _retained(self, entries: list[SinkFile], now_ms: int | None = None) -> list[SinkFile]:
        """Spark's ``retention``: a compaction leaves out earlier batches' entries older than
        the TTL (by modification time), so readers stop seeing those files; the batch being
        committed keeps all of its own."""
        ttl = None if self.retention is None else self.retention.output_ttl_ms
        if ttl is None:
            return entries
        now = int(time.time() * 1000) if now_ms is None else now_ms
        return [entry for entry in entries if now - entry.modification_time <= ttl]

    def retention_floor(self, batch_id: int) -> int | None:
        """Files of batches below this id may go once ``batch_id`` is committed (None: none).

        Spark keeps the last ``min_batches`` batches readable: the floor is the compact file
        covering batch ``batch_id + 1 - min_batches``; everything before it is superseded.
        """
        if self.retention is None or not self.retention.enabled:
            return None
        first_kept = batch_id + 1 - self.retention.min_batches
        if first_kept < self.compact_interval:
            return None
        return first_kept - first_kept % self.compact_interval - 1

    def delete_expired(self, batch_id: int, now_ms: int | None = None) -> list[int]:
        """Delete superseded files once old enough; returns the batch ids deleted.

        Runs only when the floor moves (once every compact interval), with one listing:
        files held back by the delay go at the next move. Failures are logged, never raised:
        a leftover file only costs readers nothing (they start at the latest compact file).
        """
        floor = self.retention_floor(batch_id)
        if floor is None or floor == self.retention_floor(batch_id - 1):
            return []
        assert self.retention is not None
        expired = (now_ms if now_ms is not None else int(time.time() * 1000)) - (
            self.retention.cleanup_delay_ms
        )
        deleted: list[int] = []
        try:
            listing = self._listing()
        except Exception as error:  # the batch is committed; the next floor move retries
            log.warning(
                "%s: could not list %s to delete superseded files (%s)",
                NAME,
                self.metadata.url(),
                type(error).__name__,
            )
            return deleted
        for batch, (compact, info) in sorted(listing.items()):
            if batch >= floor or modification_ms(info) > expired:
                continue
            try:
                self._fs.rm_file(self._path(batch, compact))
                deleted.append(batch)
            except FileNotFoundError:
                pass
            except Exception as error:
                log.warning(
                    "%s: could not delete superseded manifest file %s (%s)",
                    NAME,
                    self.metadata.url(self._path(batch, compact)),
                    type(error).__name__,
                )
        return deleted


def _apply(current: dict[str, SinkFile], entries: Iterable[SinkFile]) -> None:
    for entry in entries:
        if entry.action == "delete":
            current.pop(entry.path, None)
        else:
            current[entry.path] = entry


class CommittedFiles:
    """A reader's view of a sink's manifest, re-read only as far as it changed.

    Manifest files never change once written, so each is parsed once: a trigger that finds
    the same files costs one listing; new deltas are applied on top; a new compact file
    replaces the view. Sizes and modification times come from the entries (no per-file
    requests). A file deleted by the writer's retention between the listing and the read is
    handled as Spark does: list again, a newer compact file holds its entries.
    """

    def __init__(self, manifest: ManifestLog) -> None:
        self.manifest = manifest
        self.generation = 0
        self._base: int | None = None
        self._seen: set[int] = set()
        self._current: dict[str, SinkFile] = {}

    def refresh(self) -> dict[str, SinkFile]:
        """The live files (manifest URI -> entry); ``generation`` grows when they change."""
        for attempt in range(3):
            try:
                self._refresh()
                break
            except FileNotFoundError:
                if attempt == 2:
                    raise
        return self._current

    def _refresh(self) -> None:
        batches = self.manifest.batches()
        if not batches:
            if self._base is not None or self._seen:
                self._reset(None)
            return
        compacts = [b for b, is_compact in batches.items() if is_compact]
        base = max(compacts) if compacts else None
        if base is None and 0 not in batches:
            log.warning(
                "%s: %s has no batch 0 and no compact file", NAME, self.manifest.metadata.url()
            )
        if base != self._base:
            self._reset(base)
            if base is not None:
                _apply(self._current, self.manifest.read_batch(base, True))
        after = sorted(b for b in batches if (base is None or b > base) and b not in self._seen)
        if not after:
            return
        for batch in after:
            _apply(self._current, self.manifest.read_batch(batch, batches[batch]))
            self._seen.add(batch)
        self.generation += 1

    def _reset(self, base: int | None) -> None:
        self._base = base
        self._seen = set()
        self._current = {}
        self.generation += 1


def committed_files(
    location: str | FileLocation, storage_options: Mapping[str, Any] | None = None
) -> list[str] | None:
    """The files a file sink committed under ``location``, or None if it has no manifest.

    This is how a reader honours a FileStreamSink's output (Spark's or pyfile's): only files
    listed in ``<location>/_spark_metadata`` belong to committed batches; anything else in
    the folder (files of failed tasks, of a batch whose commit never happened) must be
    ignored.

    Parameters
    ----------
    location:
        The output folder: a URL or local path (with ``storage_options`` for remote stores),
        or a :class:`FileLocation` that already carries them.
    storage_options:
        fsspec storage options, used only when ``location`` is a string.

    Returns
    -------
    list of str or None
        None when there is no ``_spark_metadata`` folder (read the folder as plain files).
        Otherwise the committed files as fsspec URLs (``file:///out/a=1/part-...``,
        ``abfs://container/out/part-...``): percent-encoding undone, so
        ``fsspec.core.url_to_fs(url)`` opens them; empty when no batch committed yet.
        Deleted entries are dropped, directories are left out, and order follows the log.
    """
    if isinstance(location, FileLocation):
        base = location
    else:
        base = resolve(location, dict(storage_options or {}))
    manifest = ManifestLog(base.child(METADATA_DIR))
    if not manifest.exists():
        return None
    return [uri_to_url(entry.path) for entry in manifest.all_files() if not entry.is_dir]
