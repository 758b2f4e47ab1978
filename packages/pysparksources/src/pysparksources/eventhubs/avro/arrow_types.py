"""Avro values (as fastavro reads and writes them) <-> Arrow arrays in Spark's types.

fastavro turns each body into Python objects; converting those to Arrow is one C++ pass
(``pa.array(values, type)``) as long as their shape matches. Logical types whose Python
objects are slow or lossy (dates, times, timestamps, uuid) are read as their raw ints and
strings instead and converted column-wise afterwards (:func:`finish`). Only general unions,
which Spark shows as ``struct<member0, ...>``, need a Python pass (:func:`union_shaper`).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from pysparksources._core.avro_schema import AvroNode, fastavro_document
from pysparksources.errors import MalformedRecordError
from pysparksources.eventhubs import NAME

__all__ = [
    "arrow_type",
    "avro_shaper",
    "cast",
    "finish",
    "needs_finish",
    "raw_schema",
    "union_shaper",
]

_TIMESTAMPS = {"timestamp-millis": ("UTC", 1000), "timestamp-micros": ("UTC", 1)}
_LOCAL = {"local-timestamp-millis": (None, 1000), "local-timestamp-micros": (None, 1)}
Shaper = Callable[[Any], Any]


def raw_schema(document: Any) -> Any:
    """A copy of a schema document for fastavro's decoder: decimals kept (fastavro's Decimal
    objects convert to Arrow in one pass), every other logical type read raw (see module doc)."""
    return fastavro_document(document, keep={"decimal"})


def _timestamp(avro: AvroNode) -> tuple[str | None, int] | None:
    if avro.kind != "long":
        return None
    return _TIMESTAMPS.get(avro.logical or "") or _LOCAL.get(avro.logical or "")


def arrow_type(avro: AvroNode, raw: bool = False) -> pa.DataType:
    """The Arrow type of Spark's type for ``avro``; ``raw``: as read before :func:`finish`."""
    kind = avro.kind
    if kind == "null":
        return pa.null()
    if kind == "boolean":
        return pa.bool_()
    if kind == "int":
        return pa.date32() if avro.logical == "date" and not raw else pa.int32()
    if kind == "long":
        stamp = _timestamp(avro)
        if stamp is None or raw:
            return pa.int64()
        return pa.timestamp("us", tz=stamp[0])
    if kind == "float":
        return pa.float32()
    if kind == "double":
        return pa.float64()
    if kind in ("bytes", "fixed"):
        if avro.logical == "decimal":
            return pa.decimal128(avro.precision, avro.scale)
        return pa.binary()
    if kind in ("string", "enum"):
        return pa.string()
    if kind == "record":
        return pa.struct([pa.field(n, arrow_type(t, raw)) for n, t in avro.fields])
    if kind == "array":
        assert avro.items is not None
        return pa.list_(arrow_type(avro.items, raw))
    if kind == "map":
        assert avro.items is not None
        return pa.map_(pa.string(), arrow_type(avro.items, raw))
    rest = avro.non_null
    if not rest:
        return pa.null()
    if len(rest) == 1:
        return arrow_type(rest[0], raw)
    if not avro.general_union():
        return pa.int64() if {b.kind for b in rest} == {"int", "long"} else pa.float64()
    return pa.struct([pa.field(f"member{i}", arrow_type(b, raw)) for i, b in enumerate(rest)])


def cast(array: pa.Array, target: pa.DataType) -> pa.Array:
    """``array.cast(target)``, rebuilt child by child where ``null`` sits inside: Arrow 26's
    cast of ``list<null>`` keeps the list's offsets but not the null child's length, and the
    array it returns is invalid (an Avro array of nulls)."""
    if not _holds_null(target):
        return array.cast(target)
    mask = _mask(array)
    if pa.types.is_null(target):
        return pa.nulls(len(array))
    if pa.types.is_struct(target):
        children = [cast(array.field(i), target.field(i).type) for i in range(target.num_fields)]
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    if pa.types.is_map(target):
        items = cast(array.items, target.item_type)
        keys = array.keys.cast(target.key_type)
        return pa.MapArray.from_arrays(array.offsets, keys, items, type=target, mask=mask)
    if pa.types.is_list(target):
        values = cast(array.values, target.value_type)
        return pa.ListArray.from_arrays(array.offsets, values, type=target, mask=mask)
    return array.cast(target)


def _holds_null(arrow: pa.DataType) -> bool:
    if pa.types.is_null(arrow):
        return True
    if pa.types.is_map(arrow):
        return _holds_null(arrow.item_type)
    if pa.types.is_list(arrow):
        return _holds_null(arrow.value_type)
    if pa.types.is_struct(arrow):
        return any(_holds_null(arrow.field(i).type) for i in range(arrow.num_fields))
    return False


def needs_finish(avro: AvroNode) -> bool:
    """Whether a raw array of this type needs :func:`finish` (dates or timestamps inside)."""
    if avro.kind == "int":
        return avro.logical == "date"
    if avro.kind == "long":
        return _timestamp(avro) is not None
    return any(needs_finish(c) for c in avro.children())


def _mask(array: pa.Array) -> pa.Array | None:
    return array.is_null() if array.null_count else None


