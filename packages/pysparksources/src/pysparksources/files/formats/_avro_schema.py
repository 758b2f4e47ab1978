"""pyfile's Avro schema specifics, over the shared model (:mod:`pysparksources._core.avro_schema`,
which parses and bounds a schema and maps it to Spark's types): a file's records must be a
record, two files' types merge for inference, and the sink's schema.

The sink's schema is Spark's (``toAvroType``): a record named ``recordName`` in
``recordNamespace``, nullable columns as ``[type, "null"]``, TIMESTAMP as timestamp-micros,
TIMESTAMP_NTZ as local-timestamp-micros, DATE as date, decimals as fixed of the fewest bytes.
"""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa
from pyspark.sql.types import (
    ArrayType,
    DataType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

from pysparksources._core.avro_schema import AvroNode
from pysparksources.errors import SchemaError
from pysparksources.files import NAME

__all__ = [
    "columns_of",
    "merge_fields",
    "merge_types",
    "min_bytes",
    "sink_problem",
    "sink_schema",
]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def columns_of(node: AvroNode, what: str) -> tuple[tuple[str, AvroNode], ...]:
    """The fields of a file's records: its top-level type must be a record."""
    if node.kind != "record":
        raise SchemaError(
            NAME,
            f"{what}: the top-level type is {node.describe()}, not a record; Spark reads "
            "files of records only",
        )
    return node.fields


# -- the sink's schema ----------------------------------------------------------------------
def sink_problem(fields: list[pa.Field]) -> str | None:
    """Why Spark's Avro writer could not write these columns (None: it can)."""
    for fld in fields:
        problem = _name_problem(fld.name) or _type_problem(fld.type, fld.name)
        if problem is not None:
            return problem
    return None


def _name_problem(name: str) -> str | None:
    if _NAME.fullmatch(name):
        return None
    return (
        f"column {name!r} is not a valid Avro name (letters, digits and _, not starting with "
        "a digit): rename it (Spark's Avro writer refuses it too)"
    )


def _type_problem(dtype: pa.DataType, where: str) -> str | None:
    t = pa.types
    if t.is_struct(dtype):
        for child in dtype:
            problem = _name_problem(child.name) or _type_problem(
                child.type, f"{where}.{child.name}"
            )
            if problem is not None:
                return problem
        return None
    if t.is_list(dtype) or t.is_large_list(dtype):
        return _type_problem(dtype.value_type, where)
    if t.is_map(dtype):
        if not (t.is_string(dtype.key_type) or t.is_large_string(dtype.key_type)):
            return f"column {where!r}: Avro maps have STRING keys, not {dtype.key_type}"
        return _type_problem(dtype.item_type, where)
    if not t.is_decimal(dtype) and _avro_leaf(dtype) is None:
        return f"column {where!r}: Avro has no type for {dtype}"
    return None


def _avro_leaf(dtype: pa.DataType) -> Any:
    t = pa.types
    if t.is_boolean(dtype):
        return "boolean"
    if t.is_int8(dtype) or t.is_int16(dtype) or t.is_int32(dtype):
        return "int"
    if t.is_int64(dtype):
        return "long"
    if t.is_float32(dtype):
        return "float"
    if t.is_float64(dtype):
        return "double"
    if t.is_string(dtype) or t.is_large_string(dtype):
        return "string"
    if t.is_binary(dtype) or t.is_large_binary(dtype):
        return "bytes"
    if t.is_date32(dtype):
        return {"type": "int", "logicalType": "date"}
    if t.is_timestamp(dtype):
        logical = "timestamp-micros" if dtype.tz is not None else "local-timestamp-micros"
        return {"type": "long", "logicalType": logical}
    if t.is_null(dtype):
        return "null"
    return None


def sink_schema(fields: list[pa.Field], record_name: str, namespace: str) -> dict[str, Any]:
    """The Avro schema Spark's writer gives these columns (``toAvroType``)."""
    return _Writer().record(fields, record_name, namespace)


class _Writer:
    """Spark's names: a struct column ``s`` is record ``s`` in its parent's namespace, a
    decimal column ``d`` fixed ``<namespace>.d.fixed``; a name used again is referenced."""

    def __init__(self) -> None:
        self.defined: set[str] = set()

    def record(self, fields: list[pa.Field], name: str, namespace: str) -> dict[str, Any]:
        full = f"{namespace}.{name}" if namespace else name
        inner = full
        out: dict[str, Any] = {"type": "record", "name": name}
        if namespace:
            out["namespace"] = namespace
        out["fields"] = [
            {"name": f.name, "type": self.typed(f.type, f.nullable, f.name, inner)} for f in fields
        ]
        self.defined.add(full)
        return out

    def typed(self, dtype: pa.DataType, nullable: bool, name: str, namespace: str) -> Any:
        avro = self.plain(dtype, name, namespace)
        return [avro, "null"] if nullable and not pa.types.is_null(dtype) else avro

    def plain(self, dtype: pa.DataType, name: str, namespace: str) -> Any:
        t = pa.types
        if t.is_struct(dtype):
            full = f"{namespace}.{name}" if namespace else name
            if full in self.defined:
                return full
            return self.record(list(dtype), name, namespace)
        if t.is_list(dtype) or t.is_large_list(dtype):
            item = dtype.value_field
            return {"type": "array", "items": self.typed(item.type, item.nullable, name, namespace)}
        if t.is_map(dtype):
            item = dtype.item_field
            return {"type": "map", "values": self.typed(item.type, item.nullable, name, namespace)}
        if t.is_decimal(dtype):
            full = f"{namespace}.{name}.fixed" if namespace else f"{name}.fixed"
            if full in self.defined:
                return full
            self.defined.add(full)
            return {
                "type": "fixed",
                "name": full,
                "size": min_bytes(dtype.precision),
                "logicalType": "decimal",
                "precision": dtype.precision,
                "scale": dtype.scale,
            }
        return _avro_leaf(dtype)


def min_bytes(precision: int) -> int:
    """The fewest bytes of two's complement that hold every decimal of ``precision`` digits."""
    size = 1
    while 2 ** (8 * size - 1) < 10**precision:
        size += 1
    return size


def merge_types(left: DataType, right: DataType) -> DataType | None:
    """Two files' types of one column merged (inference): struct fields by name, new ones
    appended; None when they differ otherwise. An int column and a long one merge as long (Avro
    promotes int to long, and so does a reader schema)."""
    if left == right:
        return left
    if {type(left), type(right)} == {IntegerType, LongType}:
        return LongType()
    if {type(left), type(right)} == {FloatType, DoubleType}:
        return DoubleType()
    if isinstance(left, StructType) and isinstance(right, StructType):
        merged = merge_fields(left, right)
        return merged if isinstance(merged, StructType) else None
    if isinstance(left, ArrayType) and isinstance(right, ArrayType):
        element = merge_types(left.elementType, right.elementType)
        return None if element is None else ArrayType(element)
    if isinstance(left, MapType) and isinstance(right, MapType):
        value = merge_types(left.valueType, right.valueType)
        return None if value is None else MapType(StringType(), value)
    return None


def merge_fields(
    left: StructType, right: StructType
) -> StructType | tuple[StructField, StructField]:
    """Two structs merged by field name (case-insensitively), ``right``'s new fields appended;
    or the first pair of fields (``right``'s, ``left``'s) whose types do not merge."""
    fields = list(left.fields)
    index = {f.name.lower(): i for i, f in enumerate(fields)}
    for fld in right.fields:
        at = index.get(fld.name.lower())
        if at is None:
            index[fld.name.lower()] = len(fields)
            fields.append(fld)
            continue
        merged = merge_types(fields[at].dataType, fld.dataType)
        if merged is None:
            return fld, fields[at]
        fields[at] = StructField(fields[at].name, merged)
    return StructType(fields)
