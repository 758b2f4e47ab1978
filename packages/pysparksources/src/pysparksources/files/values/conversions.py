"""Columns as parsed from a file, converted to the Spark type the schema asks for.

Text formats hand over strings for the types they cannot type themselves (timestamps, dates,
booleans, JSON's base64 binary); those are parsed here the way Spark's csv/json readers parse
them. Zone-less timestamps are wall times in the reader's zone (see :mod:`zones`). Nested
columns (structs, arrays, maps) are converted child by child.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import re
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from pysparksources.errors import MalformedRecordError
from pysparksources.files import NAME
from pysparksources.files.values.zones import instants_from_wall_times

__all__ = [
    "EPOCH_MARK",
    "JAVA_DOUBLE",
    "Parsing",
    "check_datetime_pattern",
    "conform",
    "pattern_regex",
    "spark_decimal",
]

# Starts the text of a TIMESTAMP a JSON file gave as a number: microseconds since the epoch
# follow (see formats._json_values); text never holds it otherwise (JSON text has no raw NUL).

EPOCH_MARK = "\x00"
# java.math.BigDecimal's syntax, which Spark's readers parse decimals with (no spaces, no NaN).
_BIG_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")

# A Spark datetime pattern letter run -> a regex group capturing it.
_TOKENS = {
    "yyyy": r"(?P<y>\d{4})",
    "yy": r"(?P<yy>\d{2})",
    "MM": r"(?P<mo>\d{2})",
    "M": r"(?P<mo>\d{1,2})",
    "dd": r"(?P<d>\d{2})",
    "d": r"(?P<d>\d{1,2})",
    "HH": r"(?P<H>\d{2})",
    "H": r"(?P<H>\d{1,2})",
    "hh": r"(?P<h12>\d{2})",
    "h": r"(?P<h12>\d{1,2})",
    "mm": r"(?P<mi>\d{2})",
    "m": r"(?P<mi>\d{1,2})",
    "ss": r"(?P<se>\d{2})",
    "s": r"(?P<se>\d{1,2})",
    "a": r"(?P<ampm>[AaPp][Mm])",
}
_OFFSET_TOKENS = ("X", "XX", "XXX", "x", "xx", "xxx", "Z", "ZZ", "ZZZ")
_OFFSET = (
    r"(?:(?P<z>Z|UTC|GMT)|(?P<sign>[+-])(?P<oh>\d{1,2})(?::?(?P<om>\d\d))?(?::?(?P<os>\d\d))?)"
)
# An ISO timestamp whose text ends with an offset: the wall time must end in a time of day,
# so a date's "-01" is not taken for an offset.
_ISO_WITH_OFFSET = r"^(?P<wall>.+?[T ]\d{1,2}(?::\d{1,2}){0,2}(?:\.\d{1,9})?)\s*" + _OFFSET + "$"
_ISO_OFFSET_RE = re.compile(_ISO_WITH_OFFSET)
_TOKEN_RE = re.compile(r"'[^']*'|([A-Za-z])\1*")
_NAIVE = pa.timestamp("us")
_UTC = pa.timestamp("us", tz="UTC")


def pattern_regex(pattern: str) -> str | None:
    """A Spark datetime pattern as a regex with named groups; None when a token is unknown."""
    out: list[str] = ["^"]
    pos = 0
    seen: set[str] = set()
    for match in _TOKEN_RE.finditer(pattern):
        out.append(re.escape(pattern[pos : match.start()]))
        token = match.group(0)
        pos = match.end()
        if token.startswith("'"):
            out.append(re.escape(token[1:-1] or "'"))
            continue
        if token in _OFFSET_TOKENS:
            group = _OFFSET
        elif set(token) == {"S"}:
            group = rf"(?P<f>\d{{1,{len(token)}}})"
        elif token in _TOKENS:
            group = _TOKENS[token]
        else:
            return None
        name = re.search(r"\?P<(\w+)>", group)
        if name is not None and name.group(1) in seen:
            return None
        seen.update(re.findall(r"\?P<(\w+)>", group))
        out.append(group)
    out.append(re.escape(pattern[pos:]) + "$")
    return "".join(out)


def check_datetime_pattern(pattern: str) -> bool:
    return pattern_regex(pattern) is not None


@dataclass(frozen=True)
class Parsing:
    """How one task parses text values: the zone of wall times and the optional patterns."""

    zone: str
    date_format: str | None = None
    timestamp_format: str | None = None


def _field(parts: pa.StructArray, name: str, default: str) -> pa.Array:
    """One captured group, ``default`` where it is missing or empty."""
    if parts.type.get_field_index(name) < 0:
        return pa.array([default] * len(parts), pa.string())
    values = parts.field(name)
    return pc.if_else(pc.equal(values, ""), default, values)


def _two_digits(values: pa.Array) -> pa.Array:
    return pc.utf8_lpad(values, 2, "0")


def _from_pattern(values: pa.Array, pattern: str, with_time: bool) -> pa.Array:
    """Text in a Spark pattern, reassembled as ISO 8601 (offset kept) for the ISO parser."""
    regex = pattern_regex(pattern)
    assert regex is not None  # the pattern was checked when the query started
    parts = pc.extract_regex(values, regex)
    names = {parts.type.field(i).name for i in range(parts.type.num_fields)}
    year = _field(parts, "y", "1970")
    if "yy" in names:
        year = pc.binary_join_element_wise("20", parts.field("yy"), "")
    date = [year, "-", _two_digits(_field(parts, "mo", "01")), "-"]
    date.append(_two_digits(_field(parts, "d", "01")))
    if not with_time:
        return _masked(pc.binary_join_element_wise(*date, ""), parts)
    hour = _two_digits(_field(parts, "H", "00"))
    if "h12" in names:
        twelve = pc.cast(_field(parts, "h12", "12"), pa.int32())
        pm = pc.equal(pc.utf8_upper(_field(parts, "ampm", "AM")), "PM")
        hours24 = pc.add(
            pc.subtract(twelve, pc.multiply(pc.divide(twelve, 12), 12)), pc.if_else(pm, 12, 0)
        )
        hour = _two_digits(pc.cast(hours24, pa.string()))
    time = [hour, ":", _two_digits(_field(parts, "mi", "00")), ":"]
    time += [_two_digits(_field(parts, "se", "00")), ".", _field(parts, "f", "0")]
    offset = [pa.array([""] * len(values), pa.string())]
    if "sign" in names:
        sign = _field(parts, "sign", "")
        zulu = pc.not_equal(_field(parts, "z", ""), "")
        numeric = pc.binary_join_element_wise(
            sign,
            _two_digits(_field(parts, "oh", "00")),
            ":",
            _field(parts, "om", "00"),
            ":",
            _field(parts, "os", "00"),
            "",
        )
        offset = [pc.if_else(zulu, "Z", pc.if_else(pc.equal(sign, ""), "", numeric))]
    text = pc.binary_join_element_wise(*date, "T", *time, *offset, "")
    return _masked(text, parts)


def _masked(text: pa.Array, parts: pa.StructArray) -> pa.Array:
    """Null where the source was null; an unmatched value stays text so the cast names it."""
    return pc.if_else(parts.is_valid(), text, pa.scalar(None, pa.string()))


def _offset_seconds(parts: pa.StructArray) -> pa.Array:
    hours = pc.cast(_field(parts, "oh", "0"), pa.int64())
    minutes = pc.cast(_field(parts, "om", "0"), pa.int64())
    seconds = pc.cast(_field(parts, "os", "0"), pa.int64())
    total = pc.add(pc.add(pc.multiply(hours, 3600), pc.multiply(minutes, 60)), seconds)
    return pc.if_else(pc.equal(_field(parts, "sign", "+"), "-"), pc.negate(total), total)


def _wall_times_as(wall: pa.Array, target: pa.DataType, zone: str) -> pa.Array:
    """Naive wall times as ``target``: kept for TIMESTAMP_NTZ, placed in ``zone`` otherwise."""
    if target.tz is None:
        return wall.cast(target)
    return instants_from_wall_times(wall, zone).cast(target)


def _unmatched(values: pa.Array, parts: pa.StructArray) -> None:
    """Fail like a cast would, naming the first value the pattern did not match."""
    bad = pc.and_(values.is_valid(), parts.is_null())
    if pc.any(bad).as_py():
        first = pc.filter(values, bad)[0].as_py()
        raise MalformedRecordError(NAME, f"{first!r} does not match the timestamp/date pattern")


def timestamps_from_strings(values: pa.Array, target: pa.DataType, parsing: Parsing) -> pa.Array:
    """Strings -> timestamps; an offset in the text wins, else the text is a wall time."""
    if pa.types.is_large_string(values.type):  # JSON's: numbers there are epoch seconds
        epoch = pc.fill_null(pc.starts_with(values, EPOCH_MARK), False)
        if pc.any(epoch).as_py():
            micros = pc.utf8_slice_codeunits(pc.if_else(epoch, values, None), 1)
            instants = micros.cast(pa.int64()).view(_UTC).cast(target)
            texts = timestamps_from_strings(
                pc.if_else(epoch, None, values).cast(pa.string()), target, parsing
            )
            both: pa.Array = pc.if_else(epoch, instants, texts)
            return both
        values = values.cast(pa.string())
    values = pc.utf8_trim_whitespace(values)
    # timestampFormat is for TIMESTAMP; TIMESTAMP_NTZ keeps ISO text (Spark has a separate
    # timestampNTZFormat option, which pyfile does not take).
    if parsing.timestamp_format is not None and target.tz is not None:
        regex = pattern_regex(parsing.timestamp_format)
        _unmatched(values, pc.extract_regex(values, regex or "^$"))
        values = _from_pattern(values, parsing.timestamp_format, with_time=True)
    if target.tz is None:
        return values.cast(_NAIVE).cast(target)
    # Fast path: the values look like the first one, all with an offset Arrow parses or all
    # without one: a single cast. (A regex pass costs ten times a cast, and a cast that fails
    # costs even more, so the first value picks the one cast worth trying.)
    first = values.drop_null()[:1].to_pylist()
    try:
        if first and _ISO_OFFSET_RE.match(first[0]):
            return values.cast(_UTC).cast(target)
        return _wall_times_as(values.cast(_NAIVE), target, parsing.zone)
    except pa.ArrowInvalid:
        pass
    if parsing.timestamp_format is None:
        values = _padded_iso(values)
    parts = pc.extract_regex(values, _ISO_WITH_OFFSET)
    has_offset = pc.fill_null(parts.is_valid(), False)
    if not pc.any(has_offset).as_py():
        return _wall_times_as(values.cast(_NAIVE), target, parsing.zone)
    null = pa.scalar(None, pa.string())
    # Offsets are applied by hand: Arrow's parser takes no seconds (Spark writes LMT's
    # -07:52:58 for old instants in Los Angeles).
    wall = pc.if_else(has_offset, parts.field("wall"), null).cast(_NAIVE).view(pa.int64())
    shift = pc.multiply(pc.fill_null(_offset_seconds(parts), 0), 1_000_000)
    zoned = pc.subtract(wall, shift).view(_UTC)
    local = _wall_times_as(pc.if_else(has_offset, null, values).cast(_NAIVE), _UTC, parsing.zone)
    result: pa.Array = pc.if_else(has_offset, zoned, local)
    return result.cast(target)


_SHORT_ISO = re.compile(
    r"(\d{4})(?:-(\d{1,2})(?:-(\d{1,2})(?:[T ](\d{1,2})(?::(\d{1,2})(?::(\d{1,2})(\.\d*)?)?)?)?)?)?"
    r"(\s*(?:[A-Za-z+-].*)?)",
    re.DOTALL,
)


def _padded_iso(values: pa.Array) -> pa.Array:
    """Spark's default parser takes ``2024``, ``2024-1``, ``2024-01-01 1:2`` (missing parts are
    their first value, one-digit fields are fine): write them out in full for Arrow's."""

    def padded(text: str | None) -> str | None:
        match = _SHORT_ISO.fullmatch(text) if text is not None else None
        if match is None:
            return text
        year, month, day, hour, minute, second, fraction, rest = match.groups()
        return (
            f"{year}-{int(month or 1):02d}-{int(day or 1):02d}T{int(hour or 0):02d}:"
            f"{int(minute or 0):02d}:{int(second or 0):02d}{fraction or ''}{rest}"
        )

    return pa.array([padded(v) for v in values.to_pylist()], pa.string())


