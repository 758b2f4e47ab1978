"""JSON Lines that pyarrow's reader refuses but Spark's reads, parsed with Python's json.

pyarrow's JSON reader is fast but strict: it has no maps, and a float column holding Spark's
quoted ``"NaN"``/``"Infinity"`` fails it, as does a string column holding a number (Spark reads
the number's text). The reader falls back to this module for such a file; values come out in
the types :func:`arrow_read_type` asked pyarrow for (timestamps, dates and binary as text),
so both paths are finished by the same conversions.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pyarrow as pa

from pysparksources.errors import MalformedRecordError
from pysparksources.files import NAME
from pysparksources.files.values.conversions import EPOCH_MARK, spark_decimal

# The read type of TIMESTAMP text in JSON (see arrow_read_type).
TIMESTAMP_TEXT = pa.large_string()

__all__ = [
    "TIMESTAMP_TEXT",
    "RawTextNeeded",
    "arrow_read_type",
    "has_map",
    "json_objects",
    "json_value",
    "python_batches",
]

_NON_FINITE = {
    "NaN": float("nan"),
    "Infinity": float("inf"),
    "+Infinity": float("inf"),
    "-Infinity": float("-inf"),
    "INF": float("inf"),
    "+INF": float("inf"),
    "-INF": float("-inf"),
}


def arrow_read_type(target: pa.DataType) -> pa.DataType:
    """What to ask a JSON parser for: text for the types Spark writes as strings.

    A TIMESTAMP column's text is a large string: the mark that tells :func:`json_value` a
    number there is seconds since the epoch (Spark's rule) rather than text.
    """
    if pa.types.is_timestamp(target) and target.tz is not None:
        return TIMESTAMP_TEXT
    if pa.types.is_timestamp(target) or pa.types.is_date(target) or pa.types.is_binary(target):
        return pa.string()
    if pa.types.is_struct(target):
        return pa.struct([pa.field(f.name, arrow_read_type(f.type)) for f in target])
    if pa.types.is_map(target):
        return pa.map_(arrow_read_type(target.key_type), arrow_read_type(target.item_type))
    if pa.types.is_list(target) or pa.types.is_large_list(target):
        return pa.list_(arrow_read_type(target.value_type))
    return target


def has_map(target: pa.DataType) -> bool:
    if pa.types.is_map(target):
        return True
    if pa.types.is_struct(target):
        return any(has_map(f.type) for f in target)
    if pa.types.is_list(target) or pa.types.is_large_list(target):
        return has_map(target.value_type)
    return False


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _timestamp_text(value: Any) -> str:
    """A TIMESTAMP value: text as it is, a whole number as epoch seconds (EPOCH_MARK + micros).

    Spark multiplies a JSON integer by 1,000,000 in 64-bit arithmetic, wrapping on overflow;
    a number beyond 64 bits, a fraction, a boolean or an object is malformed.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, int) or not -(2**63) <= value < 2**63:
        raise MalformedRecordError(NAME, f"{_shown(value)[:40]!r} is not a timestamp")
    micros = (value * 1_000_000 + 2**63) % 2**64 - 2**63
    return f"{EPOCH_MARK}{micros}"


class RawTextNeeded(Exception):
    """An object or array goes into a STRING column: parse the line again keeping its text."""


class _RawDict(dict[str, Any]):
    raw = ""


class _RawList(list[Any]):
    raw = ""


def _text(value: Any) -> str:
    """A JSON value as a string column holds it: Spark keeps the value's text as written."""
    if isinstance(value, str):
        return value
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (dict, list)):
        if not isinstance(value, (_RawDict, _RawList)):
            raise RawTextNeeded
        return value.raw
    return _shown(value)


def _shown(value: Any) -> str:
    """A value in a message."""
    return json.dumps(_plain(value), separators=(",", ":"), ensure_ascii=False)


def _value(value: Any, dtype: pa.DataType) -> Any:
    if value is None:
        return None
    if dtype == TIMESTAMP_TEXT:
        return _timestamp_text(value)
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return _text(value)
    if pa.types.is_floating(dtype):
        if isinstance(value, str):
            if value not in _NON_FINITE:
                raise MalformedRecordError(NAME, f"{value!r} is not a {dtype} value")
            return _NON_FINITE[value]
        if isinstance(value, bool):
            raise MalformedRecordError(NAME, f"{value!r} is not a {dtype} value")
        return float(value)
    if pa.types.is_integer(dtype):
        if isinstance(value, bool) or not isinstance(value, int):
            raise MalformedRecordError(NAME, f"{value!r} is not a {dtype} value")
        return value
    if pa.types.is_decimal(dtype):
        if isinstance(value, bool) or not isinstance(value, (int, Decimal, str)):
            raise MalformedRecordError(NAME, f"{_shown(value)[:40]!r} is not a {dtype} value")
        return spark_decimal(value if isinstance(value, str) else Decimal(value), dtype)
    if pa.types.is_boolean(dtype):
        if not isinstance(value, bool):
            raise MalformedRecordError(NAME, f"{value!r} is not a boolean value")
        return value
    if pa.types.is_struct(dtype):
        if not isinstance(value, dict):
            raise MalformedRecordError(NAME, f"{_shown(value)[:40]!r} is not an object")
        return {f.name: _value(value.get(f.name), f.type) for f in dtype}
    if pa.types.is_map(dtype):
        if not isinstance(value, dict):
            raise MalformedRecordError(NAME, f"{_shown(value)[:40]!r} is not an object")
        return [(_value(k, dtype.key_type), _value(v, dtype.item_type)) for k, v in value.items()]
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        if not isinstance(value, list):
            raise MalformedRecordError(NAME, f"{_shown(value)[:40]!r} is not an array")
        return [_value(v, dtype.value_type) for v in value]
    return value


