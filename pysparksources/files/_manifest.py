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
  batch id fails instead of replacing the first's list.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import unicodedata
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from pysparksources.files._filesystem import FileLocation, resolve

__all__ = [
    "METADATA_DIR",
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

    @classmethod
    def from_json(cls, line: str) -> SinkFile:
        item = json.loads(line)
        return cls(
            path=str(item["path"]),
            size=int(item.get("size", 0)),
            modification_time=int(item.get("modificationTime", 0)),
            action=str(item.get("action", "add")),
            is_dir=bool(item.get("isDir", False)),
        )


def parse_manifest(data: bytes, where: str) -> list[SinkFile]:
    """The entries of one manifest file; a clear ValueError naming ``where`` if damaged."""
    try:
        lines = data.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        raise ValueError(f"pyfile: file sink log {where} is not UTF-8 text") from None
    if lines[0].strip() != VERSION:
        raise ValueError(
            f"pyfile: {where} is not a {VERSION} file sink log (first line {lines[0][:20]!r})"
        )
    files = []
    for number, line in enumerate(lines[1:], start=2):
        if line.strip():
            try:
                files.append(SinkFile.from_json(line))
            except (ValueError, TypeError, KeyError, AttributeError, OverflowError, RecursionError):
                raise ValueError(
                    f"pyfile: file sink log {where}, line {number}, is not a file entry "
                    '{"path": ..., "size": ..., "modificationTime": ..., "action": ...}; '
                    "it was edited or damaged"
                ) from None
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

    Parameters
    ----------
    metadata:
        The ``_spark_metadata`` folder.
    compact_interval:
        Batches ``b`` with ``(b + 1) % compact_interval == 0`` are written as ``b.compact``.
    """

    def __init__(self, metadata: FileLocation, compact_interval: int = 10) -> None:
        self.metadata = metadata
        self.compact_interval = compact_interval
        self._fs: Any = metadata.filesystem()

    def _path(self, batch_id: int, compact: bool = False) -> str:
        return f"{self.metadata.path}/{batch_id}{'.compact' if compact else ''}"

    def exists(self) -> bool:
        return bool(self._fs.isdir(self.metadata.path))

    def batches(self) -> dict[int, bool]:
        """Batch id -> whether its file is a compact file, from one listing."""
        # fsspec caches listings per filesystem instance (adlfs, s3fs): never trust one here.
        self._fs.invalidate_cache(self.metadata.path)
        try:
            names = self._fs.ls(self.metadata.path, detail=False)
        except FileNotFoundError:
            return {}
        found: dict[int, bool] = {}
        for name in names:
            base = str(name).rstrip("/").rsplit("/", 1)[-1]
            stem, dot, suffix = base.partition(".")
            if stem.isdigit() and (not dot or suffix == "compact"):
                found[int(stem)] = found.get(int(stem), False) or bool(dot)
        return found

    def latest_batch_id(self) -> int | None:
        batches = self.batches()
        return max(batches) if batches else None

    def is_committed(self, batch_id: int) -> bool:
        """Whether ``batch_id`` has a log file (two existence checks, no listing: for tasks)."""
        self._fs.invalidate_cache(self.metadata.path)
        return bool(
            self._fs.exists(self._path(batch_id))
            or self._fs.exists(self._path(batch_id, compact=True))
        )

    def is_compaction_batch(self, batch_id: int) -> bool:
        return (batch_id + 1) % self.compact_interval == 0

    def read_batch(self, batch_id: int, compact: bool) -> list[SinkFile]:
        where = self.metadata.url(self._path(batch_id, compact))
        return parse_manifest(self._fs.cat_file(self._path(batch_id, compact)), where)

    def all_files(self) -> list[SinkFile]:
        """Files added and not deleted: the latest compact file, then the deltas after it."""
        batches = self.batches()
        if not batches:
            return []
        compacts = [b for b, is_compact in batches.items() if is_compact]
        start = max(compacts) if compacts else min(batches)
        if not compacts and start != 0:
            log.warning("pyfile: %s has no batch 0 and no compact file", self.metadata.url())
        current: dict[str, SinkFile] = {}
        for batch_id in sorted(b for b in batches if b >= start):
            for entry in self.read_batch(batch_id, batches[batch_id]):
                if entry.action == "delete":
                    current.pop(entry.path, None)
                else:
                    current[entry.path] = entry
        return list(current.values())

    def add(self, batch_id: int, files: Iterable[SinkFile]) -> None:
        """Write ``batch_id``'s log file once; raise FileExistsError if it already exists."""
        entries = list(files)
        compact = self.is_compaction_batch(batch_id)
        if compact:
            earlier = self.all_files() if batch_id > 0 else []
            entries = [*earlier, *entries]
        body = "\n".join([VERSION, *(e.to_json() for e in entries)])
        self._fs.makedirs(self.metadata.path, exist_ok=True)
        self._create(self._path(batch_id, compact), body.encode("utf-8"))

    def _create(self, path: str, data: bytes) -> None:
        if self.metadata.protocol in ("file", "local"):
            _create_local(path, data)
            return
        # Object stores make a PUT visible whole; mode="create" adds if-none-match.
        if self._fs.exists(path):
            raise FileExistsError(path)
        self._fs.pipe_file(path, data, mode="create")


def _create_local(path: str, data: bytes) -> None:
    """Write a temporary file, then hard-link it into place: complete or absent, never replaced."""
    folder, name = os.path.split(path)
    temporary = os.path.join(folder, f".{name}.{uuid.uuid4().hex}.tmp")
    try:
        with open(temporary, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.link(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


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
