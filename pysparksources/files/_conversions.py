"""Columns as parsed from a file, converted to the Spark type the schema asks for.

Text formats hand over strings for the types they cannot type themselves (timestamps, dates,
booleans, JSON's base64 binary); those are parsed here the way Spark's csv/json readers parse
them. Zone-less timestamps are wall times in the reader's zone (see :mod:`_zones`). Nested
columns (structs, arrays, maps) are converted child by child.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from pysparksources.files._zones import instants_from_wall_times

__all__ = ["Parsing", "check_datetime_pattern", "conform", "spark_to_strptime"]

_TOKENS = {
    "yyyy": "%Y",
    "yy": "%y",
    "MM": "%m",
    "dd": "%d",
    "HH": "%H",
    "hh": "%I",
    "mm": "%M",
    "ss": "%S",
    "a": "%p",
    "XXX": "%z",
    "XX": "%z",
    "X": "%z",
    "Z": "%z",
    "ZZZ": "%z",
}
_TOKEN_RE = re.compile(r"'[^']*'|([A-Za-z])\1*")
_TZ_SUFFIX = r"(Z|[+-]\d\d(:?\d\d)?)$"
_NAIVE = pa.timestamp("us")
_UTC = pa.timestamp("us", tz="UTC")


def spark_to_strptime(pattern: str) -> str | None:
    """A Spark datetime pattern as a strptime format; None when a token is not supported."""
    out: list[str] = []
    pos = 0
    for match in _TOKEN_RE.finditer(pattern):
        out.append(pattern[pos : match.start()].replace("%", "%%"))
        token = match.group(0)
        if token.startswith("'"):
            out.append(token[1:-1].replace("%", "%%") or "'")
        elif token in _TOKENS:
            out.append(_TOKENS[token])
        else:
            return None
        pos = match.end()
    out.append(pattern[pos:].replace("%", "%%"))
    return "".join(out)


def check_datetime_pattern(pattern: str) -> bool:
    return spark_to_strptime(pattern) is not None


@dataclass(frozen=True)
class Parsing:
    """How one task parses text values: the zone of wall times and the optional patterns."""

    zone: str
    date_format: str | None = None
    timestamp_format: str | None = None

    @property
    def date_strptime(self) -> str | None:
        return None if self.date_format is None else spark_to_strptime(self.date_format)

    @property
    def timestamp_strptime(self) -> str | None:
        return None if self.timestamp_format is None else spark_to_strptime(self.timestamp_format)


def _wall_times_as(wall: pa.Array, target: pa.DataType, zone: str) -> pa.Array:
    """Naive wall times as ``target``: kept for TIMESTAMP_NTZ, placed in ``zone`` otherwise."""
    if target.tz is None:
        return wall.cast(target)
    return instants_from_wall_times(wall, zone).cast(target)


def timestamps_from_strings(values: pa.Array, target: pa.DataType, parsing: Parsing) -> pa.Array:
    """Strings -> timestamps; an offset in the text wins, else the text is a wall time."""
    values = pc.utf8_trim_whitespace(values)
    fmt = parsing.timestamp_strptime
    if fmt is not None:
        parsed = pc.strptime(values, format=fmt, unit="us", error_is_null=False)
        if parsed.type.tz is None:
            return _wall_times_as(parsed, target, parsing.zone)
        return parsed.cast(target)
    if target.tz is None:
        return values.cast(_NAIVE).cast(target)
    has_zone = pc.fill_null(pc.match_substring_regex(values, _TZ_SUFFIX), False)
    if not pc.any(has_zone).as_py():
        return _wall_times_as(values.cast(_NAIVE), target, parsing.zone)
    null = pa.scalar(None, pa.string())
    zoned = pc.if_else(has_zone, values, null).cast(_UTC)
    wall = pc.if_else(has_zone, null, values).cast(_NAIVE)
    result: pa.Array = pc.if_else(has_zone, zoned, _wall_times_as(wall, _UTC, parsing.zone))
    return result.cast(target)


def dates_from_strings(values: pa.Array, parsing: Parsing) -> pa.Array:
    values = pc.utf8_trim_whitespace(values)
    fmt = parsing.date_strptime
    if fmt is None:
        return values.cast(pa.date32())
    return pc.strptime(values, format=fmt, unit="s", error_is_null=False).cast(pa.date32())


def _base64(values: pa.Array) -> pa.Array:
    """JSON's binary values: Spark writes them base64-encoded."""
    decoded = [None if v is None else base64.b64decode(v) for v in values.to_pylist()]
    return pa.array(decoded, pa.binary())


def _whole(column: pa.Array) -> pa.Array:
    """The same values at offset 0, so child arrays line up with their parent."""
    return pa.concat_arrays([column]) if column.offset else column


def _nested(column: pa.Array, target: pa.DataType, parsing: Parsing) -> pa.Array:
    column = _whole(column)
    mask = column.is_null() if column.null_count else None
    if pa.types.is_struct(target):
        children = column.flatten()
        by_name = {column.type.field(i).name: children[i] for i in range(column.type.num_fields)}
        arrays = []
        for fld in target:
            child = by_name.get(fld.name)
            arrays.append(
                pa.nulls(len(column), fld.type)
                if child is None
                else conform(child, fld.type, parsing)
            )
        return pa.StructArray.from_arrays(arrays, fields=list(target), mask=mask)
    if pa.types.is_map(target):
        keys = conform(column.keys, target.key_type, parsing)
        items = conform(column.items, target.item_type, parsing)
        return pa.MapArray.from_arrays(column.offsets, keys, items, type=target, mask=mask)
    values = conform(column.values, target.value_type, parsing)
    return pa.ListArray.from_arrays(column.offsets, values, type=target, mask=mask)


def conform(column: pa.Array | pa.ChunkedArray, target: pa.DataType, parsing: Parsing) -> pa.Array:
    """``column`` as ``target``, parsing text the way Spark's csv/json readers do."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if column.type == target:
        return column
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        if pa.types.is_timestamp(target):
            return timestamps_from_strings(column, target, parsing)
        if pa.types.is_date32(target):
            return dates_from_strings(column, parsing)
        if pa.types.is_boolean(target):
            return pc.utf8_lower(pc.utf8_trim_whitespace(column)).cast(target)
        if pa.types.is_binary(target):
            return _base64(column)
    if pa.types.is_nested(target) and pa.types.is_nested(column.type):
        return _nested(column, target, parsing)
    # Naive timestamps (parquet without zone) are UTC: Arrow's cast assumes exactly that.
    return column.cast(target)
