"""Storage event messages -> file events: pure functions, no client, no network.

Three producers write into the queues pyfile reads with ``discovery=notifications``:

- Azure Event Grid (``Microsoft.Storage.BlobCreated`` / ``BlobDeleted``) into a Storage queue.
  The queue message is the event JSON, base64-encoded (plain JSON is accepted too), one event
  or an array of them, in the Event Grid schema (``eventType``, ``subject``, ``topic``) or
  the CloudEvents 1.0 schema (``type``, ``subject``, ``source``). The blob's path comes from the
  subject (``/blobServices/default/containers/<c>/blobs/<path>``), which is the same for the
  Blob and the Data Lake endpoints, as ``<container>/<path>``: adlfs's path. The storage
  account comes from ``topic`` / ``source`` (``.../storageAccounts/<account>``).
- Amazon S3 event notifications into SQS: ``{"Records": [...]}`` with ``eventName``
  ``ObjectCreated:*`` / ``ObjectRemoved:*`` and a URL-encoded ``s3.object.key`` (a space is
  ``+``; some servers also encode ``/``), as ``<bucket>/<key>``: s3fs's path. The same body
  wrapped by SNS (``{"Type": "Notification", "Message": "<json>"}``) is unwrapped. S3's
  ``s3:TestEvent`` carries no records.
- S3 events routed through Amazon EventBridge (``{"source": "aws.s3", "detail-type":
  "Object Created", "detail": {"bucket": {"name": ...}, "object": {"key": ...}}}``), the key
  URL-encoded as in direct notifications, directly or wrapped by SNS.

Only what names a file is taken from a message: created or deleted, the path, and the Azure
account. Sizes, times and sequencers in the message are not read: storage says what a file is
(``file_lookups``).

A storage event that never makes a new file appear (tier changes, restores, tags, ADLS
``CreateFile``, which fires before the data is flushed, ...) yields nothing. Anything else, a
body that is not one of these formats, an event of a type this source does not read (renames
among them: they can bring files in without a creation event) or a field of the wrong type,
raises :class:`NotAStorageEvent`, the one rejection, for the whole message; its text is ours,
with at most a short, printable excerpt of the message (``shown``).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus

__all__ = [
    "CREATED",
    "DELETED",
    "FileEvent",
    "NotAStorageEvent",
    "parse_message",
    "shown",
]


class NotAStorageEvent(ValueError):
    """A queue message this source does not read; ``unreadableMessages`` says what becomes of
    it. The text never holds more of the message than :func:`shown` lets through."""


CREATED = "created"
DELETED = "deleted"
_BLOB_SUBJECT = re.compile(r"^/blobServices/default/containers/([^/]+)/blobs/(.+)$", re.DOTALL)
_ACCOUNT = re.compile(r"/providers/Microsoft\.Storage/storageAccounts/([^/]+)$", re.IGNORECASE)
_AZURE_CREATED = "Microsoft.Storage.BlobCreated"
_AZURE_DELETED = "Microsoft.Storage.BlobDeleted"
# Storage events that never make a new file appear: skipped without a word.
_AZURE_SKIPPED = frozenset(
    f"Microsoft.Storage.{name}"
    for name in (
        "BlobTierChanged",
        "AsyncOperationInitiated",
        "BlobInventoryPolicyCompleted",
        "LifecyclePolicyCompleted",
        "DirectoryCreated",
        "DirectoryDeleted",
    )
)
# ADLS Gen2 fires BlobCreated for CreateFile too, when the file is still empty: only the
# FlushWithClose of the same file says its data is there (docs/pyfile-discovery.md).
_AZURE_NOT_YET_WRITTEN = "CreateFile"
_S3_CREATED = ("ObjectCreated:",)
_S3_DELETED = ("ObjectRemoved:", "LifecycleExpiration:")
_S3_SKIPPED = (
    "ObjectRestore:",
    "ObjectTagging:",
    "ObjectAcl:",
    "LifecycleTransition",
    "IntelligentTiering",
    "Replication:",
    "ReducedRedundancyLostObject",
)
_BRIDGE_CREATED = "Object Created"
_BRIDGE_DELETED = "Object Deleted"
_BRIDGE_SKIPPED = frozenset(
    (
        "Object Restore Initiated",
        "Object Restore Completed",
        "Object Restore Expired",
        "Object Tags Added",
        "Object Tags Deleted",
        "Object ACL Updated",
        "Object Storage Class Changed",
        "Object Access Tier Changed",
    )
)
SHOWN_CHARS = 60


@dataclass(frozen=True)
class FileEvent:
    """One file created or deleted, as a message names it.

    ``path`` is the filesystem path (``container/blob`` or ``bucket/key``); ``account`` the
    Azure storage account the event came from (None for S3, whose bucket starts the path).
    """

    kind: str  # CREATED or DELETED
    path: str
    account: str | None = None


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """Text taken from a message, safe for a log line: printable ASCII only (anything else is
    ``?``), at most ``limit`` characters."""
    text = value if isinstance(value, str) else repr(type(value).__name__)
    safe = "".join(c if " " <= c <= "~" else "?" for c in text[: limit + 1])
    return safe if len(safe) <= limit else safe[: limit - 3] + "..."


def parse_message(body: str | bytes) -> list[FileEvent]:
    """The file events in one queue message body (see the module docstring); raises
    :class:`NotAStorageEvent` and nothing else."""
    try:
        return _parse(body)
    except NotAStorageEvent:
        raise
    except RecursionError:
        raise NotAStorageEvent("nested too deeply") from None


def _parse(body: str | bytes) -> list[FileEvent]:
    document = _decode(body)
    if isinstance(document, dict) and document.get("Type") == "Notification":
        inner = document.get("Message")
        if not isinstance(inner, str):
            raise NotAStorageEvent("an SNS notification without a Message")
        document = _decode(inner)
    if isinstance(document, dict):
        if "Records" in document:
            return list(_s3_records(document["Records"]))
        if document.get("Event") == "s3:TestEvent":
            return []
        if "detail-type" in document:
            return list(_eventbridge(document))
    events = document if isinstance(document, list) else [document]
    if not events:
        raise NotAStorageEvent("an empty array of events")
    return [e for item in events for e in _azure_event(item)]


def _decode(body: str | bytes) -> Any:
    """JSON, or base64 of JSON (how Event Grid writes into Storage queues)."""
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError:
            raise NotAStorageEvent("not UTF-8 text") from None
    if not isinstance(body, str):
        raise NotAStorageEvent("not text")
    text = body.strip()
    if not text.startswith(("{", "[")):
        try:
            text = base64.b64decode(text, validate=True).decode("utf-8")
        except ValueError:  # binascii.Error, UnicodeDecodeError, non-ASCII input
            raise NotAStorageEvent("neither JSON nor base64-encoded JSON") from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise NotAStorageEvent("not valid JSON") from None


def _text(value: Any, what: str) -> str:
    """A non-empty string that Python can encode (no lone surrogates), else a rejection."""
    if not isinstance(value, str) or not value:
        raise NotAStorageEvent(f"{what} is not a non-empty string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise NotAStorageEvent(f"{what} is not valid Unicode") from None
    return value


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise NotAStorageEvent(f"{what} is not a JSON object")
    return value


# -- Azure Event Grid ---------------------------------------------------------------------
def _azure_event(item: Any) -> Iterator[FileEvent]:
    event = _object(item, "an event")
    kind = event.get("eventType", event.get("type"))
    if not isinstance(kind, str):
        raise NotAStorageEvent("a JSON object that is not a storage event (no eventType)")
    if kind in _AZURE_SKIPPED:
        return
    if kind not in (_AZURE_CREATED, _AZURE_DELETED):
        raise NotAStorageEvent(f"an event of type {shown(kind)!r}, which this source does not read")
    created = kind == _AZURE_CREATED
    name = kind.rsplit(".", 1)[-1]
    data = _object(event.get("data"), f"the data of a {name} event")
    subject = _text(event.get("subject"), f"the subject of a {name} event")
    topic = _text(event.get("topic", event.get("source")), f"the topic of a {name} event")
    api = data.get("api")
    if api is not None and not isinstance(api, str):
        raise NotAStorageEvent(f"the data.api of a {name} event is not a string")
    if created and api == _AZURE_NOT_YET_WRITTEN:
        return
    match = _BLOB_SUBJECT.match(subject)
    if match is None:
        raise NotAStorageEvent(f"a {name} event whose subject names no blob")
    account = _ACCOUNT.search(topic)
    if account is None:
        raise NotAStorageEvent(f"a {name} event whose topic names no storage account")
    yield FileEvent(
        CREATED if created else DELETED, f"{match.group(1)}/{match.group(2)}", account.group(1)
    )


# -- Amazon S3 ----------------------------------------------------------------------------
def _s3_records(records: Any) -> Iterator[FileEvent]:
    if not isinstance(records, list) or not records:
        raise NotAStorageEvent("Records is not a non-empty list")
    for item in records:
        record = _object(item, "a record")
        name = _text(record.get("eventName"), "the eventName of a record").removeprefix("s3:")
        if name.startswith(_S3_SKIPPED):
            continue
        if not name.startswith(_S3_CREATED + _S3_DELETED):
            raise NotAStorageEvent(f"an S3 {shown(name)!r} record, which this source does not read")
        s3 = _object(record.get("s3"), "the s3 of a record")
        yield _s3_file(name.startswith(_S3_CREATED), s3.get("bucket"), s3.get("object"))


def _eventbridge(document: dict[str, Any]) -> Iterator[FileEvent]:
    kind = document.get("detail-type")
    if document.get("source") != "aws.s3" or not isinstance(kind, str):
        raise NotAStorageEvent("an EventBridge event that is not from S3 (source aws.s3)")
    if kind in _BRIDGE_SKIPPED:
        return
    if kind not in (_BRIDGE_CREATED, _BRIDGE_DELETED):
        raise NotAStorageEvent(f"an S3 {shown(kind)!r} event, which this source does not read")
    detail = _object(document.get("detail"), "the detail of an EventBridge event")
    yield _s3_file(kind == _BRIDGE_CREATED, detail.get("bucket"), detail.get("object"))


def _s3_file(created: bool, bucket: Any, obj: Any) -> FileEvent:
    """``<bucket>/<key>`` from S3's ``bucket`` and ``object`` (the same in both schemas)."""
    name = _text(_object(bucket, "the bucket of an S3 event").get("name"), "a bucket name")
    key = _text(_object(obj, "the object of an S3 event").get("key"), "an object key")
    if "/" in name:
        raise NotAStorageEvent("a bucket name with a '/'")
    return FileEvent(CREATED if created else DELETED, f"{name}/{_text(unquote_plus(key), 'a key')}")
