"""Spark's type rules for schema inference: one value's type, and two types made one.

Each rule follows Spark 4's own inference so that a folder read without a schema gets the
schema ``spark.read`` gives it: csv tokens walk Spark's chain (int, bigint, decimal, double,
date, timestamp, boolean, string) from the type the column has so far; JSON values get bigint,
double, decimal (integers beyond 64 bits), boolean, string, arrays and structs whose fields are
sorted by name; partition folder values get int, bigint, decimal, double, date, timestamp or
string. A type seen only as null ends as STRING, as in Spark.
"""

from __future__ import annotations

import calendar
import datetime
import decimal
import re
from collections.abc import Callable
from typing import Any

import pyarrow as pa
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from pysparksources.errors import SchemaError
from pysparksources.files import NAME
from pysparksources.files.values.conversions import JAVA_DOUBLE, pattern_regex

__all__ = [
    "DateRule",
    "arrow_to_spark",
    "canonical",
    "csv_date_rule",
    "csv_token_type",
    "json_value_type",
    "merge_csv",
    "merge_json",
    "merge_partition",
    "partition_value_type",
]

MAX_PRECISION = 38
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
# What Java's Integer.parseInt / Long.parseLong take: an optional sign, then ASCII digits.
_JAVA_INTEGER = re.compile(r"[+-]?[0-9]+")
# What java.math.BigDecimal(String) takes.
_JAVA_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_CSV_NAN_INF = ("NaN", "Inf", "-Inf")  # Spark's csv nanValue, positiveInf, negativeInf
# Spark's default timestamp parser (as a cast from string): a year of 4 to 7 digits, then
# optional month, day, time, fraction and zone.
_SPARK_TIMESTAMP = re.compile(
    r"[+-]?(?P<y>\d{4,7})(?:-(?P<mo>\d{1,2})(?:-(?P<d>\d{1,2})(?:[T ](?:(?P<h>\d{1,2})"
    r"(?::(?P<mi>\d{1,2})(?::(?P<s>\d{1,2})(?:\.\d{0,9})?)?)?)?"
    r"\s*(?:Z|UTC|GMT|UT|[+-]\d{1,2}(?::?\d{2}(?::?\d{2})?)?|(?:GMT|UTC|UT)?[+-]\d{1,2}(?::?\d{2})?"
    r"|[A-Za-z]+/[A-Za-z_/+-]+)?)?)?)?"
)


def _decimal_type(value: decimal.Decimal) -> DataType | None:
    """Spark's DecimalType for a BigDecimal, or None where Spark's constructor refuses it."""
    _, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    scale = -exponent
    precision = len(digits) if any(digits) or scale <= 0 else scale
    precision = max(precision, 1)
    if scale < 0 or scale > precision or precision > MAX_PRECISION:
        return None
    return DecimalType(precision, scale)


# -- csv ----------------------------------------------------------------------------------
DateRule = Callable[[str], bool]
"""Whether a csv token is a DATE (Spark's preferDate), None when dates are not inferred."""

# Spark's default dateFormat, which inference parses strictly (2024-01-05, not 2024-1-5).
_DEFAULT_DATE_FORMAT = "yyyy-MM-dd"


def csv_date_rule(date_format: str | None, prefer_date: bool) -> DateRule | None:
    """Spark's csv date inference: with preferDate (its default) a token that the dateFormat
    (else yyyy-MM-dd) parses whole, as a real day, is a DATE; None without preferDate."""
    if not prefer_date:
        return None
    regex = pattern_regex(date_format or _DEFAULT_DATE_FORMAT)
    if regex is None:  # a pattern the query start refuses; nothing is a date
        return lambda token: False
    pattern = re.compile(regex)

    def is_date(token: str) -> bool:
        match = pattern.fullmatch(token)
        if match is None:
            return False
        parts = match.groupdict()
        year = int(parts["y"]) if parts.get("y") else None
        if year is None and parts.get("yy"):
            year = 2000 + int(parts["yy"])
        try:
            datetime.date(year or 1970, int(parts.get("mo") or 1), int(parts.get("d") or 1))
        except ValueError:  # no such day: Spark's resolver is strict
            return False
        return True

    return is_date


def _csv_integer(token: str, dates: DateRule | None) -> DataType:
    if _JAVA_INTEGER.fullmatch(token):
        number = int(token)
        if _INT32[0] <= number <= _INT32[1]:
            return IntegerType()
    return _csv_long(token, dates)


