"""Arrow columns rendered as text for the json and csv formats, vectorized.

Python's json module costs about a microsecond per row and Arrow's own timestamp-to-string
cast about 1.6 µs per value, either of which alone would make the sink slower than Spark's
JSON writer. Here timestamps and dates are laid out as fixed-width ISO 8601 bytes with NumPy,
numbers go through Arrow's casts, and each JSON Lines batch is one string-join kernel call.
Types without a fast path (binary, nested) fall back to per-value Python.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any, TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "concatenated",
    "csv_header",
    "csv_lines",
    "iso_dates",
    "iso_timestamps",
    "json_lines",
    "json_values",
]

_US_PER_DAY = 86_400_000_000
_CONTROL = r"[\x00-\x1f]"


def _civil(days: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Year, month, day of days since 1970-01-01 (proleptic Gregorian), all int64."""
    z = days + 719_468
    era = np.floor_divide(z, 146_097)
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = np.where(mp < 10, mp + 3, mp - 9)
    year = yoe + era * 400 + (month <= 2)
    return year, month, day


# "00".."99" as byte pairs: one fancy-index per two digits instead of a divide per digit.
_PAIRS = np.array([[48 + i // 10, 48 + i % 10] for i in range(100)], dtype=np.uint8)
_PAIRS16 = _PAIRS.view(np.uint16).ravel()  # a 1-D gather is several times faster than 2-D


def _put2(out: np.ndarray, column: int, value: np.ndarray) -> None:
    out[:, column : column + 2] = _PAIRS16[value].view(np.uint8).reshape(-1, 2)


def _fixed_width(out: np.ndarray, valid: pa.Array | None) -> pa.Array:
    rows, width = out.shape
    offsets = pa.py_buffer(np.arange(rows + 1, dtype=np.int32) * width)
    strings = pa.StringArray.from_buffers(rows, offsets, pa.py_buffer(np.ascontiguousarray(out)))
    return strings if valid is None else pc.if_else(valid, strings, pa.scalar(None, pa.string()))


def _date_bytes(out: np.ndarray, days: np.ndarray) -> None:
    # Batches span few distinct days: convert the range once, then index into it.
    first = int(days.min()) if days.size else 0
    span = int(days.max()) - first + 1 if days.size else 0
    if 0 < span <= max(len(days), 1024):
        table = np.empty((span, 10), dtype=np.uint8)
        _civil_bytes(table, np.arange(first, first + span, dtype=np.int64))
        out[:, 0:10] = table[0] if span == 1 else np.take(table, days - first, axis=0)
    else:
        _civil_bytes(out, days)


def _civil_bytes(out: np.ndarray, days: np.ndarray) -> None:
    year, month, day = _civil(days)
    _put2(out, 0, year // 100)
    _put2(out, 2, year % 100)
    out[:, 4] = out[:, 7] = ord("-")
    _put2(out, 5, month)
    _put2(out, 8, day)


def _in_range(days: np.ndarray) -> bool:
    # 0001-01-01 .. 9999-12-31 fit four digits.
    return bool(days.size == 0 or (days.min() >= -719_162 and days.max() <= 2_932_896))


def _seconds_bytes(out: np.ndarray, seconds: np.ndarray) -> None:
    """``yyyy-mm-ddThh:mm:ss`` of whole epoch seconds into ``out[:, :19]``."""
    days = np.floor_divide(seconds, 86_400)
    of_day = (seconds - days * 86_400).astype(np.int32)
    _date_bytes(out, days)
    out[:, 10] = ord("T")
    _put2(out, 11, of_day // 3600)
    out[:, 13] = out[:, 16] = ord(":")
    _put2(out, 14, of_day // 60 % 60)
    _put2(out, 17, of_day % 60)


# A fixed-width rendering: its width in bytes and a function that writes rows into a view.
Fixed: TypeAlias = tuple[int, Callable[[np.ndarray], None]]


def _timestamp_fixed(column: pa.Array) -> Fixed | None:
    """``2024-05-01T12:00:00.000000[Z]`` per row; None outside years 1..9999."""
    zoned = column.type.tz is not None
    micros = pc.cast(column, pa.timestamp("us", tz=column.type.tz)).view(pa.int64())
    values = micros.fill_null(0).to_numpy()
    seconds = np.floor_divide(values, 1_000_000)
    bounds = np.array([seconds.min(), seconds.max()]) if seconds.size else seconds
    if not _in_range(np.floor_divide(bounds, 86_400)):
        return None

    def render(out: np.ndarray) -> None:
        first = int(seconds.min()) if seconds.size else 0
        span = int(seconds.max()) - first + 1 if seconds.size else 0
        if 0 < span <= len(values) // 4:
            # Rows share few distinct seconds: render each once, then gather.
            table = np.empty((span, 19), dtype=np.uint8)
            _seconds_bytes(table, np.arange(first, first + span, dtype=np.int64))
            out[:, :19] = table[0] if span == 1 else np.take(table, seconds - first, axis=0)
        else:
            _seconds_bytes(out, seconds)
        fraction = (values - seconds * 1_000_000).astype(np.int32)
        out[:, 19] = ord(".")
        _put2(out, 20, fraction // 10_000)
        _put2(out, 22, fraction // 100 % 100)
        _put2(out, 24, fraction % 100)
        if zoned:
            out[:, 26] = ord("Z")

    return (27 if zoned else 26), render


def _date_fixed(column: pa.Array) -> Fixed | None:
    """``2024-05-01`` per row; None outside years 1..9999."""
    days = pc.cast(column, pa.date32()).view(pa.int32()).fill_null(0).to_numpy().astype(np.int64)
    if not _in_range(days):
        return None
    return 10, lambda out: _date_bytes(out, days)


def _rendered(fixed: Fixed, rows: int) -> np.ndarray:
    width, render = fixed
    out = np.empty((rows, width), dtype=np.uint8)
    render(out)
    return out


def _offset_text(seconds: int) -> str:
    """An offset as Spark's ``XXX`` writes it: ``Z``, ``+05:30``, ``-07:52:58``."""
    if seconds == 0:
        return "Z"
    sign = "-" if seconds < 0 else "+"
    hours, rest = divmod(abs(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{sign}{hours:02d}:{minutes:02d}" + (f":{secs:02d}" if secs else "")


def _zoned_timestamps(column: pa.Array, zone: str) -> pa.Array:
    """Wall time in ``zone`` with its offset: ``2024-05-01T05:00:00.000000-07:00``."""
    from pysparksources.files.values.zones import offsets_seconds

    utc = pc.cast(column, pa.timestamp("us", tz="UTC"))
    offsets = offsets_seconds(utc, zone)
    local = pc.add(utc.view(pa.int64()), pc.multiply(offsets, 1_000_000))
    walls = iso_timestamps(local.view(pa.timestamp("us")))
    distinct = pc.unique(offsets.drop_null())
    texts = pa.array([_offset_text(v) for v in distinct.to_pylist()], pa.string())
    suffix = pc.take(texts, pc.index_in(offsets, value_set=distinct))
    return pc.binary_join_element_wise(walls, suffix, "")


def iso_timestamps(column: pa.Array, zone: str | None = None) -> pa.Array:
    """``2024-05-01T12:00:00.000000Z`` (``Z`` only for zoned types), nulls kept.

    With ``zone`` (the sink's timeZone option), zoned values are written as wall times there
    with their offset, as Spark's writers write them in the session time zone.
    """
    if zone is not None and column.type.tz is not None:
        return _zoned_timestamps(column, zone)
    fixed = _timestamp_fixed(column)
    if fixed is None:
        zone = "Z" if column.type.tz is not None else ""
        return pc.strftime(column, format="%Y-%m-%dT%H:%M:%S" + zone)
    out = _rendered(fixed, len(column))
    return _fixed_width(out, column.is_valid() if column.null_count else None)


def iso_dates(column: pa.Array) -> pa.Array:
    """``2024-05-01``, nulls kept."""
    fixed = _date_fixed(column)
    if fixed is None:
        return pc.strftime(column, format="%Y-%m-%d")
    out = _rendered(fixed, len(column))
    return _fixed_width(out, column.is_valid() if column.null_count else None)


# -- JSON -----------------------------------------------------------------------------------
def _dumps(value: Any) -> str | None:
    if value is None:
        return None
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _quoted(strings: pa.Array) -> pa.Array:
    return pc.binary_join_element_wise('"', strings, '"', "")


def _json_string(column: pa.Array) -> pa.Array:
    strings = pc.cast(column, pa.string())
    if pc.any(pc.match_substring_regex(strings, _CONTROL)).as_py():
        values = [_dumps(v) for v in strings.to_pylist()]
        return pa.array(values, pa.string())
    escaped = pc.replace_substring(strings, "\\", "\\\\")
    return _quoted(pc.replace_substring(escaped, '"', '\\"'))


def _json_float(column: pa.Array) -> pa.Array:
    text = pc.cast(column, pa.string())
    # Spark writes and reads the non-finite values as these quoted names.
    for arrow, spark in (("nan", '"NaN"'), ("inf", '"Infinity"'), ("-inf", '"-Infinity"')):
        text = pc.replace_substring_regex(text, f"^{arrow}$", spark)
    # Arrow writes -0.0 as "-0", which JSON readers take for the integer 0: keep the sign.
    return pc.replace_substring_regex(text, "^-0$", "-0.0")


def _python_json(value: Any, dtype: pa.DataType, zone: str | None = None) -> Any:
    """A nested value as Python for json.dumps, laid out by its Arrow type (so {} stays a map)."""
    if value is None:
        return None
    if pa.types.is_map(dtype):
        return {str(k): _python_json(v, dtype.item_type, zone) for k, v in value}
    if pa.types.is_struct(dtype):
        return {f.name: _python_json(value.get(f.name), f.type, zone) for f in dtype}
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return [_python_json(v, dtype.value_type, zone) for v in value]
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dt.datetime):
        if zone is not None and value.tzinfo is not None:
            from zoneinfo import ZoneInfo

            value = value.astimezone(ZoneInfo(zone))
        text = value.isoformat(timespec="microseconds")
        return text.replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    return value


def _json_fallback(column: pa.Array, zone: str | None = None) -> pa.Array:
    dtype = column.type
    values = [
        None if v is None else _dumps(_python_json(v, dtype, zone)) for v in column.to_pylist()
    ]
    return pa.array(values, pa.string())


def json_values(column: pa.Array, zone: str | None = None) -> pa.Array:
    """Each value as JSON text (null where the value is null)."""
    dtype = column.type
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return _json_string(column)
    if pa.types.is_integer(dtype) or pa.types.is_decimal(dtype) or pa.types.is_boolean(dtype):
        return pc.cast(column, pa.string())
    if pa.types.is_floating(dtype):
        return _json_float(column)
    if pa.types.is_timestamp(dtype):
        return _quoted(iso_timestamps(column, zone))
    if pa.types.is_date(dtype):
        return _quoted(iso_dates(column))
    if pa.types.is_null(dtype):
        return pa.nulls(len(column), pa.string())
    return _json_fallback(column, zone)


def _quoted_fixed(column: pa.Array) -> Fixed | None:
    """A null-free timestamp or date column as quoted fixed-width JSON text, if it has one."""
    if column.null_count:
        return None
    dtype = column.type
    if pa.types.is_timestamp(dtype):
        inner = _timestamp_fixed(column)
    elif pa.types.is_date(dtype):
        inner = _date_fixed(column)
    else:
        return None
    if inner is None:
        return None
    width, render_inner = inner

    def render(out: np.ndarray) -> None:
        out[:, 0] = out[:, -1] = ord('"')
        render_inner(out[:, 1:-1])

    return width + 2, render


Piece: TypeAlias = "str | Fixed | pa.Array"


def _join_pieces(pieces: list[Piece], rows: int) -> pa.Array:
    """Concatenate constants, fixed-width renderings and string arrays, row by row.

    Each argument of Arrow's element-wise join costs a pass over every row, so each run of
    constants and fixed-width renderings is written straight into one byte matrix first (the
    keys and quotes around a JSON timestamp then cost nothing extra).
    """
    merged: list[str | pa.Array] = []
    run: list[str | Fixed] = []

    def flush() -> None:
        if all(isinstance(p, str) for p in run):
            if run:
                merged.append("".join(str(p) for p in run))
            run.clear()
            return
        encoded = [p.encode("utf-8") if isinstance(p, str) else p for p in run]
        width = sum(len(p) if isinstance(p, bytes) else p[0] for p in encoded)
        out = np.empty((rows, width), dtype=np.uint8)
        column = 0
        for p in encoded:
            size = len(p) if isinstance(p, bytes) else p[0]
            view = out[:, column : column + size]
            if isinstance(p, bytes):
                view[:] = np.frombuffer(p, np.uint8)
            else:
                p[1](view)
            column += size
        merged.append(_fixed_width(out, None))
        run.clear()

    for piece in pieces:
        if isinstance(piece, pa.Array):
            flush()
            merged.append(piece)
        else:
            run.append(piece)
    flush()
    if len(merged) == 1 and isinstance(merged[0], pa.Array):
        return merged[0]
    if not any(isinstance(m, pa.Array) for m in merged):
        return pa.array(["".join(str(m) for m in merged)] * rows, pa.string())
    return pc.binary_join_element_wise(*merged, "")


def _constant_json(column: pa.Array) -> str | None:
    """The JSON text of a timestamp or date column whose rows all hold one value, else None.

    Processing-time stamps (``current_timestamp()``, rate-micro-batch's) hold one value per
    micro-batch; rendered once, such a column costs the join only, not a rendering per row.
    """
    dtype = column.type
    if not len(column) or column.null_count:
        return None
    if pa.types.is_timestamp(dtype):
        raw = column.view(pa.int64())
    elif pa.types.is_date32(dtype):
        raw = column.view(pa.int32())
    else:
        return None
    bounds = pc.min_max(raw).as_py()
    if bounds["min"] != bounds["max"]:
        return None
    text: str = json_values(column.slice(0, 1))[0].as_py()
    return text


def json_lines(
    batch: pa.RecordBatch, ignore_null_fields: bool = True, zone: str | None = None
) -> pa.Array:
    """One JSON object per row, each ending with a newline (a string array, no nulls)."""
    names = [json.dumps(name, ensure_ascii=False) for name in batch.schema.names]
    if not names:
        return pa.array(["{}\n"] * batch.num_rows, pa.string())
    values: list[str | Fixed | pa.Array] = []
    for column in batch.columns:
        # The fast layouts write UTC ("Z"); a timeZone option takes the general path.
        constant = _constant_json(column) if zone is None else None
        fixed = _quoted_fixed(column) if constant is None and zone is None else None
        if constant is not None:
            values.append(constant)
        else:
            values.append(fixed if fixed is not None else json_values(column, zone))
    if not ignore_null_fields:
        values = [v.fill_null("null") if isinstance(v, pa.Array) else v for v in values]
    if all(not isinstance(v, pa.Array) or v.null_count == 0 for v in values):
        pieces: list[Piece] = ["{"]
        for i, (name, value) in enumerate(zip(names, values, strict=True)):
            pieces += [("," if i else "") + name + ":", value]
        return _join_pieces([*pieces, "}\n"], batch.num_rows)
    # Some values are null: each field is ',"name":value' or empty; drop the first comma.
    fields = [
        _join_pieces(["," + name + ":", value], batch.num_rows).fill_null("")
        for name, value in zip(names, values, strict=True)
    ]
    body = pc.binary_join_element_wise(*fields, "")
    body = pc.utf8_slice_codeunits(body, 1)
    return pc.binary_join_element_wise("{", body, "}\n", "")


# -- CSV ------------------------------------------------------------------------------------
def csv_field(text: str, sep: str) -> str:
    """One CSV field the way Spark's writer quotes it (``\\"`` escapes, not doubled quotes)."""
    if text and not re.search(_csv_special(sep), text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _csv_special(sep: str) -> str:
    return "[" + re.escape(sep + '"\\\r\n') + r"]|^\s|\s$"


def _csv_strings(column: pa.Array, sep: str) -> pa.Array:
    strings = pc.cast(column, pa.string())
    # Quote what Spark's reader would otherwise split, unescape or trim; "" marks empty.
    needs = pc.or_(pc.match_substring_regex(strings, _csv_special(sep)), pc.equal(strings, ""))
    escaped = pc.replace_substring(strings, "\\", "\\\\")
    quoted = _quoted(pc.replace_substring(escaped, '"', '\\"'))
    return pc.if_else(needs, quoted, strings)


def csv_values(column: pa.Array, sep: str, zone: str | None = None) -> pa.Array:
    """Each value as a CSV field (null where the value is null: written as nothing)."""
    dtype = column.type
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return _csv_strings(column, sep)
    if pa.types.is_floating(dtype):
        return pc.replace_substring(_json_float(column), '"', "")
    if pa.types.is_timestamp(dtype):
        return iso_timestamps(column, zone)
    if pa.types.is_date(dtype):
        return iso_dates(column)
    if pa.types.is_null(dtype):
        return pa.nulls(len(column), pa.string())
    return pc.cast(column, pa.string())


def csv_lines(batch: pa.RecordBatch, sep: str, zone: str | None = None) -> pa.Array:
    """One CSV line per row, each ending with a newline (a string array, no nulls)."""
    values = [csv_values(column, sep, zone).fill_null("") for column in batch.columns]
    if not values:
        return pa.array(["\n"] * batch.num_rows, pa.string())
    return pc.binary_join_element_wise(
        pc.binary_join_element_wise(*values, sep), pa.scalar("\n"), ""
    )


def csv_header(names: list[str], sep: str) -> bytes:
    return (sep.join(csv_field(name, sep) for name in names) + "\n").encode("utf-8")


def concatenated(strings: pa.Array) -> pa.Buffer:
    """The bytes of every value of a null-free string array, back to back, without copying."""
    if strings.null_count:
        strings = strings.fill_null("")
    if pa.types.is_large_string(strings.type):
        offsets = np.frombuffer(strings.buffers()[1], dtype=np.int64)
    else:
        offsets = np.frombuffer(strings.buffers()[1], dtype=np.int32)
    start = int(offsets[strings.offset])
    end = int(offsets[strings.offset + len(strings)])
    data = strings.buffers()[2]
    if data is None:
        return pa.py_buffer(b"")
    return data.slice(start, end - start)
