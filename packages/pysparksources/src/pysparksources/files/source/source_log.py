"""The source's durable log: which files each of its batches holds.

Spark keeps this log under the query's checkpoint, which Python sources never see, so pyfile
keeps it at ``sourceLogLocation`` on any fsspec filesystem, in the layout of Spark's
``FileStreamSourceLog``: one file per batch id (first line ``v1``, then one JSON object
``{"path", "timestamp", "batchId"}`` per file) and every ``sourceLogCompactInterval``-th batch
(10 by default, Spark's ``spark.sql.streaming.fileSource.log.compactInterval``) a
``<id>.compact`` file holding the entries that can still matter: start-up reads the newest
compact file plus the batch files after it, however long the stream has run.

The interval of a log that already has compact files is the one they were written with, found
as Spark finds it (:func:`derive_interval`): a new option value only applies to a new log, and
a differing one is logged as a warning. At each compaction the files of earlier batches are
deleted once their modification time is ``sourceLogCleanupDelay`` old (10 minutes by default,
Spark's ``spark.sql.streaming.fileSource.log.cleanupDelay``), so a reader that listed the log
just before a compaction can still open them; younger ones go at a later compaction.
``sourceLogDeletion=false`` keeps every file (Spark's ``...fileSource.log.deletion``).

Unlike Spark's compaction (which keeps every entry forever), a compact file drops the entries
of committed batches older than maxFileAge before the newest file (see :func:`prune`): the
seen-files rule rejects such a file anyway, so they can never matter again, and start-up cost
stays bounded by the files inside maxFileAge, not by history.

A lease file (``lease.json``) names the query run using the log; a second run finds a fresh
lease held by a live owner and is refused, instead of both taking the same files.

Three more small files tie the log to one checkpoint, which Python sources never see:
``identity.json`` (created once, before batch 0) holds the ``logId`` every offset carries, so a
checkpoint written against another log is recognised; ``claimed.json`` is created the first
time one of the log's offsets is known to be in a checkpoint (Spark plans a batch of it only
after writing its offset), so a fresh checkpoint pointed at a used log is refused instead of
re-reading every batch; ``cleaned.json`` records how far cleanSource has got, so a restarted
query cleans every batch committed since, whatever the batches spanned.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pysparksources._core.checkpoint import log_number
from pysparksources.errors import CheckpointError, SourceLogInUseError
from pysparksources.files import NAME
from pysparksources.files.storage.filesystem import FileLocation, create_exclusive
from pysparksources.files.storage.folder_listing import modification_ms

__all__ = [
    "CLEANUP_DELAY_MS",
    "COMPACT_INTERVAL",
    "LogEntry",
    "SourceLog",
    "derive_interval",
    "prune",
]

# Spark's defaults: spark.sql.streaming.fileSource.log.compactInterval and .cleanupDelay.
COMPACT_INTERVAL = 10
CLEANUP_DELAY_MS = 10 * 60 * 1000
VERSION = "v1"
LEASE = "lease.json"
IDENTITY = "identity.json"
CLAIMED = "claimed.json"
CLEANED = "cleaned.json"
_LONG = 2**63 - 1
_MAX_ID = 256  # logIds are 32 hex digits; every offset carries one
_DAMAGED = (
    "it was edited or damaged: restore it, or start the query with a new sourceLogLocation "
    "and checkpointLocation"
)
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LogEntry:
    """One file of one batch; ``size`` (not in Spark's format) spares a re-listing on replay."""

    path: str
    timestamp: int
    batch_id: int
    size: int = -1

    def to_json(self) -> str:
        item = {"batchId": self.batch_id, "path": self.path, "timestamp": self.timestamp}
        if self.size >= 0:
            item["size"] = self.size
        return json.dumps(item, separators=(",", ":"))


def prune(history: Iterable[LogEntry], threshold: int | None, keep_from: int) -> list[LogEntry]:
    """The entries a compact file must keep.

    ``threshold`` is the seen-files purge point (newest timestamp minus maxFileAge; None when
    maxFileAge does not apply): an older file is never new again, so its entry only mattered
    for its own batch. Entries of batch ``keep_from`` (the last committed, whose cleanSource
    may still be pending) and later (not committed: a replay must find the same files) stay.
    """
    if threshold is None:
        return list(history)
    return [e for e in history if e.timestamp >= threshold or e.batch_id >= keep_from]


def derive_interval(wanted: int, compacts: Iterable[int]) -> int:
    """The compact interval of a log whose compact files have batch ids ``compacts``.

    A log keeps the interval it was written with, or compaction batches would no longer be
    where readers (and Spark) look for them: with two or more compact files it is the gap
    between the newest two; with one, ``c.compact``, it is the smallest divisor of ``c + 1``
    that is at least ``wanted`` (``c + 1`` itself when none is); with none, ``wanted``.
    """
    newest = sorted(set(compacts), reverse=True)[:2]
    if len(newest) == 2:
        return newest[0] - newest[1]
    if not newest:
        return wanted
    span = newest[0] + 1
    for candidate in range(wanted, span // 2 + 1):
        if span % candidate == 0:
            return candidate
    return span


def _parse(text: str, where: str) -> list[LogEntry]:
    lines = text.splitlines()
    if not lines or lines[0].strip() != VERSION:
        raise CheckpointError(NAME, f"source log file {where} is not a v1 log file")
    entries = []
    for number, line in enumerate(lines[1:], start=2):
        if line.strip():
            try:
                entries.append(_entry(json.loads(line)))
            except (ValueError, TypeError, KeyError, RecursionError):
                raise CheckpointError(
                    NAME,
                    f"source log file {where}, line {number}, is not an entry "
                    '{"path": ..., "timestamp": ..., "batchId": ...}; it was edited or damaged: '
                    "restore it, or start the query with a new sourceLogLocation and "
                    "checkpointLocation",
                ) from None
    return entries


def _long(value: Any, minimum: int = -_LONG - 1) -> bool:
    """Whether ``value`` is a JSON integer Spark could hold in a long, at least ``minimum``."""
    return isinstance(value, int) and not isinstance(value, bool) and minimum <= value <= _LONG


def _text(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= _MAX_ID


# What each field of lease.json must be.
_LEASE = (("host", _text), ("owner", _text), ("pid", _long), ("renewedMs", _long))


def _entry(item: Any) -> LogEntry:
    path, timestamp, batch_id = item["path"], item["timestamp"], item["batchId"]
    size = item.get("size", -1)
    if not (isinstance(path, str) and path and _long(timestamp)):
        raise TypeError(item)
    if not (_long(batch_id, 0) and _long(size, -1)):
        raise TypeError(item)
    return LogEntry(path, timestamp, batch_id, size)


class SourceLog:
    """Batch id -> files, durable; written only by the lease holder."""

    def __init__(
        self,
        location: FileLocation,
        compact_interval: int = COMPACT_INTERVAL,
        cleanup_delay_ms: int = CLEANUP_DELAY_MS,
        deletion: bool = True,
    ) -> None:
        self.location = location
        self.wanted_interval = compact_interval
        self.cleanup_delay_ms = cleanup_delay_ms
        self.deletion = deletion
        self._interval: int | None = None
        self._fs: Any = location.filesystem()
        self._root = location.path.rstrip("/")
        self._recent: dict[int, list[LogEntry]] = {}
        self._lease_owner = uuid.uuid4().hex
        self._lease_lost: str | None = None
        self._stop = threading.Event()
        self._heartbeat: threading.Thread | None = None

    # -- reading -----------------------------------------------------------------------
    def _path(self, name: str) -> str:
        return f"{self._root}/{name}"

    @property
    def compact_interval(self) -> int:
        """The interval this log compacts at: the option's, unless its compact files say
        otherwise (found once, from the first listing, as Spark does)."""
        if self._interval is None:
            self._batch_files()  # the first listing settles it
        return self._interval or self.wanted_interval

    def _settle_interval(self, compacts: list[int]) -> None:
        interval = derive_interval(self.wanted_interval, compacts)
        if interval != self.wanted_interval:
            log.warning(
                "%s: the source log at %s was compacted with another interval (compact "
                "files %s); it keeps compacting every %d batches, not every "
                "sourceLogCompactInterval=%d (a new interval applies to a new log only)",
                NAME,
                self.location.url(),
                ", ".join(f"{b}.compact" for b in sorted(compacts)[-2:]),
                interval,
                self.wanted_interval,
            )
        self._interval = interval

    def _listing(self) -> dict[int, tuple[bool, dict[str, Any]]]:
        """Batch id -> (is it a compact file, fsspec info), for every log file present."""
        self._fs.invalidate_cache(self._root)
        try:
            infos = self._fs.ls(self._root, detail=True)
        except FileNotFoundError:
            infos = []
        found: dict[int, tuple[bool, dict[str, Any]]] = {}
        for info in infos:
            base = str(info["name"]).rstrip("/").rsplit("/", 1)[-1]
            stem, _, suffix = base.partition(".")
            batch = log_number(stem)
            if batch is None or suffix not in ("", "compact"):
                continue
            if batch not in found or suffix:
                found[batch] = (suffix == "compact", info)
        if self._interval is None:
            self._settle_interval([b for b, (c, _) in found.items() if c])
        return found

    def _batch_files(self) -> dict[int, bool]:
        """Batch id -> is it a compact file, for every log file present."""
        return {batch: compact for batch, (compact, _) in self._listing().items()}

    def latest_batch_id(self) -> int:
        """The newest batch id in the log, -1 when it is empty."""
        files = self._batch_files()
        return max(files) if files else -1

    def _read(self, batch_id: int, compact: bool) -> list[LogEntry]:
        name = f"{batch_id}.compact" if compact else str(batch_id)
        where = self.location.url(self._path(name))
        try:
            text = self._fs.cat_file(self._path(name)).decode("utf-8")
        except UnicodeDecodeError:
            raise CheckpointError(NAME, f"source log file {where} is not UTF-8 text") from None
        return _parse(text, where)

    def restore(self) -> list[LogEntry]:
        """Every entry still in the log: the newest compact file and the batches after it."""
        files = self._batch_files()
        compacts = [b for b, c in files.items() if c]
        start = max(compacts) if compacts else -1
        entries: list[LogEntry] = []
        if start >= 0:
            entries.extend(self._read(start, True))
        for batch in sorted(b for b in files if b > start):
            entries.extend(self._read(batch, files[batch]))
        return entries

    def get(self, batch_id: int) -> list[LogEntry]:
        """The files of one batch (read from a compact file if its own file was removed)."""
        cached = self._recent.get(batch_id)
        if cached is not None:
            return cached
        files = self._batch_files()
        if batch_id in files:
            entries = [e for e in self._read(batch_id, files[batch_id]) if e.batch_id == batch_id]
        else:
            later = sorted(b for b, c in files.items() if c and b >= batch_id)
            if not later:
                raise CheckpointError(
                    NAME,
                    f"batch {batch_id} is missing from the source log at "
                    f"{self.location.url()}; was sourceLogLocation changed or cleaned?",
                )
            entries = [e for e in self._read(later[0], True) if e.batch_id == batch_id]
        self._remember(batch_id, entries)
        return entries

    def get_range(self, first: int, last: int) -> list[LogEntry]:
        """Files of batches ``first..last`` inclusive."""
        result: list[LogEntry] = []
        for batch in range(first, last + 1):
            result.extend(self.get(batch))
        return result

    def _remember(self, batch_id: int, entries: list[LogEntry]) -> None:
        self._recent[batch_id] = entries
        for old in [b for b in self._recent if b < batch_id - 2 * self.compact_interval]:
            del self._recent[old]

    # -- writing -----------------------------------------------------------------------
    def is_compaction_batch(self, batch_id: int) -> bool:
        return (batch_id + 1) % self.compact_interval == 0

    def add(self, batch_id: int, entries: list[LogEntry], history: Iterable[LogEntry]) -> None:
        """Write batch ``batch_id`` durably; ``history`` is every earlier entry (compaction)."""
        self.check_lease()
        compact = self.is_compaction_batch(batch_id)
        name = f"{batch_id}.compact" if compact else str(batch_id)
        lines = [VERSION]
        if compact:
            lines.extend(e.to_json() for e in history)
        lines.extend(e.to_json() for e in entries)
        self._write_new(self._path(name), ("\n".join(lines) + "\n").encode("utf-8"))
        self._remember(batch_id, entries)
        if compact and self.deletion:
            self.delete_superseded(batch_id)

    def _write_new(self, target: str, data: bytes) -> None:
        """Write ``target`` whole, refusing to replace it (a second writer must fail)."""
        try:
            create_exclusive(self.location, target, data)
        except FileExistsError:
            raise SourceLogInUseError(
                NAME,
                f"source log batch {self.location.url(target)} already exists: another "
                "query wrote it. Use one sourceLogLocation per query.",
            ) from None

    # -- identity: which checkpoint the log belongs to -----------------------------------
    def _damaged(self, name: str, problem: str) -> CheckpointError:
        return CheckpointError(NAME, f"{self.location.url(self._path(name))} {problem}; {_DAMAGED}")

    def _read_record(self, name: str) -> dict[str, Any] | None:
        """The small JSON object in ``name``; None when the file does not exist."""
        try:
            record = json.loads(self._fs.cat_file(self._path(name)))
        except FileNotFoundError:
            return None
        except (ValueError, RecursionError):
            record = None
        if not isinstance(record, dict):
            raise self._damaged(name, "is not a JSON object")
        return record

    def identity(self) -> str | None:
        """The log's id (None for an empty log, or one written before logs had ids)."""
        record = self._read_record(IDENTITY)
        if record is None:
            return None
        log_id = record.get("logId")
        if not (isinstance(log_id, str) and 0 < len(log_id) <= _MAX_ID):
            shown = json.dumps(log_id)[:40] if "logId" in record else "no logId"
            raise self._damaged(IDENTITY, f"holds {shown}, not a log id (a short string)")
        return log_id

    def create_identity(self) -> str:
        """Give the log its id (once; the lease holder calls this before batch 0)."""
        self.check_lease()
        log_id = uuid.uuid4().hex
        record = {"createdMs": int(time.time() * 1000), "logId": log_id}
        try:
            create_exclusive(self.location, self._path(IDENTITY), json.dumps(record).encode())
        except FileExistsError:
            existing = self.identity()
            if existing is None:  # created by another writer, then deleted before we read it
                raise self._damaged(IDENTITY, "was deleted while this query created it") from None
            return existing
        return log_id

    def is_claimed(self) -> bool:
        """Whether a checkpoint already holds an offset of this log."""
        return self._read_record(CLAIMED) is not None

    def claim(self, log_id: str, batch_id: int) -> None:
        """Record that a checkpoint's offset log holds batch ``batch_id`` of this log."""
        record = {"claimedMs": int(time.time() * 1000), "firstBatch": batch_id, "logId": log_id}
        with contextlib.suppress(FileExistsError):
            create_exclusive(self.location, self._path(CLAIMED), json.dumps(record).encode())

    def cleaned_through(self) -> int | None:
        """The last batch whose cleanSource finished (None: never recorded)."""
        record = self._read_record(CLEANED)
        if record is None:
            return None
        batch_id: Any = record.get("cleanedThrough")
        if not _long(batch_id, -1):
            shown = json.dumps(batch_id)[:40] if "cleanedThrough" in record else "nothing"
            raise CheckpointError(
                NAME,
                f"{self.location.url(self._path(CLEANED))} holds cleanedThrough={shown}, "
                "not a batch id; it was edited or damaged: delete it (the next commit cleans "
                "from its own batch on)",
            )
        return int(batch_id)

    def set_cleaned_through(self, batch_id: int) -> None:
        record = {"cleanedThrough": batch_id}
        self._fs.pipe_file(self._path(CLEANED), json.dumps(record).encode())

    def delete_superseded(self, batch_id: int, now_ms: int | None = None) -> list[int]:
        """Delete the files of batches before compaction batch ``batch_id`` whose modification
        time is at least cleanupDelay old; returns the batch ids deleted.

        Younger files stay for readers that listed the log before this compaction; a later
        compaction deletes them. Failures are logged, never raised: a leftover file only costs
        a listing entry (start-up reads from the newest compact file on).
        """
        now = int(time.time() * 1000) if now_ms is None else now_ms
        expired = now - self.cleanup_delay_ms
        deleted: list[int] = []
        try:
            listing = self._listing()
        except OSError as error:  # the batch is written; the next compaction retries
            log.warning("%s: could not list the source log to delete old files: %s", NAME, error)
            return deleted
        for batch, (compact, info) in sorted(listing.items()):
            if batch >= batch_id or modification_ms(info) > expired:
                continue
            name = f"{batch}.compact" if compact else str(batch)
            try:
                self._fs.rm_file(self._path(name))
                deleted.append(batch)
            except FileNotFoundError:
                pass
            except OSError as error:  # a leftover file only costs start-up time
                log.warning("%s: could not delete old source log file %s: %s", NAME, name, error)
        return deleted

    # -- lease -------------------------------------------------------------------------
    def _lease_record(self) -> dict[str, Any] | None:
        """The lease; None when there is none, or when its text is not JSON (a write a crash
        cut short: the lease of a dead query). JSON that is not a lease is an error."""
        try:
            data = self._fs.cat_file(self._path(LEASE))
        except FileNotFoundError:
            return None
        try:
            record = json.loads(data)
        except RecursionError:
            record = None
        except ValueError:
            return None
        if not (isinstance(record, dict) and all(check(record.get(k)) for k, check in _LEASE)):
            raise CheckpointError(
                NAME,
                f"{self.location.url(self._path(LEASE))} is not a lease "
                '{"host": "...", "owner": "...", "pid": <int>, "renewedMs": <int>}; it was '
                "edited or damaged: delete it once no query uses this source log",
            )
        return record

    def _write_lease(self) -> None:
        record = {
            "host": socket.gethostname(),
            "owner": self._lease_owner,
            "pid": os.getpid(),
            "renewedMs": int(time.time() * 1000),
        }
        self._fs.makedirs(self._root, exist_ok=True)
        self._fs.pipe_file(self._path(LEASE), json.dumps(record).encode("utf-8"))

    def acquire(self, timeout_s: float) -> None:
        """Take the lease, or raise :class:`SourceLogInUseError` if a live query holds it."""
        current = self._lease_record()
        if current is not None and current.get("owner") != self._lease_owner:
            age_s = time.time() - current["renewedMs"] / 1000
            if age_s < timeout_s and _owner_alive(current):
                raise SourceLogInUseError(
                    NAME,
                    f"the source log at {self.location.url()} is in use by another "
                    f"running query (host {current.get('host')}, pid {current.get('pid')}, "
                    f"renewed {age_s:.0f}s ago). Each query needs its own sourceLogLocation; "
                    f"a crashed query's lease expires after sourceLogLeaseTimeout={timeout_s:g}s.",
                )
        self._write_lease()
        time.sleep(0.05)
        again = self._lease_record()
        if again is None or again.get("owner") != self._lease_owner:
            raise SourceLogInUseError(
                NAME,
                f"another query took the source log at {self.location.url()} at the "
                "same moment; each query needs its own sourceLogLocation",
            )
        self._stop.clear()
        self._heartbeat = threading.Thread(
            target=self._renew_loop, args=(max(0.5, timeout_s / 4),), daemon=True
        )
        self._heartbeat.start()

    def _renew_loop(self, every_s: float) -> None:
        while not self._stop.wait(every_s):
            try:
                current = self._lease_record()
                if current is not None and current.get("owner") != self._lease_owner:
                    self._lease_lost = f"host {current.get('host')}, pid {current.get('pid')}"
                    return
                self._write_lease()
            except Exception as error:  # renewal is retried; the lease has slack
                log.warning("%s: could not renew the source log lease: %s", NAME, error)

    def check_lease(self) -> None:
        if self._lease_lost is not None:
            raise SourceLogInUseError(
                NAME,
                f"another query ({self._lease_lost}) took over the source log at "
                f"{self.location.url()}; this query stops instead of reading files twice",
            )

    def release(self) -> None:
        self._stop.set()
        if self._heartbeat is not None:
            self._heartbeat.join(timeout=5)
            self._heartbeat = None
        try:
            current = self._lease_record()
        except CheckpointError:  # not a lease of ours: leave it for the next start to report
            return
        if current is not None and current.get("owner") == self._lease_owner:
            with contextlib.suppress(OSError):
                self._fs.rm(self._path(LEASE))


def _owner_alive(record: dict[str, Any]) -> bool:
    """False only when the owner is known dead (same host, no such process, or a zombie)."""
    pid = record["pid"]
    if record["host"] != socket.gethostname() or pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError, OverflowError):
        return True
    return not _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    """Whether ``pid`` has exited but not been reaped yet.

    A SIGKILLed driver's source runner lingers as a zombie until its parent is reaped, for
    seconds on a loaded host; ``kill(pid, 0)`` still succeeds on it, so without this check a
    restart right after the crash was refused as if the old query were still running.
    """
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            fields = stat.read().rsplit(")", 1)[-1].split()
    except FileNotFoundError:  # reaped since kill(pid, 0), or no /proc (macOS)
        return os.path.isdir("/proc")
    except OSError:
        return False
    return bool(fields) and fields[0] in ("Z", "X")