def _csv_long(token: str, dates: DateRule | None) -> DataType:
    if _JAVA_INTEGER.fullmatch(token) and _INT64[0] <= int(token) <= _INT64[1]:
        return LongType()
    return _csv_decimal(token, dates)


def _whole_decimal(text: str) -> DataType | None:
    """DECIMAL(p,0) for a whole number BigDecimal reads, as csv and partition inference take
    it (a fraction is left to DOUBLE); None for anything else."""
    if not _JAVA_DECIMAL.fullmatch(text):
        return None
    exact = decimal.Decimal(text)
    exponent = exact.as_tuple().exponent
    if not isinstance(exponent, int) or exponent < 0:
        return None
    return _decimal_type(exact)


def _csv_decimal(token: str, dates: DateRule | None) -> DataType:
    found = _whole_decimal(token)
    return found if found is not None else _csv_double(token, dates)


def _csv_double(token: str, dates: DateRule | None) -> DataType:
    if JAVA_DOUBLE.fullmatch(token.strip()) or token in _CSV_NAN_INF:
        return DoubleType()
    return _csv_date(token, dates)


def _csv_date(token: str, dates: DateRule | None) -> DataType:
    if dates is not None and dates(token):
        return DateType()
    return _csv_timestamp(token, dates)


def _csv_timestamp(token: str, dates: DateRule | None) -> DataType:
    match = _SPARK_TIMESTAMP.fullmatch(token.strip())
    if match is not None and _real_time(match):
        return TimestampType()
    return _csv_boolean(token, dates)


_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _real_time(match: re.Match[str]) -> bool:
    """Whether a timestamp's fields name a real day and time (2024-02-30 is no timestamp)."""
    parts = {name: int(value) for name, value in match.groupdict().items() if value}
    month, day = parts.get("mo", 1), parts.get("d", 1)
    if not 1 <= month <= 12:
        return False
    days = _MONTH_DAYS[month - 1] + (month == 2 and calendar.isleap(parts["y"]))
    return (
        1 <= day <= days
        and parts.get("h", 0) < 24
        and parts.get("mi", 0) < 60
        and parts.get("s", 0) < 60
    )


def _csv_boolean(token: str, dates: DateRule | None) -> DataType:
    return BooleanType() if token.lower() in ("true", "false") else StringType()


_CSV_CHAIN: dict[type, Callable[[str, DateRule | None], DataType]] = {
    NullType: _csv_integer,
    IntegerType: _csv_integer,
    LongType: _csv_long,
    DecimalType: _csv_decimal,
    DoubleType: _csv_double,
    DateType: _csv_date,
    TimestampType: _csv_timestamp,
    BooleanType: _csv_boolean,
}


def csv_token_type(so_far: DataType, token: str | None, dates: DateRule | None = None) -> DataType:
    """The column's type after one more token: Spark's chain, from the type so far (``dates``:
    :func:`csv_date_rule`, None when no token is a DATE)."""
    if token is None or token == "":
        return so_far
    step = _CSV_CHAIN.get(type(so_far))
    if step is None:
        return StringType()
    return merge_csv(so_far, step(token, dates))


def _tightest(left: DataType, right: DataType) -> DataType | None:
    """Spark's findTightestCommonType for the types inference produces."""
    if left == right:
        return left
    if isinstance(left, NullType):
        return right
    if isinstance(right, NullType):
        return left
    order = (IntegerType, LongType, DoubleType)
    if type(left) in order and type(right) in order:
        return left if order.index(type(left)) > order.index(type(right)) else right
    for integral, dec in ((left, right), (right, left)):
        if isinstance(integral, (IntegerType, LongType)) and isinstance(dec, DecimalType):
            digits = 10 if isinstance(integral, IntegerType) else 20
            if dec.precision - dec.scale >= digits and dec.scale >= 0:
                return dec
    return None


def _as_decimal(dtype: DataType) -> DataType:
    if isinstance(dtype, IntegerType):
        return DecimalType(10, 0)
    if isinstance(dtype, LongType):
        return DecimalType(20, 0)
    return dtype