def dates_from_strings(values: pa.Array, parsing: Parsing) -> pa.Array:
    values = pc.utf8_trim_whitespace(values)
    if parsing.date_format is not None:
        regex = pattern_regex(parsing.date_format)
        _unmatched(values, pc.extract_regex(values, regex or "^$"))
        values = _from_pattern(values, parsing.date_format, with_time=False)
        return values.cast(pa.date32())
    try:
        return values.cast(pa.date32())
    except pa.ArrowInvalid:
        return pa.array([None if v is None else _lenient_date(v) for v in values.to_pylist()])


# Without a dateFormat Spark also takes "2024", "2024-1", "2024-01-02T..." and "2024-01-02 ...".
_LENIENT_DATE = re.compile(r"(\d{4})(?:-(\d{1,2})(?:-(\d{1,2})(?:[T ].*)?)?)?", re.DOTALL)


def _lenient_date(text: str) -> datetime.date:
    match = _LENIENT_DATE.fullmatch(text)
    if match is not None:
        year, month, day = (int(g) if g else 1 for g in match.groups())
        try:
            return datetime.date(year, month, day)
        except ValueError:  # no such day
            pass
    raise MalformedRecordError(NAME, f"{text!r} is not a date")


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


def spark_decimal(value: str | decimal.Decimal, target: pa.DataType) -> decimal.Decimal:
    """``value`` rounded half up to ``target``'s scale, as Spark's readers store a decimal;
    text in BigDecimal's syntax (commas ignored, as Spark's en-US parser does)."""
    if isinstance(value, str):
        text = value.replace(",", "")
        if not _BIG_DECIMAL.fullmatch(text):
            raise MalformedRecordError(NAME, f"{value!r} is not a decimal number")
        value = decimal.Decimal(text)
    with decimal.localcontext() as context:
        context.prec = 100
        rounded = value.quantize(decimal.Decimal(1).scaleb(-target.scale), decimal.ROUND_HALF_UP)
    if len(rounded.as_tuple().digits) > target.precision and rounded != 0:
        raise MalformedRecordError(NAME, f"{value} does not fit {target}")
    return rounded


