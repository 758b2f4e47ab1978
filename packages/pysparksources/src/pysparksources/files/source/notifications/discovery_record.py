"""``discovery.json``: what notification discovery remembers across runs, read back checked.

The record sits in the source log folder beside the log, and like the log it decides what the
stream reads: ``startedMs`` (when the stream first started; with ``includeExistingFiles=false``
a backfill skips files older than that), ``existingListed`` (the first listing's files are all
in the log) and ``lastBackfillMs``. A record that is not what this module writes is a
:class:`CheckpointError` naming the file and what to do, never a guess: resetting it would
silently change which files the stream reads. It is written whole (on local disk through a
temporary file and a rename), so a crash cannot leave half of one.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass, replace
from typing import Any

from pysparksources.errors import CheckpointError
from pysparksources.files import NAME
from pysparksources.files.storage.filesystem import FileLocation

__all__ = ["MAX_BYTES", "RECORD", "DiscoveryRecord", "parse_record", "read_record", "write_record"]

RECORD = "discovery.json"
MAX_BYTES = 64 * 1024  # what this module writes is under 100 bytes
# A time later than the clock by more than this is not one a driver wrote (clocks of two
# drivers of one stream may differ a little; a year 9999 would stop every backfill).
FUTURE_SLACK_MS = 24 * 3600 * 1000
_RESET = (
    "it is pyfile's discovery record (discovery=notifications). Delete the file to start it "
    "again: the stream then counts as started now (with includeExistingFiles=false, backfill "
    "listings skip files older than that) and, with includeExistingFiles=true, lists the path "
    "once more (files already in the source log are not read again)"
)


@dataclass(frozen=True)
class DiscoveryRecord:
    started_ms: int
    existing_listed: bool = False
    last_backfill_ms: int | None = None

    def updated(self, **changes: Any) -> DiscoveryRecord:
        return replace(self, **changes)

    def to_json(self) -> bytes:
        record: dict[str, Any] = {"startedMs": self.started_ms}
        if self.existing_listed:
            record["existingListed"] = True
        if self.last_backfill_ms is not None:
            record["lastBackfillMs"] = self.last_backfill_ms
        return json.dumps(record, sort_keys=True).encode("utf-8")


def parse_record(data: bytes, where: str, now_ms: int) -> DiscoveryRecord:
    """The record in ``data`` (the bytes of ``where``), or a :class:`CheckpointError`."""

    def broken(problem: str) -> CheckpointError:
        return CheckpointError(NAME, f"{where} {problem}; {_RESET}")

    if len(data) > MAX_BYTES:
        raise broken(f"is larger than {MAX_BYTES} bytes")
    try:
        record = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise broken("is not JSON text") from None
    if not isinstance(record, dict):
        raise broken("does not hold a JSON object")

    def moment(key: str) -> int | None:
        value = record.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise broken(f"has {key}={_short(value)}, not a time in epoch milliseconds")
        if not 0 <= value <= now_ms + FUTURE_SLACK_MS:
            raise broken(f"has {key}={_short(value)}, which is not a time up to now")
        return value

    started = moment("startedMs")
    if started is None:
        raise broken("has no startedMs")
    listed = record.get("existingListed", False)
    if not isinstance(listed, bool):
        raise broken(f"has existingListed={_short(listed)}, not true or false")
    return DiscoveryRecord(started, listed, moment("lastBackfillMs"))


def _short(value: Any) -> str:
    """A value read from the record, for a message: scalars only, at most 40 characters."""
    if isinstance(value, dict):
        return "a JSON object"
    if isinstance(value, list):
        return "a JSON array"
    text = json.dumps(value) if isinstance(value, (str, bool)) or value is None else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def read_record(location: FileLocation, now_ms: int) -> DiscoveryRecord | None:
    """The record at ``location``, None when there is none yet."""
    fs: Any = location.filesystem()
    try:
        data = fs.cat_file(location.path, start=0, end=MAX_BYTES + 1)
    except FileNotFoundError:
        return None
    return parse_record(bytes(data), location.url(), now_ms)


def write_record(location: FileLocation, record: DiscoveryRecord) -> None:
    """Write ``record`` whole: readers see the old or the new one, never a part."""
    data = record.to_json()
    folder = location.path.rsplit("/", 1)[0]
    if location.protocol in ("file", "local"):
        os.makedirs(folder, exist_ok=True)
        temporary = f"{folder}/.{RECORD}.{uuid.uuid4().hex}.tmp"
        try:
            with open(temporary, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, location.path)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
        return
    fs: Any = location.filesystem()
    fs.makedirs(folder, exist_ok=True)
    fs.pipe_file(location.path, data)  # one PUT on an object store: all or nothing