def _wider_decimal(left: DecimalType, right: DecimalType) -> DataType:
    scale = max(left.scale, right.scale)
    whole = max(left.precision - left.scale, right.precision - right.scale)
    if whole + scale > MAX_PRECISION:
        return DoubleType()
    return DecimalType(whole + scale, scale)


def _numeric_merge(left: DataType, right: DataType) -> DataType | None:
    """Decimal cases both csv and json share; None when neither side is a decimal."""
    if isinstance(left, DoubleType) and isinstance(right, DecimalType):
        return DoubleType()
    if isinstance(left, DecimalType) and isinstance(right, DoubleType):
        return DoubleType()
    left, right = _as_decimal(left), _as_decimal(right)
    if isinstance(left, DecimalType) and isinstance(right, DecimalType):
        return _wider_decimal(left, right)
    return None


def merge_csv(left: DataType, right: DataType) -> DataType:
    """Spark's CSVInferSchema.compatibleType; what does not fit becomes STRING."""
    tight = _tightest(left, right)
    if tight is not None:
        return tight
    if {type(left), type(right)} == {DateType, TimestampType}:  # Spark 4's wider datetime
        return TimestampType()
    if isinstance(left, StringType) or isinstance(right, StringType):
        return StringType()
    merged = _numeric_merge(left, right)
    return merged if merged is not None else StringType()


# -- json ---------------------------------------------------------------------------------
def _json_number(value: int | float | decimal.Decimal, prefers_decimal: bool) -> DataType:
    if isinstance(value, bool):
        return BooleanType()
    if isinstance(value, int):
        if _INT64[0] <= value <= _INT64[1]:
            return LongType()
        return _json_big(decimal.Decimal(value))
    if isinstance(value, decimal.Decimal) and value.is_finite():
        if prefers_decimal:
            return _json_big(value)
        return DoubleType()
    return DoubleType()  # NaN and Infinity, which Spark's parser takes


def _json_big(value: decimal.Decimal) -> DataType:
    """Spark's DecimalType(max(precision, scale), scale) for a number, DOUBLE if too wide."""
    _, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    scale = -exponent
    precision = len(digits)
    if scale < 0:  # 1E+3: Java's BigDecimal keeps the negative scale, Spark's type cannot
        precision, scale = precision - scale, 0
    width = max(precision, scale)
    if width > MAX_PRECISION:
        return DoubleType()
    return DecimalType(width, scale)


def json_value_type(value: Any, primitives_as_string: bool, prefers_decimal: bool) -> DataType:
    """The type Spark's JSON inference gives one parsed value (numbers as int or Decimal)."""
    if value is None:
        return NullType()
    if isinstance(value, dict):
        fields = [
            StructField(str(name), json_value_type(item, primitives_as_string, prefers_decimal))
            for name, item in sorted(value.items())
        ]
        return StructType(fields)
    if isinstance(value, list):
        element: DataType = NullType()
        for item in value:
            element = merge_json(
                element, json_value_type(item, primitives_as_string, prefers_decimal)
            )
        return ArrayType(element)
    if isinstance(value, str):
        # Spark reads an empty string as no value (JSON writers that cannot tell the two).
        return NullType() if value == "" else StringType()
    if primitives_as_string:
        return StringType()
    if isinstance(value, bool):
        return BooleanType()
    if isinstance(value, (int, float, decimal.Decimal)):
        return _json_number(value, prefers_decimal)
    return StringType()


def _widened(left: DataType, right: DataType) -> DataType | None:
    """What json and partition merging share: the tightest type, or a decimal case."""
    tight = _tightest(left, right)
    return tight if tight is not None else _numeric_merge(left, right)


def merge_json(left: DataType, right: DataType) -> DataType:
    """Spark's JsonInferSchema.compatibleType; what does not fit becomes STRING."""
    merged = _widened(left, right)
    if merged is not None:
        return merged
    if isinstance(left, StructType) and isinstance(right, StructType):
        types = {f.name: f.dataType for f in left.fields}
        for f in right.fields:
            types[f.name] = merge_json(types[f.name], f.dataType) if f.name in types else f.dataType
        return StructType([StructField(name, types[name]) for name in sorted(types)])
    if isinstance(left, ArrayType) and isinstance(right, ArrayType):
        return ArrayType(merge_json(left.elementType, right.elementType))
    if {type(left), type(right)} == {TimestampType, TimestampNTZType}:
        return TimestampType()
    return StringType()


