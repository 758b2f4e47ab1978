"""Storage event messages -> file events: pure functions, no client, no network.

Two producers write into the queues pyfile reads with ``discovery=notifications``:

- Azure Event Grid (``Microsoft.Storage.BlobCreated`` / ``BlobDeleted``) into a Storage queue.
  The queue message is the event JSON, base64-encoded (plain JSON is accepted too), one event
  or an array of them, in the Event Grid schema (``eventType``, ``subject``, ``eventTime``) or
  the CloudEvents 1.0 schema (``type``, ``subject``, ``time``). The blob's path comes from the
  subject (``/blobServices/default/containers/<c>/blobs/<path>``), which is the same for the
  Blob and the Data Lake endpoints, as ``<container>/<path>``: adlfs's path.
- Amazon S3 event notifications into SQS: ``{"Records": [...]}`` with ``eventName``
  ``ObjectCreated:*`` / ``ObjectRemoved:*`` and a URL-encoded ``s3.object.key`` (a space is
  ``+``; some servers also encode ``/``), as ``<bucket>/<key>``: s3fs's path. The same body
  wrapped by SNS (``{"Type": "Notification", "Message": "<json>"}``) is unwrapped. S3's
  ``s3:TestEvent`` carries no records.

Anything else (other event types, ADLS ``CreateFile`` events, which fire before the data is
flushed) yields no event, so the message is acknowledged and skipped; a body that is not one of
these formats raises :class:`ValueError` (the caller logs and acknowledges it: a poison message
must not stop the stream, and redelivering it would not change it).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any
from urllib.parse import unquote_plus

__all__ = [
    "FileEvent",
    "NotAStorageEvent",
    "is_later",
    "parse_message",
]


class NotAStorageEvent(ValueError):
    """A queue message whose body is not a storage event this source reads; the discovery
    logs it and deletes the message, so it never reaches a user as an error."""


CREATED = "created"
DELETED = "deleted"
_BLOB_SUBJECT = re.compile(r"^/blobServices/default/containers/([^/]+)/blobs/(.+)$")
# ADLS Gen2 fires BlobCreated for CreateFile too, when the file is still empty: only the
# FlushWithClose of the same file says its data is there (docs/pyfile-discovery.md).
_AZURE_NOT_YET_WRITTEN = {"CreateFile"}
_FRACTION = re.compile(r"\.(\d+)")


@dataclass(frozen=True)
class FileEvent:
    """One file created or deleted, as the storage service reported it.

    ``path`` is the filesystem path (``container/blob`` or ``bucket/key``); ``size`` is -1 when
    the event has none (deletions); ``sequencer`` orders events of one path (None when the
    producer sends none, as moto does: the event time orders them then).
    """

    kind: str  # CREATED or DELETED
    path: str
    size: int
    time_ms: int
    sequencer: str | None = None


def is_later(event: FileEvent, other: FileEvent) -> bool:
    """Whether ``event`` happened after ``other`` (both of one path).

    Sequencers are compared when both have one: Event Grid documents them as strings that
    order by comparison, S3 as hexadecimal numbers of possibly different lengths (compared
    here as numbers). Otherwise the event times; a tie is "not later", so a creation is never
    dropped for a deletion that cannot be shown to have come after it.
    """
    if event.sequencer is not None and other.sequencer is not None:
        a, b = event.sequencer, other.sequencer
        if _is_hex(a) and _is_hex(b):
            return int(a, 16) > int(b, 16)
        return a > b
    return event.time_ms > other.time_ms


def _is_hex(text: str) -> bool:
    return bool(text) and all(c in "0123456789abcdefABCDEF" for c in text)


def parse_message(body: str) -> list[FileEvent]:
    """The file events in one queue message body (see the module docstring)."""
    document = _decode(body)
    if isinstance(document, dict) and document.get("Type") == "Notification":
        inner = document.get("Message")
        if not isinstance(inner, str):
            raise NotAStorageEvent("an SNS notification without a Message")
        document = _decode(inner)
    if isinstance(document, dict) and "Records" in document:
        return list(_s3_events(document["Records"]))
    if isinstance(document, dict) and document.get("Event") == "s3:TestEvent":
        return []
    events = document if isinstance(document, list) else [document]
    return [e for item in events for e in _azure_event(item)]


def _decode(body: str) -> Any:
    """JSON, or base64 of JSON (how Event Grid writes into Storage queues)."""
    text = body.strip()
    if not text.startswith(("{", "[")):
        try:
            text = base64.b64decode(text, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise NotAStorageEvent("neither JSON nor base64-encoded JSON") from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise NotAStorageEvent("not valid JSON") from None


def _time_ms(text: Any) -> int:
    """Epoch ms of an ISO-8601 time; Event Grid sends 7 fractional digits, Python reads 6."""
    if not isinstance(text, str):
        raise NotAStorageEvent("an event without a time")
    text = _FRACTION.sub(lambda m: "." + m.group(1)[:6].ljust(6, "0"), text.replace("Z", "+00:00"))
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000)


def _azure_event(item: Any) -> Iterator[FileEvent]:
    if not isinstance(item, dict):
        raise NotAStorageEvent("an event that is not a JSON object")
    kind = item.get("eventType", item.get("type"))
    if kind == "Microsoft.Storage.BlobCreated":
        created = True
    elif kind == "Microsoft.Storage.BlobDeleted":
        created = False
    else:
        return  # another event type: nothing for a file source
    data = item.get("data")
    subject = item.get("subject")
    if not isinstance(data, dict) or not isinstance(subject, str):
        raise NotAStorageEvent(f"a {kind} event without data or subject")
    if created and data.get("api") in _AZURE_NOT_YET_WRITTEN:
        return
    match = _BLOB_SUBJECT.match(subject)
    if match is None:
        raise NotAStorageEvent(f"a {kind} event whose subject names no blob")
    yield _file_event(
        created,
        f"{match.group(1)}/{match.group(2)}",
        data.get("contentLength", -1) if created else -1,
        item.get("eventTime", item.get("time")),
        data.get("sequencer"),
        f"a {kind} event with a non-integer contentLength",
    )


def _s3_events(records: Any) -> Iterator[FileEvent]:
    if not isinstance(records, list):
        raise NotAStorageEvent("Records is not a list")
    for record in records:
        if not isinstance(record, dict):
            raise NotAStorageEvent("a record that is not a JSON object")
        name = str(record.get("eventName", "")).removeprefix("s3:")
        if name.startswith("ObjectCreated:"):
            created = True
        elif name.startswith("ObjectRemoved:"):
            created = False
        else:
            continue  # restores, replication, lifecycle transitions...
        s3 = record.get("s3")
        if not isinstance(s3, dict):
            raise NotAStorageEvent(f"an {name} record without s3")
        bucket = s3.get("bucket", {}).get("name")
        obj = s3.get("object", {})
        key = obj.get("key")
        if not isinstance(bucket, str) or not isinstance(key, str):
            raise NotAStorageEvent(f"an {name} record without bucket name or object key")
        yield _file_event(
            created,
            f"{bucket}/{unquote_plus(key)}",
            obj.get("size", -1) if created else -1,
            record.get("eventTime"),
            obj.get("sequencer"),
            f"an {name} record with a non-integer size",
        )


def _file_event(
    created: bool, path: str, size: Any, when: Any, sequencer: Any, bad_size: str
) -> FileEvent:
    """One file's event from either schema; ``bad_size`` says what is wrong with a size that is
    not an integer. An empty or non-string sequencer counts as none."""
    if isinstance(size, bool) or not isinstance(size, int):
        raise NotAStorageEvent(bad_size)
    return FileEvent(
        CREATED if created else DELETED,
        path,
        size,
        _time_ms(when),
        sequencer if isinstance(sequencer, str) and sequencer else None,
    )