def _decimals_from_strings(column: pa.Array, target: pa.DataType) -> pa.Array:
    try:
        return column.cast(target)
    except pa.ArrowInvalid:  # more digits than the scale, commas, exponents: Spark's rules
        return pa.array(
            [None if text is None else spark_decimal(text, target) for text in column.to_pylist()],
            target,
        )


# What Java's Double.parseDouble takes after trimming: decimal or hexadecimal floats with an
# optional f/d suffix, NaN and Infinity (signed). Spark's csv reader parses doubles with it,
# and csv inference asks whether a value parses.
JAVA_DOUBLE = re.compile(
    r"[+-]?(?:NaN|Infinity|"
    r"(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?)"
)
_HEX_DOUBLE = re.compile(r"([+-]?)0[xX]([0-9a-fA-F.]+[pP][+-]?[0-9]+)[fFdD]?")


def _java_double(text: str | None) -> float | None:
    """Java's Double.parseDouble, which Spark's csv reader uses: surrounding whitespace, a
    d/f suffix and hexadecimal (0x1p3) are fine; anything else raises ArrowInvalid."""
    if text is None:
        return None
    stripped = text.strip()
    if not JAVA_DOUBLE.fullmatch(stripped):
        raise pa.ArrowInvalid(f"{text!r} is not a number")
    hexadecimal = _HEX_DOUBLE.fullmatch(stripped)
    if hexadecimal:
        sign, body = hexadecimal.groups()
        return float.fromhex(f"{sign}0x{body}")
    return float(stripped.rstrip("fFdD"))


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
        if pa.types.is_decimal(target):
            return _decimals_from_strings(column, target)
        if pa.types.is_integer(target):
            try:
                return column.cast(target)
            except pa.ArrowInvalid:  # Java's parseInt takes a leading plus sign; Arrow does not
                column = pc.replace_substring_regex(column, r"^\+(\d)", r"\1")
        if pa.types.is_floating(target):
            try:
                return column.cast(target)
            except pa.ArrowInvalid:  # Java's parseDouble takes more than Arrow (see below)
                return pa.array([_java_double(v) for v in column.to_pylist()], target)
    if pa.types.is_nested(target) and pa.types.is_nested(column.type):
        return _nested(column, target, parsing)
    # Naive timestamps (parquet without zone) are UTC: Arrow's cast assumes exactly that.
    return column.cast(target)
