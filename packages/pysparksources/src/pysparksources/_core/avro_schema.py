"""Avro schemas, parsed and bounded, as the Spark types spark-avro reads them as.

One model for both Avro readers: pyfile's Avro files (a file's header, ``avroSchema``) and
pyeventhub's ``bodyFormat=avro`` (``avroSchema``, a writer's schema from the registry).
Standard library only at import: pyeventhub's ``schema()`` parses ``avroSchema`` at ``load()``
in a process that need not have fastavro (pyspark's types are imported when asked for).

A schema can come from outside the query, so it is bounded before anything walks it: JSON at
most :data:`MAX_JSON_DEPTH` deep, types at most :data:`MAX_DEPTH` deep, at most
:data:`MAX_TYPES` types once each use of a named type is counted (a record naming another
twice, that one a third twice... doubles at each level of a document that grows by a line).

Spark's types are spark-avro's documented "Avro -> Spark SQL conversion": records are
structs, enums strings, fixed and bytes binary, maps ``map<string, ...>``; the logical types
decimal, date, timestamp-millis/micros (TIMESTAMP), local-timestamp-millis/micros
(TIMESTAMP_NTZ) are read as such, any other (uuid, time-millis...) as its plain type. A union
with null is its other branch made nullable, ``[int, long]`` BIGINT, ``[float, double]``
DOUBLE, any other union a struct of its non-null branches ``member0``, ``member1``... (or
named after each branch's type, :class:`UnionNames`). Every field is nullable.

Where Avro's Java parser (which spark-avro uses) and a looser reader differ, this follows
Java's, so a schema reads the same in both sources and as Spark would read it:

- a logical type that does not fit its type (a decimal whose scale exceeds its precision,
  ``date`` on a string) is ignored, the plain type read; a decimal wider than 38 digits is
  refused, as Spark's DECIMAL is;
- a record that contains itself is refused (spark-avro's default ``recursiveFieldMaxDepth``);
- a named type defined twice is refused, unless defined the same way again (Apache avro's
  Python writer repeats a decimal fixed's definition at each use);
- a union holding another union directly or one type twice is refused, and so is a record
  with two fields of one name;
- ``{"type": "a.Named"}`` names a type defined before, as a plain ``"a.Named"`` does.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pysparksources.errors import SchemaError

if TYPE_CHECKING:
    from pyspark.sql.types import DataType

__all__ = [
    "MAX_DEPTH",
    "MAX_JSON_DEPTH",
    "MAX_TYPES",
    "SPARK_LOGICAL_TYPES",
    "AvroNode",
    "UnionNames",
    "canonical_schema_text",
    "fastavro_document",
    "parse_schema",
    "spark_ddl",
    "spark_type",
    "walk",
]

MAX_JSON_DEPTH = 256
MAX_DEPTH = 64
MAX_TYPES = 100_000
PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")
_NAMED = ("record", "error", "enum", "fixed")
# Logical type -> the plain type it annotates; Spark reads no other (decimal: see _decimal).
_LOGICAL = {
    "date": "int",
    "timestamp-millis": "long",
    "timestamp-micros": "long",
    "local-timestamp-millis": "long",
    "local-timestamp-micros": "long",
}
SPARK_LOGICAL_TYPES = frozenset({*_LOGICAL, "decimal"})
_SPARK_MAX_PRECISION = 38


@dataclass(frozen=True, eq=False)
class AvroNode:
    """One type of a parsed schema, named references replaced by what they name (so a named
    type used twice is one node, reached twice)."""

    kind: str  # a primitive name, record, enum, fixed, array, map or union
    logical: str | None = None  # only one Spark reads, and only where it fits the type
    name: str | None = None  # the full name of a record, enum or fixed
    fields: tuple[tuple[str, AvroNode], ...] = ()
    items: AvroNode | None = None  # an array's items, a map's values
    branches: tuple[AvroNode, ...] = ()
    symbols: tuple[str, ...] = ()  # enum
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

    def children(self) -> list[AvroNode]:
        found = [t for _, t in self.fields] + list(self.branches)
        if self.items is not None:
            found.append(self.items)
        return found

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
def parse_schema(text: str, source: str, what: str | None = None) -> tuple[Any, AvroNode]:
    """The schema as JSON and as an :class:`AvroNode`; :class:`SchemaError` of ``source``
    (the source's NAME), its message starting with ``what`` (``avroSchema``, a file's header)
    when given, if it is not a schema Spark can read."""

    def error(detail: str) -> SchemaError:
        return SchemaError(source, f"{what}: {detail}" if what else detail)

    try:
        document = json.loads(text)
    except RecursionError:
        raise error(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    except (TypeError, ValueError) as problem:
        raise error(f"not an Avro schema, not valid JSON ({problem})") from None
    if _json_depth(document) > MAX_JSON_DEPTH:
        raise error(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        node = _Parser().parse(document, None, 1)
    except _InvalidSchema as problem:
        raise error(str(problem)) from None
    if _type_count(node) > MAX_TYPES:
        raise error(
            f"the schema expands to more than {MAX_TYPES} types (each use of a named type counts)"
        )
    return document, node


class _InvalidSchema(Exception):
    """Why a schema is refused; :func:`parse_schema` turns it into the source's SchemaError."""


