"""Starting and ending positions (and partition lists): the options' grammars, Scala's forms.

A position is parsed on the driver at query start (errors name the option) and resolved to a
sequence number against the partition's properties; offsets and enqueued times need one
receive to find the first event at or after them, done by the caller (see _metadata.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

__all__ = [
    "CHECKPOINT_STORE",
    "START",
    "Position",
    "PositionError",
    "parse_partition_ids",
    "parse_position",
    "parse_positions",
]


class PositionError(ValueError):
    """A position (or partition list) the option parser turns into an OptionError; the message
    says what is accepted."""


ACCEPTED = (
    'a JSON object such as {"seqNo": 5, "isInclusive": true}, {"offset": "-1"}, '
    '{"enqueuedTime": "2026-01-01T00:00:00Z"}, or one of start, earliest, -1, end, latest, '
    "@latest, checkpointStore"
)


@dataclass(frozen=True)
class Position:
    """``kind`` is start, end, seqNo, offset, enqueuedTime or checkpointStore (after the
    consumer group's checkpoint in the Event Hubs checkpoint store)."""

    kind: str
    seq_no: int = -1
    offset: str = ""
    enqueued_time: datetime | None = None
    inclusive: bool = True

    def describe(self) -> str:
        if self.kind == "seqNo":
            return f"seqNo {self.seq_no} ({'inclusive' if self.inclusive else 'exclusive'})"
        if self.kind == "offset":
            return f"offset {self.offset}"
        if self.kind == "enqueuedTime":
            return f"enqueuedTime {self.enqueued_time}"
        return self.kind

    def resolve_simple(self, beginning: int, latest: int) -> int | None:
        """The next sequence number to read for start/end/seqNo; None for offset/time."""
        if self.kind == "start":
            return min(beginning, latest)
        if self.kind == "end":
            return latest
        if self.kind == "seqNo":
            return self.seq_no if self.inclusive else self.seq_no + 1
        return None


START = Position("start")
END = Position("end")
CHECKPOINT_STORE = Position("checkpointStore")
_WORDS = {"start": START, "earliest": START, "-1": START, "end": END, "latest": END}
_WORDS["@latest"] = END
_WORDS["checkpointstore"] = CHECKPOINT_STORE


def _parse_time(value: Any) -> datetime:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value / 1000, tz=timezone.utc)  # epoch milliseconds
        except (OverflowError, ValueError, OSError):
            raise PositionError(f"enqueuedTime {value!r} is not a time in epoch ms") from None
    if not isinstance(value, str):
        raise PositionError("enqueuedTime must be an ISO-8601 string or epoch milliseconds")
    text = value.strip().replace("Z", "+00:00")
    try:
        parsed = datetime.fromisoformat(text)
    except (ValueError, OverflowError):
        raise PositionError(f"enqueuedTime {value!r} is not an ISO-8601 time") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def _from_dict(obj: dict[str, Any]) -> Position:
    known = {"seqNo", "offset", "enqueuedTime", "isInclusive"}
    extra = set(obj) - known
    if extra:
        raise PositionError(f"unknown key(s) {sorted(extra)}")
    inclusive = obj.get("isInclusive", True)
    if not isinstance(inclusive, bool):
        raise PositionError("isInclusive must be true or false")
    # The Scala connector wrote every field (unused ones null / -1); pick the meaningful one.
    if obj.get("enqueuedTime") is not None:
        return Position("enqueuedTime", enqueued_time=_parse_time(obj["enqueuedTime"]))
    offset = obj.get("offset")
    if offset is not None:
        text = str(offset).strip()
        if text == "-1":
            return START
        if text == "@latest":
            return END
        if not (text.isascii() and text.isdigit()) or len(text) > 20:
            raise PositionError(f"offset {offset!r} must be digits, '-1' or '@latest'")
        return Position("offset", offset=text, inclusive=inclusive)
    seq = obj.get("seqNo")
    if isinstance(seq, int) and not isinstance(seq, bool) and 0 <= seq < 2**63:
        return Position("seqNo", seq_no=seq, inclusive=inclusive)
    if seq == -1:
        return START
    raise PositionError("give one of seqNo (>= 0), offset or enqueuedTime")


def parse_position(text: str) -> Position:
    word = text.strip().lower()
    if word in _WORDS:
        return _WORDS[word]
    obj = _json(text, "not JSON and not a known word")
    if isinstance(obj, int) and not isinstance(obj, bool):
        return parse_position(json.dumps({"seqNo": obj}))
    if not isinstance(obj, dict):
        raise PositionError("expected a JSON object")
    return _from_dict(obj)


def _partition_key(key: str) -> str:
    """``"0"`` or the Scala connector's ``{"ehName": "hub", "partitionId": 0}`` key."""
    text = key.strip()
    if _is_partition_id(text):
        return str(int(text))
    obj = _json(text, f"partition key {key[:40]!r} is not a partition id")
    if isinstance(obj, dict) and _is_partition_id(str(obj.get("partitionId", ""))):
        return str(int(obj["partitionId"]))
    raise PositionError(f"partition key {key[:40]!r} is not a partition id")


def _is_partition_id(text: str) -> bool:
    return text.isascii() and text.isdigit() and len(text) <= 9


def _json(text: str, problem: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: "[[[[..." nested beyond the stack
        raise PositionError(problem) from None


def parse_positions(text: str) -> dict[str, Position]:
    """Per-partition positions: ``{"0": {"seqNo": 5}, "1": "start"}``."""
    obj = _json(text, "not JSON")
    if not isinstance(obj, dict):
        raise PositionError("expected a JSON object keyed by partition id")
    result: dict[str, Position] = {}
    for key, value in obj.items():
        pid = _partition_key(key)
        if isinstance(value, dict):
            result[pid] = _from_dict(value)
        elif isinstance(value, (str, int)) and not isinstance(value, bool):
            result[pid] = parse_position(json.dumps(value) if isinstance(value, int) else value)
        else:
            raise PositionError(f"partition {pid}: expected a position object")
    return result


def parse_partition_ids(text: str) -> tuple[str, ...]:
    """``0,2``: partition ids separated by commas, each once, sorted numerically."""
    accepted = "expected partition ids separated by commas, such as 0,2"
    items = [item.strip() for item in text.split(",")]
    if not all(_is_partition_id(item) for item in items):
        raise PositionError(accepted)
    ids = [str(int(item)) for item in items]
    if len(set(ids)) != len(ids):
        raise PositionError(accepted + ", each once")
    return tuple(sorted(ids, key=int))