def canonical(dtype: DataType) -> DataType | None:
    """Spark's last step: null-only becomes STRING; empty structs and unnamed fields go."""
    if isinstance(dtype, NullType):
        return StringType()
    if isinstance(dtype, ArrayType):
        element = canonical(dtype.elementType)
        return None if element is None else ArrayType(element)
    if isinstance(dtype, StructType):
        fields = []
        for f in dtype.fields:
            if not f.name:
                continue
            inner = canonical(f.dataType)
            if inner is not None:
                fields.append(StructField(f.name, inner))
        return StructType(fields) if fields else None
    return dtype


# -- partition folders --------------------------------------------------------------------
def partition_value_type(raw: str | None) -> DataType:
    """The type Spark's partition discovery gives one folder value (``None``: the null one)."""
    if raw is None:
        return NullType()
    if _JAVA_INTEGER.fullmatch(raw):
        number = int(raw)
        if _INT32[0] <= number <= _INT32[1]:
            return IntegerType()
        if _INT64[0] <= number <= _INT64[1]:
            return LongType()
    found = _whole_decimal(raw)
    if found is not None:
        return found
    if JAVA_DOUBLE.fullmatch(raw) and raw[-1:] not in "fFdD":
        return DoubleType()
    if _is_date(raw):
        return DateType()
    if _is_timestamp(raw):
        return TimestampType()
    return StringType()


def _is_date(raw: str) -> bool:
    try:
        parsed = datetime.date.fromisoformat(raw)
    except ValueError:
        return False
    return parsed.isoformat() == raw


def _is_timestamp(raw: str) -> bool:
    match = re.fullmatch(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?", raw)
    return match is not None


def merge_partition(left: DataType, right: DataType) -> DataType:
    """Spark's wider type for one partition column seen with different values."""
    merged = _widened(left, right)
    if merged is not None:
        return merged
    if {type(left), type(right)} == {DateType, TimestampType}:
        return TimestampType()
    return StringType()


# -- parquet and orc footers --------------------------------------------------------------
_UNSIGNED = {8: ShortType(), 16: IntegerType(), 32: LongType(), 64: DecimalType(20, 0)}
_SIGNED = {8: ByteType(), 16: ShortType(), 32: IntegerType(), 64: LongType()}


def arrow_to_spark(dtype: pa.DataType, naive_timestamp: DataType | None = None) -> DataType:
    """The Spark type a parquet/orc column's Arrow type reads as (all nullable, as in Spark).

    ``naive_timestamp`` is what a timestamp without a zone becomes: TIMESTAMP_NTZ in parquet
    (Spark 4's default), TIMESTAMP in orc.
    """
    t = pa.types
    if t.is_boolean(dtype):
        return BooleanType()
    if t.is_integer(dtype):
        table = _SIGNED if t.is_signed_integer(dtype) else _UNSIGNED
        return table[dtype.bit_width]
    if t.is_float32(dtype):
        return FloatType()
    if t.is_float64(dtype):
        return DoubleType()
    if t.is_decimal(dtype):
        return DecimalType(dtype.precision, dtype.scale)
    if t.is_string(dtype) or t.is_large_string(dtype) or t.is_string_view(dtype):
        return StringType()
    if t.is_binary(dtype) or t.is_large_binary(dtype) or t.is_fixed_size_binary(dtype):
        return BinaryType()
    if t.is_date(dtype):
        return DateType()
    if t.is_timestamp(dtype):
        if dtype.tz is not None:
            return TimestampType()
        return naive_timestamp or TimestampNTZType()
    if t.is_list(dtype) or t.is_large_list(dtype) or t.is_fixed_size_list(dtype):
        return ArrayType(arrow_to_spark(dtype.value_type, naive_timestamp))
    if t.is_map(dtype):
        return MapType(
            arrow_to_spark(dtype.key_type, naive_timestamp),
            arrow_to_spark(dtype.item_type, naive_timestamp),
        )
    if t.is_struct(dtype):
        return StructType(
            [StructField(f.name, arrow_to_spark(f.type, naive_timestamp)) for f in dtype]
        )
    if t.is_dictionary(dtype):
        return arrow_to_spark(dtype.value_type, naive_timestamp)
    raise SchemaError(NAME, f"cannot infer a schema: no Spark type reads a column of type {dtype}")