def _json_depth(document: Any) -> int:
    """How deep arrays and objects nest, found without recursion (the text is not trusted)."""
    deepest, stack = 0, [(document, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, depth)
            if depth > MAX_JSON_DEPTH:
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
            found = known[id(node)] = 1 + sum(count(child) for child in node.children())
        return found

    return count(root)


def _full_name(name: str, namespace: Any) -> str:
    space = namespace if isinstance(namespace, str) and namespace else None
    return name if "." in name or space is None else f"{space}.{name}"


class _Parser:
    def __init__(self) -> None:
        self.named: dict[str, AvroNode] = {}
        self.definitions: dict[str, dict[str, Any]] = {}  # as first written, by full name
        self.open: set[str] = set()  # records being defined: naming one again is recursion

    def parse(self, item: Any, namespace: str | None, depth: int) -> AvroNode:
        if depth > MAX_DEPTH:
            raise _InvalidSchema(f"types nested deeper than {MAX_DEPTH} levels")
        if isinstance(item, str):
            return self._reference(item, namespace)
        if isinstance(item, list):
            return self._union(item, namespace, depth)
        if not isinstance(item, dict) or "type" not in item:
            raise _InvalidSchema(
                f"expected a type name, a list or an object with 'type', not {_short(item)}"
            )
        kind = item["type"]
        if isinstance(kind, (dict, list)):
            return self.parse(kind, namespace, depth + 1)
        if not isinstance(kind, str):
            raise _InvalidSchema(f"unknown Avro type {_short(kind)}")
        if kind in PRIMITIVES:
            decimal = _decimal(item, None) if kind == "bytes" else None
            if decimal is not None:
                return AvroNode("bytes", "decimal", precision=decimal[0], scale=decimal[1])
            return AvroNode(kind, _spark_logical(item))
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
                raise _InvalidSchema("a union holds another union directly")
            key = f"{branch.kind} {branch.name}" if branch.named else branch.kind
            if key in seen:
                raise _InvalidSchema(f"a union holds {key} twice")
            seen.add(key)
        return AvroNode("union", branches=branches)

    def _reference(self, name: str, namespace: str | None) -> AvroNode:
        if name in PRIMITIVES:
            return AvroNode(name)
        for candidate in (_full_name(name, namespace), name):
            if candidate in self.open:
                raise _InvalidSchema(
                    f"record {candidate} contains itself: Spark reads no recursive type"
                )
            if candidate in self.named:
                return self.named[candidate]
        raise _InvalidSchema(
            f"unknown Avro type {_short(name)}: neither a primitive type nor a named type "
            "defined before it"
        )

    def _named(
        self, item: dict[str, Any], kind: str, namespace: str | None, depth: int
    ) -> AvroNode:
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise _InvalidSchema(f"a {kind} without a name")
        full = _full_name(name, item.get("namespace", namespace))
        if full in self.named and self.definitions[full] == item:
            return self.named[full]  # defined again the same way: the same type
        if full in self.named or full in self.open:
            raise _InvalidSchema(f"the type {full} is defined twice")
        if kind == "enum":
            symbols = item.get("symbols")
            if not isinstance(symbols, list) or not all(isinstance(s, str) for s in symbols):
                raise _InvalidSchema(f"enum {full} needs a list of symbols")
            node = AvroNode("enum", name=full, symbols=tuple(symbols))
        elif kind == "fixed":
            size = item.get("size")
            if not isinstance(size, int) or isinstance(size, bool) or size < 0:
                raise _InvalidSchema(f"fixed {full} needs a size")
            decimal = _decimal(item, size)
            if decimal is None:
                node = AvroNode("fixed", name=full, size=size)
            else:
                node = AvroNode(
                    "fixed", "decimal", full, size=size, precision=decimal[0], scale=decimal[1]
                )
        else:
            node = self._record(item, full, depth)
        self.named[full] = node
        self.definitions[full] = item
        return node

    def _record(self, item: dict[str, Any], full: str, depth: int) -> AvroNode:
        fields = item.get("fields")
        if not isinstance(fields, list):
            raise _InvalidSchema(f"record {full} needs a list of fields")
        inner = full.rpartition(".")[0] or None
        self.open.add(full)
        parsed: list[tuple[str, AvroNode]] = []
        names: set[str] = set()
        for entry in fields:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise _InvalidSchema(f"record {full} has a field without a name")
            if entry["name"] in names:
                raise _InvalidSchema(f"record {full} has two fields named {entry['name']!r}")
            names.add(entry["name"])
            parsed.append((entry["name"], self.parse(entry.get("type"), inner, depth + 1)))
        self.open.discard(full)
        return AvroNode("record", name=full, fields=tuple(parsed))


def _spark_logical(item: dict[str, Any]) -> str | None:
    """The logical type of a primitive's definition that Spark reads, or None."""
    logical = item.get("logicalType")
    return logical if isinstance(logical, str) and _LOGICAL.get(logical) == item["type"] else None


def _decimal(item: dict[str, Any], size: int | None) -> tuple[int, int] | None:
    """(precision, scale) of a bytes or fixed (of ``size`` bytes) annotated as a decimal;
    None where there is no valid annotation (Avro's Java parser ignores it then, so Spark
    reads the plain type). Wider than Spark's DECIMAL is refused."""
    if item.get("logicalType") != "decimal":
        return None
    precision, scale = item.get("precision"), item.get("scale", 0)
    if (
        not isinstance(precision, int)
        or not isinstance(scale, int)
        or isinstance(precision, bool)
        or isinstance(scale, bool)
        or not precision > 0
        or not 0 <= scale <= precision
        or (size is not None and precision > _fixed_digits(size))
    ):
        return None
    if precision > _SPARK_MAX_PRECISION:
        raise _InvalidSchema(
            f"decimal({precision},{scale}) is wider than Spark's DECIMAL "
            f"({_SPARK_MAX_PRECISION} digits at most)"
        )
    return precision, scale


def _fixed_digits(size: int) -> int:
    """The most decimal digits ``size`` bytes of two's complement hold."""
    if size <= 0:
        return 0
    return len(str(2 ** (8 * size - 1) - 1)) - 1


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def canonical_schema_text(document: Any) -> str:
    """Compact JSON of a schema (key order kept): what a registry stores and compares."""
    return json.dumps(document, separators=(",", ":"))


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
        stack.extend(reversed(current.children()))


def fastavro_document(document: Any, keep: Collection[str] = ()) -> Any:
    """A copy of a parsed schema's JSON that fastavro reads as :func:`parse_schema` did: a
    logical type stays only where it is in ``keep`` and is one the model reads (fits its
    type, a valid decimal), so values arrive as the plain ints, longs and bytes they are
    stored as otherwise (the caller converts them, also where Python's date and datetime
    cannot hold them); a named type defined again the same way becomes a reference, which
    fastavro needs."""
    return _copy(document, None, set(), frozenset(keep))


def _copy(item: Any, namespace: str | None, defined: set[str], keep: frozenset[str]) -> Any:
    if isinstance(item, list):
        return [_copy(entry, namespace, defined, keep) for entry in item]
    if not isinstance(item, dict):
        return item
    kind = item.get("type")
    if isinstance(kind, (dict, list)):  # {"type": {...}}: the type inside
        return _copy(kind, namespace, defined, keep)
    if isinstance(kind, str) and kind not in (*PRIMITIVES, *_NAMED, "array", "map"):
        return kind  # {"type": "a.Named"}: a reference, resolved as the parser did
    size: int | None = None
    if kind in _NAMED and isinstance(item.get("name"), str):
        full = _full_name(item["name"], item.get("namespace", namespace))
        if full in defined:
            return full  # parse_schema checked it is the same definition
        defined.add(full)
        namespace = full.rpartition(".")[0] or None
        size = item.get("size") if kind == "fixed" else None
    if item.get("logicalType") == "decimal" and kind in ("bytes", "fixed"):
        read = "decimal" if _decimal(item, size) is not None else None
    else:
        read = _spark_logical(item) if kind in PRIMITIVES else None
    copied: dict[str, Any] = {}
    for key, value in item.items():
        if key == "logicalType" and (read is None or read not in keep):
            continue
        if key in ("items", "values") and kind in ("array", "map"):
            value = _copy(value, namespace, defined, keep)
        elif key == "fields" and kind in ("record", "error") and isinstance(value, list):
            value = [_field(entry, namespace, defined, keep) for entry in value]
        copied[key] = value
    return copied


def _field(entry: Any, namespace: str | None, defined: set[str], keep: frozenset[str]) -> Any:
    if not isinstance(entry, dict):
        return entry
    return {
        key: _copy(value, namespace, defined, keep) if key == "type" else value
        for key, value in entry.items()
    }


# -- Spark's types --------------------------------------------------------------------------
@dataclass(frozen=True)
class UnionNames:
    """How a union's members are named: ``member0``... or, ``stable`` (spark-avro's
    ``enableStableIdentifiersForUnionType``), prefix + type name. ``source`` (a NAME) raises
    the error when two stable names collide."""

    source: str
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
                    self.source,
                    f"enableStableIdentifiersForUnionType: two members of a union would be "
                    f"named {name!r} (names compare case-insensitively)",
                )
            seen.add(name.lower())
            names.append(name)
        return names


