"""discovery=notifications: new files come from storage events in a queue, not from listings.

The reader asks :meth:`NotificationDiscovery.new_files` where listing mode lists the path; the
files it returns go through the same admission and the same source log. What is particular to
a queue is when a message may be deleted:

- a message is held (its receipt kept) until every file it names is in a batch of the source
  log **and** that batch is in Spark's commit log. Spark says so in ``commit(end)`` and, after a
  restart, by calling ``latestOffset(start)`` (it plans the batch after ``start`` only once
  ``start`` is committed): :meth:`committed`. A crash before then loses the receipts; the
  message comes back after its visibility timeout, and its file, already in the log, is not
  taken again: its message is held until that file's batch is committed, then deleted;
- a message naming no file of the source (another folder, a name the glob or
  ``pathGlobFilter`` filters, a hidden name, an event type that is not a creation), one whose
  files were all taken by committed batches, or one that cannot be parsed is deleted at once.

A creation followed by a deletion of the same file (by sequencer, else event time) before the
file is taken is dropped; a file deleted after it was taken is read as listing mode reads a
file deleted since its listing (``ignoreMissingFiles``).

``includeExistingFiles`` lists the path at the start of a fresh stream (again at each start
until every file of that listing is in the log, so a crash loses none) and ``backfillInterval``
lists it now and then for files whose notification never came; both feed the same pending
files. ``discovery.json`` in the source log folder remembers across runs when the stream
started (files older are not "existing" backfills when ``includeExistingFiles`` is false),
whether the first listing is done and when the last backfill ran.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pysparksources.errors import ServiceError
from pysparksources.files import NAME
from pysparksources.files._listing import FileEntry, selects
from pysparksources.files._notifications import CREATED, DELETED, FileEvent, is_later
from pysparksources.files._notifications import parse_message as parse_events
from pysparksources.files._queues import NotificationQueue, QueueMessage, open_queue
from pysparksources.files._seen import SeenFiles
from pysparksources.files._source_files import SourceLister
from pysparksources.files._source_log import LogEntry
from pysparksources.files.config import NotificationOptions, SourceConfig

__all__ = ["RECEIVE_CAP", "NotificationDiscovery"]

log = logging.getLogger(__name__)
RECORD = "discovery.json"
# Messages received per trigger, and files waiting for a batch, at most: the rest stays in the
# queue (hidden messages come back after their visibility timeout) for later triggers.
RECEIVE_CAP = 10_000
# Deletions remembered to drop a creation delivered after them (out of order).
DELETIONS_KEPT = 100_000
NOT_SHOWN = "<not shown>"


@dataclass
class _Held:
    """A received message: the files it still waits for, and the newest batch that took one."""

    message: QueueMessage
    waiting: set[str] = field(default_factory=set)
    batch: int = -1


@dataclass
class _Pending:
    """A file found (event or listing) but in no batch yet."""

    entry: FileEntry
    created: FileEvent
    listed: bool  # found by the first listing (includeExistingFiles)


class NotificationDiscovery:
    def __init__(
        self,
        config: SourceConfig,
        seen: SeenFiles,
        history: Iterable[LogEntry],
        lister: SourceLister,
    ) -> None:
        if config.notifications is None or config.log_location is None:  # the parser's rule
            from pysparksources.errors import OptionError

            raise OptionError(NAME, "discovery", "notifications need queueUrl and a source log")
        self._config = config
        self._options: NotificationOptions = config.notifications
        self._seen = seen
        self._lister = lister
        self._queue: NotificationQueue | None = None
        # seen-key -> batch, for batches not known to be committed (a file missing here is
        # in a committed batch, or was never taken).
        self._batch_of = {seen.key(e.path): e.batch_id for e in history}
        self._pending: dict[str, _Pending] = {}
        self._held: dict[str, _Held] = {}  # message id -> held delivery
        self._waiters: dict[str, set[str]] = {}  # path -> ids of messages waiting for it
        self._deleted: dict[str, FileEvent] = {}
        self._committed = -1
        self._frozen = False
        self._listed_this_run = False
        self._record_location = config.log_location.child(RECORD)
        self._record = self._read_record()

    # -- what the reader calls ------------------------------------------------------------
    def new_files(self) -> list[FileEntry]:
        """Receive what the queue holds (not under AvailableNow once frozen), then every file
        found and not in a batch yet."""
        if not self._frozen:
            self._poll(drain=False)
        return self._candidates()

    def freeze(self) -> None:
        """AvailableNow: take everything the queue holds now, then receive nothing more."""
        self._poll(drain=True)
        self._frozen = True

    def taken(self, files: Iterable[FileEntry], batch_id: int) -> None:
        """``files`` are batch ``batch_id`` of the source log (durable)."""
        listed_before = any(p.listed for p in self._pending.values())
        for entry in files:
            self._pending.pop(entry.path, None)
            self._batch_of[self._seen.key(entry.path)] = batch_id
            self._resolve(entry.path, batch_id)
        if listed_before and not any(p.listed for p in self._pending.values()):
            self._update_record(existingListed=True)

    def committed(self, batch_id: int) -> None:
        """Spark committed every batch up to log batch ``batch_id``: delete their messages."""
        if batch_id > self._committed:
            self._committed = batch_id
            self._batch_of = {k: b for k, b in self._batch_of.items() if b > batch_id}
        self._delete_ready()

    def close(self) -> None:
        if self._queue is not None:
            try:
                self._queue.close()
            except Exception as error:  # closing is best effort
                log.debug("%s: closing the notification queue: %s", NAME, type(error).__name__)
            self._queue = None

    # -- receiving ------------------------------------------------------------------------
    def _open(self) -> NotificationQueue:
        if self._queue is None:
            self._queue = self._call(
                "open", lambda: open_queue(self._options.kind, self._options.url, self._settings)
            )
        return self._queue

    @property
    def _settings(self) -> dict[str, str]:
        return self._options.settings

    def _poll(self, drain: bool) -> None:
        queue = self._open()
        received = 0
        waited = False
        while received < RECEIVE_CAP and len(self._pending) < RECEIVE_CAP:
            # AvailableNow waits a second before believing an empty answer: SQS's short poll
            # samples some of its servers and can answer empty while messages are there.
            wait = 1 if drain and waited else 0
            messages = self._call(
                "receive from",
                lambda wait=wait: queue.receive(self._options.visibility_timeout_s, wait),
            )
            if not messages:
                if drain and not waited and self._options.kind == "sqs":
                    waited = True
                    continue
                break
            for message in messages:
                self._take(message)
            received += len(messages)
        self._list_if_due()
        self._delete_ready()

    def _take(self, message: QueueMessage) -> None:
        held = self._held.get(message.id)
        if held is not None:  # delivered again while held: only the newest receipt works
            held.message = message
            return
        held = _Held(message)
        self._held[message.id] = held
        try:
            events = parse_events(message.body)
        except ValueError as error:
            log.warning(
                "%s: deleting queue message %s, which is not a storage event: %s",
                NAME,
                message.id,
                error,
            )
            return
        for event in events:
            if not self._selects(event.path):
                continue
            if event.kind == DELETED:
                self._deletion(event)
            else:
                self._creation(event, held)

    def _selects(self, path: str) -> bool:
        cfg = self._config
        return selects(path, cfg.base, cfg.pattern, cfg.path_glob_filter, cfg.recursive_file_lookup)

    def _creation(self, event: FileEvent, held: _Held) -> None:
        path = event.path
        deleted = self._deleted.get(path)
        if deleted is not None and is_later(deleted, event):
            return  # the file was deleted after this creation
        if not self._seen.is_new(path, event.time_ms):
            # Taken already (a duplicate or a redelivery), or older than maxFileAge: wait only
            # for the batch that took it, if that batch is not committed yet.
            held.batch = max(held.batch, self._batch_of.get(self._seen.key(path), -1))
            return
        if path not in self._pending:
            entry = FileEntry(path, event.time_ms, max(event.size, 0))
            self._pending[path] = _Pending(entry, event, listed=False)
        held.waiting.add(path)
        self._waiters.setdefault(path, set()).add(held.message.id)

    def _deletion(self, event: FileEvent) -> None:
        path = event.path
        known = self._deleted.get(path)
        if known is None or is_later(event, known):
            self._deleted.pop(path, None)
            self._deleted[path] = event
            if len(self._deleted) > DELETIONS_KEPT:
                del self._deleted[next(iter(self._deleted))]
        pending = self._pending.get(path)
        if pending is not None and is_later(event, pending.created):
            del self._pending[path]
            self._resolve(path, -1)

    def _resolve(self, path: str, batch_id: int) -> None:
        """``path`` is in batch ``batch_id`` (-1: dropped): its messages wait for it no more."""
        for message_id in self._waiters.pop(path, ()):
            held = self._held.get(message_id)
            if held is not None:
                held.waiting.discard(path)
                held.batch = max(held.batch, batch_id)

    def _candidates(self) -> list[FileEntry]:
        files = []
        for path, pending in list(self._pending.items()):
            if self._seen.is_new(path, pending.entry.timestamp):
                files.append(pending.entry)
            else:  # taken meanwhile under another path (fileNameOnly), or too old now
                del self._pending[path]
                self._resolve(path, self._batch_of.get(self._seen.key(path), -1))
        return files

    # -- listings: the first one, and backfills ------------------------------------------
    def _list_if_due(self) -> None:
        opts = self._options
        now_ms = int(time.time() * 1000)
        first = opts.include_existing and not self._record.get("existingListed")
        first = first and not self._listed_this_run
        interval = opts.backfill_interval_s
        last = self._record.get("lastBackfillMs") or self._record["startedMs"]
        due = interval is not None and now_ms - last >= interval * 1000
        if not (first or due):
            return
        since = 0 if opts.include_existing else int(self._record["startedMs"])
        found = 0
        for entry in self._lister.files():
            if entry.path in self._pending or entry.timestamp < since:
                continue
            if not self._seen.is_new(entry.path, entry.timestamp):
                continue
            created = FileEvent(CREATED, entry.path, entry.size, entry.timestamp)
            deleted = self._deleted.get(entry.path)
            if deleted is not None and is_later(deleted, created):
                continue
            self._pending[entry.path] = _Pending(entry, created, listed=first)
            found += 1
        if first:
            self._listed_this_run = True
            if not found:
                self._update_record(existingListed=True, lastBackfillMs=now_ms)
        if due or first:
            self._update_record(lastBackfillMs=now_ms)
        if due and found:
            log.info("%s: a backfill listing found %d files no notification named", NAME, found)

    def _read_record(self) -> dict[str, Any]:
        fs: Any = self._record_location.filesystem()
        try:
            record = json.loads(fs.cat_file(self._record_location.path))
            if isinstance(record, dict) and isinstance(record.get("startedMs"), int):
                return record
        except FileNotFoundError:
            pass
        except ValueError:
            log.warning("%s: %s is damaged; starting it again", NAME, self._record_location.url())
        record = {"startedMs": int(time.time() * 1000)}
        self._write_record(record)
        return record

    def _update_record(self, **changes: Any) -> None:
        if all(self._record.get(k) == v for k, v in changes.items()):
            return
        self._record = {**self._record, **changes}
        self._write_record(self._record)

    def _write_record(self, record: dict[str, Any]) -> None:
        fs: Any = self._record_location.filesystem()
        fs.makedirs(self._record_location.path.rsplit("/", 1)[0], exist_ok=True)
        data = json.dumps(record, sort_keys=True).encode("utf-8")
        fs.pipe_file(self._record_location.path, data)

    # -- deleting -------------------------------------------------------------------------
    def _delete_ready(self) -> None:
        ready = [
            held
            for held in self._held.values()
            if not held.waiting and held.batch <= self._committed
        ]
        if not ready:
            return
        queue = self._open()
        try:
            refused = queue.delete([held.message for held in ready])
        except Exception as error:  # kept, and tried again at the next commit
            log.warning(
                "%s: could not delete %d notification messages (tried again later): %s",
                NAME,
                len(ready),
                self._scrub(error),
            )
            return
        if refused:
            log.info(
                "%s: %d notification messages were delivered again before their deletion; "
                "they are deleted when they come back",
                NAME,
                refused,
            )
        for held in ready:
            del self._held[held.message.id]

    # -- errors ---------------------------------------------------------------------------
    def _call(self, what: str, action: Any) -> Any:
        try:
            return action()
        except Exception as error:
            raise ServiceError(
                NAME,
                f"could not {what} the notification queue (queueUrl): {self._scrub(error)}",
            ) from None

    def _scrub(self, error: BaseException) -> str:
        """The error's type and message with the queue URL and every queue.* value removed."""
        text = f"{type(error).__name__}: {error}"
        secrets = [self._options.url, *self._settings.values()]
        query = self._options.url.partition("?")[2]
        if query:
            secrets.append(query)
        for secret in sorted(secrets, key=len, reverse=True):
            if secret:
                text = text.replace(secret, NOT_SHOWN)
        return text
