"""Received SDK events -> one pyarrow RecordBatch in the read schema."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from pysparksources.eventhubs.schema import ARROW_SCHEMA, STRIPPED_SYSTEM_PROPERTIES

__all__ = ["to_record_batch"]


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _value_text(value: Any) -> str | None:
    """Strings as they are; other values JSON-serialized, like the Scala connector."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)):
        return _text(value)
    if hasattr(value, "isoformat"):
        return json.dumps(value.isoformat())
    try:
        return json.dumps(value, default=_text)
    except (TypeError, ValueError):
        return json.dumps(_text(value))


def _body(event: Any) -> bytes:
    body = event.body
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode()
    try:
        return b"".join(part if isinstance(part, bytes) else bytes(part) for part in body)
    except TypeError:
        return json.dumps(body, default=_text).encode()


def _string_map(props: dict[Any, Any] | None, skip: frozenset[str] = frozenset()) -> list[Any]:
    if not props:
        return []
    pairs = []
    for key, value in props.items():
        name = _text(key)
        if name not in skip:
            pairs.append((name, _value_text(value)))
    return pairs


def to_record_batch(events: list[Any], partition_id: str) -> pa.RecordBatch:
    """Columns built in one pass; ``publisher`` comes from x-opt-publisher when present."""
    system = [e.system_properties or {} for e in events]
    columns = [
        pa.array([_body(e) for e in events], pa.binary()),
        pa.array([partition_id] * len(events), pa.string()),
        pa.array([e.offset for e in events], pa.string()),
        pa.array([e.sequence_number for e in events], pa.int64()),
        pa.array([e.enqueued_time for e in events], pa.timestamp("us", tz="UTC")),
        pa.array(
            [_text(s[b"x-opt-publisher"]) if b"x-opt-publisher" in s else None for s in system],
            pa.string(),
        ),
        pa.array(
            [None if e.partition_key is None else _text(e.partition_key) for e in events],
            pa.string(),
        ),
        pa.array([_string_map(e.properties) for e in events], ARROW_SCHEMA.field(7).type),
        pa.array(
            [_string_map(s, STRIPPED_SYSTEM_PROPERTIES) for s in system],
            ARROW_SCHEMA.field(8).type,
        ),
    ]
    return pa.RecordBatch.from_arrays(columns, schema=ARROW_SCHEMA)