_DECODER = json.JSONDecoder(parse_float=Decimal)


def _raw_object(s_and_end: tuple[str, int], *args: Any) -> tuple[dict[str, Any], int]:
    text, start = s_and_end
    value, end = json.decoder.JSONObject(s_and_end, *args)  # type: ignore[attr-defined]
    kept = _RawDict(value)
    kept.raw = text[start - 1 : end]
    return kept, end


def _raw_array(s_and_end: tuple[str, int], *args: Any) -> tuple[list[Any], int]:
    text, start = s_and_end
    value, end = json.decoder.JSONArray(s_and_end, *args)  # type: ignore[attr-defined]
    kept = _RawList(value)
    kept.raw = text[start - 1 : end]
    return kept, end


def _raw_decoder() -> json.JSONDecoder:
    """A decoder whose objects and arrays keep their text (the pure-Python scanner: slower,
    used only for lines that put an object or array into a STRING column)."""
    decoder = json.JSONDecoder(parse_float=Decimal)
    decoder.parse_object = _raw_object  # type: ignore[attr-defined]
    decoder.parse_array = _raw_array  # type: ignore[attr-defined]
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    return decoder


_RAW_DECODER = _raw_decoder()


def json_objects(line: str, keep_text: bool = False) -> list[dict[str, Any]]:
    """The records of one JSON Lines line, read as Spark's reader reads it.

    Spark reads the first JSON value of a line and ignores what follows it; an object is one
    record, an array of objects one record each. Anything else raises ``ValueError``.
    ``keep_text``: objects and arrays keep their text (see :class:`RawTextNeeded`).
    """
    start = len(line) - len(line.lstrip())
    decoder = _RAW_DECODER if keep_text else _DECODER
    try:
        value, _ = decoder.raw_decode(line, start)
    except ValueError:
        if "'" not in line:
            raise
        # Spark's parser takes single-quoted names and strings (allowSingleQuotes).
        value, _ = decoder.raw_decode(_double_quoted(line), start)
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list) and all(isinstance(item, dict) for item in value):
        return value
    raise MalformedRecordError(NAME, "a line is neither a JSON object nor an array of objects")


_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|\'((?:[^\'\\]|\\.)*)\'', re.DOTALL)


def _double_quoted(line: str) -> str:
    """``line`` with its single-quoted strings written in double quotes."""

    def requote(match: re.Match[str]) -> str:
        inner = match.group(1)
        if inner is None:
            return match.group(0)
        inner = re.sub(r"\\'", "'", inner).replace('"', '\\"')
        return f'"{inner}"'

    return _STRINGS.sub(requote, line)


def json_value(value: Any, dtype: pa.DataType) -> Any:
    """``value`` as ``dtype`` (a read type); :class:`MalformedRecordError` if it does not fit."""
    return _value(value, dtype)


def _records(line: str, schema: pa.Schema) -> list[dict[str, Any]]:
    def typed(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{fld.name: _value(r.get(fld.name), fld.type) for fld in schema} for r in records]

    try:
        return typed(json_objects(line))
    except RawTextNeeded:
        return typed(json_objects(line, keep_text=True))


def python_batches(
    f: Any, encoding: str, schema: pa.Schema, batch_rows: int, skip: int = 0
) -> Iterator[pa.RecordBatch]:
    """``schema``-typed batches (read types) of a JSON Lines file, less its first ``skip`` rows."""
    text = io.TextIOWrapper(f, encoding=encoding, newline=None)
    struct = pa.struct(list(schema))
    rows: list[dict[str, Any]] = []
    seen = 0
    try:
        for number, line in enumerate(text, 1):
            if not line.strip():
                continue
            seen += 1
            if seen <= skip:
                continue
            try:
                rows.extend(_records(line, schema))
            except ValueError as error:  # a MalformedRecordError, or json's own
                reason = error.detail if isinstance(error, MalformedRecordError) else error
                raise MalformedRecordError(NAME, f"line {number}: {reason}") from None
            if len(rows) >= batch_rows:
                yield pa.RecordBatch.from_struct_array(pa.array(rows, struct))
                rows = []
    finally:
        text.detach()  # the caller's file stays open: it may read it again
    if rows:
        yield pa.RecordBatch.from_struct_array(pa.array(rows, struct))