def spark_type(node: AvroNode, unions: UnionNames) -> DataType:
    """The Spark type spark-avro reads ``node`` as (every field nullable)."""
    from pyspark.sql import types as t

    kind, logical = node.kind, node.logical
    simple: dict[str, DataType] = {
        "null": t.NullType(),
        "boolean": t.BooleanType(),
        "float": t.FloatType(),
        "double": t.DoubleType(),
        "string": t.StringType(),
        "enum": t.StringType(),
    }
    if kind in simple:
        return simple[kind]
    if kind == "int":
        return t.DateType() if logical == "date" else t.IntegerType()
    if kind == "long":
        if logical in ("timestamp-millis", "timestamp-micros"):
            return t.TimestampType()
        if logical in ("local-timestamp-millis", "local-timestamp-micros"):
            return t.TimestampNTZType()
        return t.LongType()
    if kind in ("bytes", "fixed"):
        if logical == "decimal":
            return t.DecimalType(node.precision, node.scale)
        return t.BinaryType()
    if kind == "record":
        return t.StructType([t.StructField(n, spark_type(f, unions)) for n, f in node.fields])
    if kind == "array" and node.items is not None:  # parsed arrays and maps have items
        return t.ArrayType(spark_type(node.items, unions))
    if kind == "map" and node.items is not None:
        return t.MapType(t.StringType(), spark_type(node.items, unions))
    plain = node.plain()
    if plain is not node:
        return spark_type(plain, unions)
    kinds = {b.kind for b in node.branches}
    if len(node.branches) == 1:
        return spark_type(node.branches[0], unions)
    if kinds == {"int", "long"}:
        return t.LongType()
    if kinds == {"float", "double"}:
        return t.DoubleType()
    names = unions.names(node.branches)
    return t.StructType(
        [t.StructField(n, spark_type(b, unions)) for n, b in zip(names, node.branches, strict=True)]
    )


def spark_ddl(dtype: DataType) -> str:
    """``dtype`` as DDL Spark parses back, every struct field name quoted."""
    from pyspark.sql import types as t

    if isinstance(dtype, t.StructType):
        fields = ", ".join(f"{_quote(f.name)}: {spark_ddl(f.dataType)}" for f in dtype.fields)
        return f"struct<{fields}>"
    if isinstance(dtype, t.ArrayType):
        return f"array<{spark_ddl(dtype.elementType)}>"
    if isinstance(dtype, t.MapType):
        return f"map<{spark_ddl(dtype.keyType)}, {spark_ddl(dtype.valueType)}>"
    return dtype.simpleString()


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