def finish(array: pa.Array, avro: AvroNode) -> pa.Array:
    """Convert a raw array (dates as days, timestamps as integers) to Spark's types."""
    if not needs_finish(avro):
        return array
    kind = avro.kind
    if kind == "int":
        return array.cast(pa.date32())
    if kind == "long":
        stamp = _timestamp(avro)
        assert stamp is not None
        zone, factor = stamp
        micros = pc.multiply_checked(array, factor) if factor != 1 else array
        return micros.cast(pa.timestamp("us", tz=zone))
    if kind == "record" or avro.general_union():
        members = (
            avro.fields
            if kind == "record"
            else [(f"member{i}", b) for i, b in enumerate(avro.non_null)]
        )
        children = [finish(array.field(i), t) for i, (_, t) in enumerate(members)]
        names = [n for n, _ in members]
        return pa.StructArray.from_arrays(children, names=names, mask=_mask(array))
    if kind == "array":
        assert avro.items is not None
        values = finish(array.values, avro.items)
        return pa.ListArray.from_arrays(array.offsets, values, mask=_mask(array))
    if kind == "map":
        assert avro.items is not None
        items = finish(array.items, avro.items)
        return pa.MapArray.from_arrays(array.offsets, array.keys, items, mask=_mask(array))
    return finish(array, avro.non_null[0])  # null + one branch


def _has_general_union(avro: AvroNode) -> bool:
    if avro.general_union():
        return True
    return any(_has_general_union(c) for c in avro.children())


def _matches(value: Any, branch: AvroNode) -> bool:
    kind = branch.kind
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind in ("int", "long"):
        return isinstance(value, int) and not isinstance(value, bool)
    if kind in ("float", "double"):
        return isinstance(value, float)
    if kind == "string":
        return isinstance(value, str)
    if kind == "enum":
        return isinstance(value, str) and value in branch.symbols
    if kind in ("bytes", "fixed"):
        if branch.logical == "decimal":
            return isinstance(value, Decimal)
        return isinstance(value, bytes) and (kind == "bytes" or len(value) == branch.size)
    if kind == "record":
        if isinstance(value, tuple):  # fastavro's (name, record) in unions of several records
            return bool(value[0] == branch.name)
        return isinstance(value, dict)
    if kind == "map":
        return isinstance(value, dict)
    return isinstance(value, list)


def union_shaper(avro: AvroNode) -> Shaper | None:
    """A function turning fastavro's union values into Spark's member structs, or None."""
    if not _has_general_union(avro):
        return None
    return _shape(avro)


def _shape(avro: AvroNode) -> Shaper:
    kind = avro.kind
    if kind == "record":
        inner = [(n, _shape(t) if _has_general_union(t) else None) for n, t in avro.fields]
        return lambda v: v if v is None else {n: (s(v[n]) if s else v[n]) for n, s in inner}
    if kind in ("array", "map"):
        assert avro.items is not None
        item = _shape(avro.items)
        if kind == "array":
            return lambda v: v if v is None else [item(x) for x in v]
        return lambda v: v if v is None else {k: item(x) for k, x in v.items()}
    if kind != "union":
        return lambda v: v
    branches = avro.non_null
    if not avro.general_union():
        return _shape(branches[0])
    shapes = [_shape(b) for b in branches]

    def pick(value: Any) -> Any:
        if value is None:
            return None
        for i, branch in enumerate(branches):
            if _matches(value, branch):
                plain = value[1] if isinstance(value, tuple) else value
                return {f"member{i}": shapes[i](plain)}
        raise MalformedRecordError(NAME, f"value {value!r} matches no branch of the union")

    return pick


def avro_shaper(avro: AvroNode) -> Shaper | None:
    """For writing: Arrow's Python values (maps as pairs, member structs) -> fastavro's."""
    if not _needs_avro_shape(avro):
        return None
    return _to_avro(avro)


def _needs_avro_shape(avro: AvroNode) -> bool:
    if avro.kind == "map" or avro.general_union():
        return True
    return any(_needs_avro_shape(c) for c in avro.children())


def _to_avro(avro: AvroNode) -> Shaper:
    kind = avro.kind
    if kind == "record":
        inner = [(n, _to_avro(t) if _needs_avro_shape(t) else None) for n, t in avro.fields]
        return lambda v: v if v is None else {n: (s(v.get(n)) if s else v.get(n)) for n, s in inner}
    if kind == "array":
        assert avro.items is not None
        item = _to_avro(avro.items)
        return lambda v: v if v is None else [item(x) for x in v]
    if kind == "map":
        assert avro.items is not None
        value = _to_avro(avro.items)
        return lambda v: v if v is None else {k: value(x) for k, x in v}
    if kind != "union":
        return lambda v: v
    branches = avro.non_null
    if not avro.general_union():
        return _to_avro(branches[0]) if branches else (lambda v: v)
    shapes = [_to_avro(b) for b in branches]
    records = sum(1 for b in branches if b.kind == "record")

    def pick(value: Any) -> Any:
        if value is None:
            return None
        for i, branch in enumerate(branches):
            member = value.get(f"member{i}")
            if member is not None:
                shaped = shapes[i](member)
                # fastavro's way of naming the branch when several records could match
                return (branch.name, shaped) if branch.kind == "record" and records > 1 else shaped
        return None

    return pick
