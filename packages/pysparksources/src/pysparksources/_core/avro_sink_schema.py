"""The Avro schema Spark's Avro writer gives Spark's columns (spark-avro's ``toAvroType``), for
both sinks: pyfile's Avro files (a record named ``recordName`` in ``recordNamespace``) and
pyeventhub's ``bodyFormat=avro`` without ``avroSchema`` (``to_avro``'s ``topLevelRecord``).

Nullable columns are ``[type, "null"]``, TIMESTAMP is timestamp-micros, TIMESTAMP_NTZ
local-timestamp-micros, DATE date, NULL null, a decimal a fixed of the fewest bytes named
``<namespace>.<column>.fixed``, a struct column a record named after it in its parent's
namespace. A column name must be an Avro name and a map's keys strings, as Spark's writer
requires: :func:`sink_problem` says which column breaks that, before anything is written.
"""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa

__all__ = ["min_bytes", "sink_problem", "sink_schema", "sink_type"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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
    """The Avro schema Spark's writer gives these columns (``toAvroType``); the columns
    passed :func:`sink_problem`."""
    return _Writer().record(fields, record_name, namespace)


def sink_type(dtype: pa.DataType, record_name: str, namespace: str) -> Any:
    """The Avro schema ``to_avro`` gives a column of ``dtype`` (a struct: a record named
    ``record_name``); the column passed :func:`sink_problem`."""
    return _Writer().plain(dtype, record_name, namespace)


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
