"""discovery=notifications: new files come from storage events in a queue, not from listings.

The reader asks :meth:`NotificationDiscovery.new_files` where listing mode lists the path; the
files it returns go through the same admission and the same source log. What is particular to
a queue is what a message is trusted with, and when it may be deleted.

A message names files; storage says what they are. Each file a creation names (in the path,
of the path's storage account or bucket, not taken yet) is looked up once
(``file_lookups``): its size and modification time come from the filesystem, as a listing
would have given them, and a file that is not there is skipped and counted (``missingFiles``),
as listing mode would never have seen it. A deletion has a file still waiting for a batch
looked up again. Every message ends in one of these outcomes:

- a message naming files of the source is held (its receipt kept) until every such file is in
  a batch of the source log **and** that batch is in Spark's commit log. Spark says so in
  ``commit(end)`` and, after a restart, by calling ``latestOffset(start)`` (it plans the batch
  after ``start`` only once ``start`` is committed): :meth:`committed`. A crash before then
  loses the receipts; the message comes back after its visibility timeout, and its file,
  already in the log, is not taken again: its message is held until that file's batch is
  committed, then deleted;
- a message naming no file of the source (another folder, a name the glob or
  ``pathGlobFilter`` filters, a hidden name, a missing file, another storage account or
  bucket, an event type that never makes a file appear), or one whose files were all taken by
  committed batches, is deleted at once; files of another account or bucket are counted
  (``foreignEvents``) and logged, as they mean a misrouted subscription, and so are paths that
  could reach outside the source path (``refusedPaths``: ``..``, encoded dots, ...);
- a message this source does not read (``NotAStorageEvent``: not a storage event, a type or
  shape it does not read, a field of the wrong type) is counted (``unreadableMessages``),
  logged by id and reason (never its body), and deleted, or with ``unreadableMessages=leave``
  left in the queue: hidden for an hour at each receipt (so a run receives it about once an
  hour, which is what moves it to SQS's dead-letter queue after ``maxReceiveCount``
  receipts) and never counted twice in one run.

The counts are in the source's progress (``reportLatestOffset``), since the query started.

``includeExistingFiles`` lists the path at the start of a fresh stream (again at each start
until every file of that listing is in the log, so a crash loses none) and ``backfillInterval``
lists it now and then for files whose notification never came; both feed the same pending
files. ``discovery.json`` in the source log folder (``discovery_record``) remembers across
runs when the stream started (files older are not "existing" backfills when
``includeExistingFiles`` is false), whether the first listing is done and when the last
backfill ran.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pysparksources._core.hooks import HookPoint
from pysparksources.errors import ArgumentError, OptionError, ServiceError
from pysparksources.files import NAME
from pysparksources.files.config import NotificationOptions, SourceConfig
from pysparksources.files.offsets import NotificationCounts
from pysparksources.files.source.file_index import SourceLister
from pysparksources.files.source.notifications.discovery_record import (
    RECORD,
    DiscoveryRecord,
    read_record,
    write_record,
)
from pysparksources.files.source.notifications.events import (
    DELETED,
    FileEvent,
    NotAStorageEvent,
    shown,
)
from pysparksources.files.source.notifications.events import parse_message as parse_events
from pysparksources.files.source.notifications.file_lookups import look_up
from pysparksources.files.source.notifications.queues import (
    NotificationQueue,
    QueueMessage,
    backend_named,
    open_queue,
)
from pysparksources.files.source.notifications.throttled_log import ThrottledLog
from pysparksources.files.source.seen_files import SeenFiles
from pysparksources.files.source.source_log import LogEntry
from pysparksources.files.storage.folder_listing import FileEntry, selects
from pysparksources.files.storage.safe_paths import path_problem

__all__ = ["LEFT_HIDDEN_S", "OPEN_QUEUE", "RECEIVE_CAP", "NotificationDiscovery"]

log = logging.getLogger(__name__)
# Messages received per trigger, and files waiting for a batch, at most: the rest stays in the
# queue (hidden messages come back after their visibility timeout) for later triggers.
RECEIVE_CAP = 10_000
# unreadableMessages=leave: how long a left message stays hidden at each receipt, and how
# many left message ids a run remembers (so it counts and logs each once).
LEFT_HIDDEN_S = 3600
LEFT_KEPT = 100_000
NOT_SHOWN = "<not shown>"
OPEN_QUEUE: HookPoint[[str, str, Mapping[str, str]], NotificationQueue] = HookPoint(
    "pyfile.open_notification_queue",
    "opens the queue of notification discovery (kind, URL, queue.* settings); a benchmark "
    "hands a queue double instead",
    open_queue,
)


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
    listed: bool  # found by the first listing (includeExistingFiles)


class NotificationDiscovery:
    def __init__(
        self,
        config: SourceConfig,
        seen: SeenFiles,
        history: Iterable[LogEntry],
        lister: SourceLister,
    ) -> None:
        if config.notifications is None or config.log_location is None:
            raise ArgumentError(NAME, "notification discovery needs a queue and a source log")
        self._config = config
        self._options: NotificationOptions = config.notifications
        # An unknown kind fails here, when the query starts, not at the first receive.
        self._backend = backend_named(self._options.kind)
        self._seen = seen
        self._lister = lister
        self._queue: NotificationQueue | None = None
        # seen-key -> batch, for batches not known to be committed (a file missing here is
        # in a committed batch, or was never taken).
        self._batch_of = {seen.key(e.path): e.batch_id for e in history}
        self._pending: dict[str, _Pending] = {}
        self._unchecked: dict[str, None] = {}  # created files to look up, in arrival order
        self._recheck: set[str] = set()  # pending files a deletion named
        self._held: dict[str, _Held] = {}  # message id -> held delivery
        self._waiters: dict[str, set[str]] = {}  # path -> ids of messages waiting for it
        self._left: dict[str, None] = {}  # ids of messages left in the queue this run
        # What counts() reports (files/offsets.py's NotificationCounts), since this run began.
        self._unreadable_messages = self._missing_files = 0
        self._foreign_events = self._refused_paths = 0
        self._warnings = ThrottledLog(log)
        self._committed = -1
        self._frozen = False
        self._listed_this_run = False
        self._account, self._bucket = self._scope()
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
            self._update_record(existing_listed=True)

    def committed(self, batch_id: int) -> None:
        """Spark committed every batch up to log batch ``batch_id``: delete their messages."""
        if batch_id > self._committed:
            self._committed = batch_id
            self._batch_of = {k: b for k, b in self._batch_of.items() if b > batch_id}
        self._delete_ready()

    def counts(self) -> NotificationCounts:
        """Since this run started: messages not read, notified files not in storage, events
        of another account or bucket, refused paths; and the files waiting for a batch now.
        The progress shows them under ``@notifications`` (``reportLatestOffset``)."""
        return NotificationCounts(
            unreadable_messages=self._unreadable_messages,
            missing_files=self._missing_files,
            foreign_events=self._foreign_events,
            refused_paths=self._refused_paths,
            files_waiting=len(self._pending),
        )

    def close(self) -> None:
        if self._queue is not None:
            try:
                self._queue.close()
            except Exception as error:  # closing is best effort
                log.debug("%s: closing the notification queue: %s", NAME, type(error).__name__)
            self._queue = None

    # -- whose files: the path's storage account or bucket ---------------------------------
    def _scope(self) -> tuple[str | None, str | None]:
        """(Azure account, S3 bucket) of the path: events naming another are not its files."""
        if self._backend.scope == "bucket":
            bucket = self._config.base.split("/", 1)[0]
            return None, None if _has_glob(bucket) else bucket
        fs: Any = self._config.location.filesystem()
        client = getattr(fs, "service_client", None)
        account = getattr(client, "account_name", None) or getattr(fs, "account_name", None)
        if not isinstance(account, str) or not account:
            raise OptionError.required(
                NAME,
                "fs.account_name",
                "discovery=notifications compares the storage account of each event with the "
                "path's, and the path's account is not known: give fs.account_name, "
                "fs.connection_string, or a path abfs://<container>@<account>.dfs.core."
                "windows.net/...",
            ).bare()
        return account.lower(), None

    def _foreign(self, event: FileEvent) -> str | None:
        """What makes ``event`` name another account's or bucket's file, or None."""
        if self._account is not None and (event.account or "").lower() != self._account:
            if event.account is None:
                return f"no storage account (not an Event Grid event), not {self._account!r}"
            return f"storage account {shown(event.account)!r}, not the path's {self._account!r}"
        if self._bucket is not None and event.path.split("/", 1)[0] != self._bucket:
            return f"bucket {shown(event.path.split('/', 1)[0])!r}, not the path's {self._bucket!r}"
        return None

    # -- receiving ------------------------------------------------------------------------
    def _open(self) -> NotificationQueue:
        if self._queue is None:
            self._queue = self._call(
                "open", lambda: OPEN_QUEUE(self._backend.kind, self._options.url, self._settings)
            )
        return self._queue

    @property
    def _settings(self) -> dict[str, str]:
        return self._options.settings

    def _poll(self, drain: bool) -> None:
        queue = self._open()
        received = 0
        waited = False
        this_poll: set[str] = set()
        while received < RECEIVE_CAP and len(self._pending) + len(self._unchecked) < RECEIVE_CAP:
            # AvailableNow waits a second before believing an empty answer where it may be
            # wrong: SQS's short poll samples some of its servers and can answer empty while
            # messages are there.
            wait = 1 if drain and waited else 0
            messages = self._call(
                "receive from",
                lambda wait=wait: queue.receive(self._options.visibility_timeout_s, wait),
            )
            if not messages:
                if drain and not waited and self._backend.empty_may_miss:
                    waited = True
                    continue
                break
            if all(m.id in this_poll for m in messages):
                break  # only messages back from an expired visibility timeout: drained
            for message in messages:
                this_poll.add(message.id)
                self._take(message)
            received += len(messages)
        self._check_files()
        self._list_if_due()
        self._delete_ready()

    def _take(self, message: QueueMessage) -> None:
        if message.id in self._left:  # left earlier in this run: hide it again, say nothing
            self._hide(message)
            return
        held = self._held.get(message.id)
        if held is not None:  # delivered again while held: only the newest receipt works
            held.message = message
            return
        held = _Held(message)
        self._held[message.id] = held
        try:
            events = parse_events(message.body)
        except NotAStorageEvent as error:
            self._unreadable(held, str(error))
            return
        for event in events:
            foreign = self._foreign(event)
            if foreign is not None:
                self._foreign_events += 1
                self._warnings.warning(
                    "foreign",
                    "%s: queue message %s names a file of %s: skipped (is the queue fed by the "
                    "right storage account or bucket?)",
                    NAME,
                    shown(message.id),
                    foreign,
                )
                continue
            refused = path_problem(event.path)
            if refused is not None:  # could reach outside the path, whoever decodes it
                self._refused_paths += 1
                self._warnings.warning(
                    "refused",
                    "%s: queue message %s names a path that could reach outside the source "
                    "path (%s): skipped (docs/pyfile-source.md, 'Paths that are never read')",
                    NAME,
                    shown(message.id),
                    refused,
                )
                continue
            if not self._selects(event.path):
                continue
            if event.kind == DELETED:
                if event.path in self._pending:
                    self._recheck.add(event.path)
            else:
                self._creation(event.path, held)

    def _unreadable(self, held: _Held, reason: str) -> None:
        """The policy for a message this source does not read (``unreadableMessages``)."""
        message = held.message
        self._unreadable_messages += 1
        leave = self._options.leave_unreadable
        self._warnings.warning(
            "unreadable",
            "%s: queue message %s%s is not a storage event this source reads (%s): %s",
            NAME,
            shown(message.id),
            _history(message),
            reason,
            "left in the queue for its dead-letter policy (unreadableMessages=leave)"
            if leave
            else "deleted (unreadableMessages=leave keeps such messages in the queue)",
        )
        if leave:  # never deleted: forget the receipt, remember the id
            del self._held[message.id]
            self._left[message.id] = None
            if len(self._left) > LEFT_KEPT:
                del self._left[next(iter(self._left))]
            self._hide(message)

    def _hide(self, message: QueueMessage) -> None:
        try:
            self._open().hide(message, LEFT_HIDDEN_S)
        except Exception as error:  # it comes back after its visibility timeout instead
            log.debug(
                "%s: could not hide queue message %s: %s",
                NAME,
                shown(message.id),
                self._scrub(error),
            )

    def _selects(self, path: str) -> bool:
        cfg = self._config
        return selects(path, cfg.base, cfg.pattern, cfg.path_glob_filter, cfg.recursive_file_lookup)

    def _creation(self, path: str, held: _Held) -> None:
        if path in self._seen:
            # Taken already (a duplicate or a redelivery): wait only for the batch that took
            # it, if that batch is not committed yet.
            held.batch = max(held.batch, self._batch_of.get(self._seen.key(path), -1))
            return
        if path not in self._pending:
            self._unchecked[path] = None
        held.waiting.add(path)
        self._waiters.setdefault(path, set()).add(held.message.id)

    def _check_files(self) -> None:
        """Storage says what the notified files are: new ones become pending, missing ones
        (and pending ones deleted since) are dropped and counted."""
        paths = [*self._unchecked, *(p for p in self._recheck if p not in self._unchecked)]
        self._unchecked, self._recheck = {}, set()
        if not paths:
            return
        for path, entry in look_up(self._config.location, paths).items():
            if entry is None:
                self._missing_files += 1
                log.debug("%s: notified file %s is not in storage: skipped", NAME, path)
                self._pending.pop(path, None)
                self._resolve(path, -1)
            elif path in self._pending:
                continue  # still there: the deletion was older than its re-creation
            elif self._seen.is_new(path, entry.timestamp):
                self._pending[path] = _Pending(entry, listed=False)
            else:  # older than maxFileAge, or taken meanwhile under another path
                self._resolve(path, self._batch_of.get(self._seen.key(path), -1))

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
        record = self._record
        now_ms = int(time.time() * 1000)
        first = opts.include_existing and not record.existing_listed
        first = first and not self._listed_this_run
        interval = opts.backfill_interval_s
        last = record.last_backfill_ms or record.started_ms
        due = interval is not None and now_ms - last >= interval * 1000
        if not (first or due):
            return
        since = 0 if opts.include_existing else record.started_ms
        found = 0
        for entry in self._lister.files():
            if entry.path in self._pending or entry.timestamp < since:
                continue
            if not self._seen.is_new(entry.path, entry.timestamp):
                continue
            self._pending[entry.path] = _Pending(entry, listed=first)
            found += 1
        if first:
            self._listed_this_run = True
            if not found:
                self._update_record(existing_listed=True, last_backfill_ms=now_ms)
        if due or first:
            self._update_record(last_backfill_ms=now_ms)
        if due and found:
            log.info("%s: a backfill listing found %d files no notification named", NAME, found)

    def _read_record(self) -> DiscoveryRecord:
        now_ms = int(time.time() * 1000)
        record = read_record(self._record_location, now_ms)
        if record is None:
            record = DiscoveryRecord(started_ms=now_ms)
            write_record(self._record_location, record)
        return record

    def _update_record(self, **changes: Any) -> None:
        record = self._record.updated(**changes)
        if record != self._record:
            self._record = record
            write_record(self._record_location, record)

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


def _history(message: QueueMessage) -> str:
    """What the queue says of ``message`` (its receive count, when it was enqueued), if any."""
    parts = []
    if message.receive_count is not None:
        parts.append(f"delivery {message.receive_count}")
    if message.enqueued_at is not None:
        parts.append(f"enqueued {message.enqueued_at.isoformat(timespec='seconds')}")
    return f" ({', '.join(parts)})" if parts else ""


def _has_glob(text: str) -> bool:
    return any(c in text for c in "*?[{")
