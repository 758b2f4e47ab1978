"""Avro schemas: parsed and checked, as Spark types, and Spark's columns as an Avro schema.

A schema comes from a file's header or from the ``avroSchema`` option, so it is checked
before anything walks it: JSON at most :data:`MAX_DEPTH` deep, at most :data:`MAX_TYPES`
types once each use of a named type is counted, no record containing itself (Spark refuses
recursive schemas by default), names defined once, unions as the Avro specification allows.

The Spark types are spark-avro's (its documented "Avro -> Spark SQL conversion"): records
are structs, enums strings, fixed and bytes binary, maps ``map<string, ...>``; the logical
types decimal, date, timestamp-millis/micros (TIMESTAMP), local-timestamp-millis/micros
(TIMESTAMP_NTZ) are read as such, any other (uuid, time-millis...) as its plain type; a
logical type that does not fit its type is ignored, as Avro's Java library does. A union with
null is its other branch made nullable, ``[int, long]`` BIGINT, ``[float, double]`` DOUBLE,
and any other union a struct of its non-null branches, ``member0``, ``member1``... (or named
after each branch's type with ``enableStableIdentifiersForUnionType``). Every column is
nullable, as Spark's file source makes them.

The sink's schema is Spark's too (``toAvroType``): a record named ``recordName`` in
``recordNamespace``, nullable columns as ``[type, "null"]``, TIMESTAMP as timestamp-micros,
TIMESTAMP_NTZ as local-timestamp-micros, DATE as date, decimals as fixed of the fewest bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from pysparksources.errors import SchemaError
from pysparksources.files import NAME

__all__ = [
    "MAX_DEPTH",
    "MAX_TYPES",
    "AvroNode",
    "UnionNames",
    "columns_of",
    "decoding_schema",
    "merge_types",
    "parse_schema",
    "sink_problem",
    "sink_schema",
    "spark_type",
]

MAX_DEPTH = 128
MAX_TYPES = 100_000
PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")
_NAMED = ("record", "error", "enum", "fixed")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Logical type -> the plain type it annotates; others (uuid, time-millis...) are not Spark's.
_LOGICAL = {
    "date": "int",
    "timestamp-millis": "long",
    "timestamp-micros": "long",
    "local-timestamp-millis": "long",
    "local-timestamp-micros": "long",
}
_SPARK_MAX_PRECISION = 38


@dataclass(frozen=True, eq=False)
class AvroNode:
    """One type of a parsed schema, named references replaced by what they name."""

    kind: str  # a primitive name, record, enum, fixed, array, map or union
    logical: str | None = None  # only one Spark reads, and only where it fits the type
    name: str | None = None  # the full name of a record, enum or fixed
    fields: tuple[tuple[str, AvroNode], ...] = ()
    items: AvroNode | None = None  # an array's items, a map's values
    branches: tuple[AvroNode, ...] = ()
    size: int = 0  # fixed
    precision: int = 0  # decimal
    scale: int = 0

    @property
    def named(self) -> bool:
        return self.kind in ("record", "enum", "fixed")

    @property
    def non_null(self) -> tuple[AvroNode, ...]:
        return tuple(b for b in self.branches if b.kind != "null")

    @property
    def nullable(self) -> bool:
        return self.kind == "null" or (
            self.kind == "union" and len(self.non_null) < len(self.branches)
        )

    def plain(self) -> AvroNode:
        """What a union with null stands for (the node itself otherwise): its one non-null
        branch, a union of the rest, or ``null``."""
        if self.kind != "union" or not self.nullable:
            return self
        rest = self.non_null
        if not rest:
            return AvroNode("null")
        return rest[0] if len(rest) == 1 else AvroNode("union", branches=rest)

    def general_union(self) -> bool:
        """A union Spark reads as a struct of members (not null+T, int+long, float+double)."""
        node = self.plain()
        if node.kind != "union":
            return False
        kinds = {b.kind for b in node.branches}
        return len(node.branches) != 1 and kinds not in ({"int", "long"}, {"float", "double"})

    def describe(self) -> str:
        """How messages name the type: ``long (timestamp-millis)``, ``record a.B``..."""
        if self.kind == "union":
            return "union [" + ", ".join(b.describe() for b in self.branches) + "]"
        if self.kind in ("array", "map") and self.items is not None:
            return f"{self.kind} of {self.items.describe()}"
        text = f"{self.kind} {self.name}" if self.named else self.kind
        if self.logical == "decimal":
            return f"{text} (decimal({self.precision},{self.scale}))"
        return f"{text} ({self.logical})" if self.logical else text


# -- parsing --------------------------------------------------------------------------------
def parse_schema(text: str, what: str) -> tuple[Any, AvroNode]:
    """The schema as JSON and as an :class:`AvroNode`; :class:`SchemaError` naming ``what``
    (``avroSchema``, a file's header) when it is not a schema Spark can read."""
    try:
        document = json.loads(text)
    except RecursionError:
        raise SchemaError(NAME, f"{what}: JSON nested deeper than {MAX_DEPTH} levels") from None
    except (TypeError, ValueError) as error:
        raise SchemaError(NAME, f"{what}: not an Avro schema, not valid JSON ({error})") from None
    if _json_depth(document) > MAX_DEPTH:
        raise SchemaError(NAME, f"{what}: JSON nested deeper than {MAX_DEPTH} levels")
    try:
        node = _Parser().parse(document, None, 1)
    except SchemaError as error:
        raise SchemaError(NAME, f"{what}: {error.detail}") from None
    if _type_count(node) > MAX_TYPES:
        raise SchemaError(
            NAME,
            f"{what}: the schema expands to more than {MAX_TYPES} types (each use of a named "
            "type counts)",
        )
    return document, node


def _json_depth(document: Any) -> int:
    """How deep arrays and objects nest, found without recursion (the text is not trusted)."""
    deepest, stack = 0, [(document, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, depth)
            if depth > MAX_DEPTH:
                break
            values = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in values)
    return deepest


def _type_count(root: AvroNode) -> int:
    """Types under ``root`` with every use of a named type counted: what walking it costs."""
    known: dict[int, int] = {}

    def count(node: AvroNode) -> int:
        found = known.get(id(node))
        if found is None:
            children = [t for _, t in node.fields] + list(node.branches)
            if node.items is not None:
                children.append(node.items)
            found = known[id(node)] = 1 + sum(count(child) for child in children)
        return found

    return count(root)


class _Parser:
    def __init__(self) -> None:
        self.named: dict[str, AvroNode] = {}
        self.definitions: dict[str, dict[str, Any]] = {}  # as first written, by full name
        self.open: set[str] = set()  # records being defined: naming one again is recursion

    def parse(self, item: Any, namespace: str | None, depth: int) -> AvroNode:
        if depth > MAX_DEPTH:
            raise SchemaError(NAME, f"types nested deeper than {MAX_DEPTH} levels")
        if isinstance(item, str):
            return self._reference(item, namespace)
        if isinstance(item, list):
            return self._union(item, namespace, depth)
        if not isinstance(item, dict) or "type" not in item:
            raise SchemaError(
                NAME, f"expected a type name, a list or an object with 'type', not {_short(item)}"
            )
        kind = item["type"]
        if isinstance(kind, (dict, list)):
            return self.parse(kind, namespace, depth + 1)
        if not isinstance(kind, str):
            raise SchemaError(NAME, f"unknown Avro type {_short(kind)}")
        logical = item.get("logicalType")
        if kind in PRIMITIVES:
            if kind == "bytes" and logical == "decimal":
                return _decimal(AvroNode("bytes"), item, None)
            return AvroNode(kind, logical if _LOGICAL.get(str(logical)) == kind else None)
        if kind == "array":
            return AvroNode("array", items=self.parse(item.get("items"), namespace, depth + 1))
        if kind == "map":
            return AvroNode("map", items=self.parse(item.get("values"), namespace, depth + 1))
        if kind in _NAMED:
            return self._named(item, kind, namespace, depth)
        return self._reference(kind, namespace)  # {"type": "a.Named"}

    def _union(self, items: list[Any], namespace: str | None, depth: int) -> AvroNode:
        branches = tuple(self.parse(b, namespace, depth + 1) for b in items)
        seen: set[str] = set()
        for branch in branches:
            if branch.kind == "union":
                raise SchemaError(NAME, "a union holds another union directly")
            key = f"{branch.kind} {branch.name}" if branch.named else branch.kind
            if key in seen:
                raise SchemaError(NAME, f"a union holds {key} twice")
            seen.add(key)
        return AvroNode("union", branches=branches)

    def _reference(self, name: str, namespace: str | None) -> AvroNode:
        if name in PRIMITIVES:
            return AvroNode(name)
        full = name if "." in name or not namespace else f"{namespace}.{name}"
        for candidate in (full, name):
            if candidate in self.open:
                raise SchemaError(
                    NAME,
                    f"record {candidate} contains itself: Spark reads no recursive schema",
                )
            if candidate in self.named:
                return self.named[candidate]
        raise SchemaError(NAME, f"unknown type {_short(name)}")

    def _named(
        self, item: dict[str, Any], kind: str, namespace: str | None, depth: int
    ) -> AvroNode:
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise SchemaError(NAME, f"a {kind} without a name")
        space = item.get("namespace", namespace)
        space = space if isinstance(space, str) and space else None
        full = name if "." in name or space is None else f"{space}.{name}"
        if full in self.named and self.definitions[full] == item:
            # Apache avro's Python writer repeats a decimal fixed's whole definition at each
            # use; the same definition again names the same type.
            return self.named[full]
        if full in self.named or full in self.open:
            raise SchemaError(NAME, f"the type {full} is defined twice")
        if kind == "enum":
            symbols = item.get("symbols")
            if not isinstance(symbols, list) or not all(isinstance(s, str) for s in symbols):
                raise SchemaError(NAME, f"enum {full} needs a list of symbols")
            node = AvroNode("enum", name=full)
        elif kind == "fixed":
            size = item.get("size")
            if not isinstance(size, int) or isinstance(size, bool) or size < 0:
                raise SchemaError(NAME, f"fixed {full} needs a size")
            node = AvroNode("fixed", name=full, size=size)
            if item.get("logicalType") == "decimal":
                node = _decimal(node, item, size)
        else:
            node = self._record(item, full, depth)
        self.named[full] = node
        self.definitions[full] = item
        return node

    def _record(self, item: dict[str, Any], full: str, depth: int) -> AvroNode:
        fields = item.get("fields")
        if not isinstance(fields, list):
            raise SchemaError(NAME, f"record {full} needs a list of fields")
        inner = full.rpartition(".")[0] or None
        self.open.add(full)
        parsed: list[tuple[str, AvroNode]] = []
        names: set[str] = set()
        for entry in fields:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise SchemaError(NAME, f"record {full} has a field without a name")
            if entry["name"] in names:
                raise SchemaError(NAME, f"record {full} has two fields named {entry['name']!r}")
            names.add(entry["name"])
            parsed.append((entry["name"], self.parse(entry.get("type"), inner, depth + 1)))
        self.open.discard(full)
        return AvroNode("record", name=full, fields=tuple(parsed))


def _decimal(node: AvroNode, item: dict[str, Any], size: int | None) -> AvroNode:
    """The decimal a bytes or fixed type holds; the plain type where the annotation is not a
    valid decimal (Avro's Java library ignores it then, and so does Spark)."""
    precision, scale = item.get("precision"), item.get("scale", 0)
    valid = (
        isinstance(precision, int)
        and isinstance(scale, int)
        and not isinstance(precision, bool)
        and not isinstance(scale, bool)
        and precision > 0
        and 0 <= scale <= precision
        and (size is None or precision <= _fixed_digits(size))
    )
    if not valid or not isinstance(precision, int) or not isinstance(scale, int):
        return node  # (the last two for mypy: ``valid`` checked them)
    if precision > _SPARK_MAX_PRECISION:
        raise SchemaError(
            NAME,
            f"decimal({precision},{scale}) is wider than Spark's DECIMAL "
            f"({_SPARK_MAX_PRECISION} digits at most)",
        )
    return AvroNode(
        node.kind, "decimal", node.name, size=node.size, precision=precision, scale=scale
    )


def _fixed_digits(size: int) -> int:
    """The most decimal digits ``size`` bytes of two's complement hold."""
    if size <= 0:
        return 0
    return len(str(2 ** (8 * size - 1) - 1)) - 1


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# -- Spark's types --------------------------------------------------------------------------
@dataclass(frozen=True)
class UnionNames:
    """How a union's members are named: ``member0``... or, stable, prefix + type name."""

    stable: bool = False
    prefix: str = "member_"

    def names(self, branches: tuple[AvroNode, ...]) -> list[str]:
        if not self.stable:
            return [f"member{i}" for i in range(len(branches))]
        names: list[str] = []
        seen: set[str] = set()
        for branch in branches:
            type_name = (
                branch.name.rpartition(".")[2] if branch.named and branch.name else branch.kind
            )
            name = self.prefix + type_name
            if name.lower() in seen:
                raise SchemaError(
                    NAME,
                    f"enableStableIdentifiersForUnionType: two members of a union would be "
                    f"named {name!r} (names compare case-insensitively)",
                )
            seen.add(name.lower())
            names.append(name)
        return names


def spark_type(node: AvroNode, unions: UnionNames) -> DataType:
    """The Spark type spark-avro reads ``node`` as (every field nullable)."""
    kind, logical = node.kind, node.logical
    if kind == "null":
        return NullType()
    if kind == "boolean":
        return BooleanType()
    if kind == "int":
        return DateType() if logical == "date" else IntegerType()
    if kind == "long":
        if logical in ("timestamp-millis", "timestamp-micros"):
            return TimestampType()
        if logical in ("local-timestamp-millis", "local-timestamp-micros"):
            return TimestampNTZType()
        return LongType()
    if kind == "float":
        return FloatType()
    if kind == "double":
        return DoubleType()
    if kind in ("string", "enum"):
        return StringType()
    if kind in ("bytes", "fixed"):
        return DecimalType(node.precision, node.scale) if logical == "decimal" else BinaryType()
    if kind == "record":
        return StructType([StructField(n, spark_type(t, unions)) for n, t in node.fields])
    if kind == "array" and node.items is not None:  # parsed arrays and maps have items
        return ArrayType(spark_type(node.items, unions))
    if kind == "map" and node.items is not None:
        return MapType(StringType(), spark_type(node.items, unions))
    return _union_type(node, unions)


def _union_type(node: AvroNode, unions: UnionNames) -> DataType:
    plain = node.plain()
    if plain is not node:
        return spark_type(plain, unions)
    branches = node.branches
    kinds = {b.kind for b in branches}
    if len(branches) == 1:
        return spark_type(branches[0], unions)
    if kinds == {"int", "long"}:
        return LongType()
    if kinds == {"float", "double"}:
        return DoubleType()
    names = unions.names(branches)
    return StructType(
        [StructField(n, spark_type(b, unions)) for n, b in zip(names, branches, strict=True)]
    )


def columns_of(node: AvroNode, what: str) -> tuple[tuple[str, AvroNode], ...]:
    """The fields of a file's records: its top-level type must be a record."""
    if node.kind != "record":
        raise SchemaError(
            NAME,
            f"{what}: the top-level type is {node.describe()}, not a record; Spark reads "
            "files of records only",
        )
    return node.fields


def decoding_schema(document: Any) -> Any:
    """``document`` without logical types: what fastavro decodes with, so that values arrive
    as the plain ints, longs and bytes they are stored as (pyfile converts them itself, also
    where Python's date and datetime cannot hold them). A named type defined again the same
    way (Apache avro's Python writer does so) becomes a reference, which fastavro needs."""
    return _strip(document, None, set())


def _strip(item: Any, namespace: str | None, defined: set[str]) -> Any:
    if isinstance(item, list):
        return [_strip(entry, namespace, defined) for entry in item]
    if not isinstance(item, dict):
        return item
    if item.get("type") in _NAMED and isinstance(item.get("name"), str):
        name, space = item["name"], item.get("namespace", namespace)
        full = name if "." in name or not space else f"{space}.{name}"
        if full in defined:
            return full  # parse_schema checked it is the same definition
        defined.add(full)
        namespace = full.rpartition(".")[0] or None
    return {k: _strip(v, namespace, defined) for k, v in item.items() if k != "logicalType"}


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


def walk(node: AvroNode) -> Iterator[AvroNode]:
    """Every type under ``node`` once (named types are shared), depth first."""
    seen: set[int] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        stack.extend(t for _, t in current.fields)
        stack.extend(current.branches)
        if current.items is not None:
            stack.append(current.items)


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
                return None
            fields[at] = StructField(fields[at].name, merged)
        return StructType(fields)
    if isinstance(left, ArrayType) and isinstance(right, ArrayType):
        element = merge_types(left.elementType, right.elementType)
        return None if element is None else ArrayType(element)
    if isinstance(left, MapType) and isinstance(right, MapType):
        value = merge_types(left.valueType, right.valueType)
        return None if value is None else MapType(StringType(), value)
    return None
