"""Avro schemas as Spark types, the way spark-avro's ``from_avro`` sees them.

Standard library only: the data source's ``schema()`` calls this at ``load()``, in a process
that should not need fastavro. The mapping follows spark-avro's SchemaConverters: record ->
struct, enum -> string, fixed/bytes -> binary (decimal logical type -> decimal), a union with
null -> the other branch made nullable, [int, long] -> long, [float, double] -> double, any
other union -> struct<member0, member1, ...>, date -> date, timestamp-millis/micros ->
timestamp, local-timestamp-millis/micros -> timestamp_ntz, map -> map<string, ...>. Every
Spark field is nullable: a bad event in PERMISSIVE mode leaves the whole record null.

A schema can come from outside the query (a writer's schema from the registry), so its size
is bounded before anything walks it: JSON nested at most :data:`MAX_JSON_DEPTH` deep, Avro
types at most :data:`MAX_DEPTH`, and at most :data:`MAX_TYPES` types once every use of a named
type is counted (a record naming another twice, that one naming a third twice, ... doubles at
each level in a document that grows by a line).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pysparksources.errors import SchemaError
from pysparksources.eventhubs import NAME

__all__ = [
    "MAX_DEPTH",
    "MAX_JSON_DEPTH",
    "MAX_TYPES",
    "AvroType",
    "canonical_schema_text",
    "parse_avro_schema",
    "spark_ddl",
]

_PRIMITIVE_DDL = {
    "null": "void",
    "boolean": "boolean",
    "int": "int",
    "long": "bigint",
    "float": "float",
    "double": "double",
    "bytes": "binary",
    "string": "string",
}
_NAMED = ("record", "error", "enum", "fixed")
MAX_JSON_DEPTH = 256
MAX_DEPTH = 64
MAX_TYPES = 100_000


@dataclass
class AvroType:
    """One node of a resolved Avro schema: named references replaced by their definitions."""

    kind: str  # a primitive name, record, enum, fixed, array, map or union
    logical: str | None = None
    name: str | None = None  # full name of a named type
    fields: list[tuple[str, AvroType]] = field(default_factory=list)  # record fields
    items: AvroType | None = None  # array items, map values
    branches: list[AvroType] = field(default_factory=list)  # union branches
    symbols: tuple[str, ...] = ()  # enum symbols
    size: int = 0  # fixed size
    precision: int = 0
    scale: int = 0

    @property
    def non_null_branches(self) -> list[AvroType]:
        return [b for b in self.branches if b.kind != "null"]

    @property
    def nullable_union(self) -> bool:
        return self.kind == "union" and len(self.non_null_branches) < len(self.branches)

    def general_union(self) -> bool:
        """A union Spark turns into struct<member0, ...> (not null+T, int+long, float+double)."""
        if self.kind != "union":
            return False
        kinds = {b.kind for b in self.non_null_branches}
        return len(self.non_null_branches) > 1 and kinds not in (
            {"int", "long"},
            {"float", "double"},
        )


def parse_avro_schema(text: str) -> tuple[Any, AvroType]:
    """The schema as JSON and as a resolved :class:`AvroType`; SchemaError if invalid."""
    try:
        document = json.loads(text)
    except RecursionError:
        raise SchemaError(NAME, f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    except (TypeError, ValueError) as e:
        raise SchemaError(NAME, f"not valid JSON ({e})") from None
    if _json_depth(document) > MAX_JSON_DEPTH:
        raise SchemaError(NAME, f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    resolved = _Resolver().resolve(document, None, 1)
    if type_count(resolved) > MAX_TYPES:
        raise SchemaError(
            NAME,
            f"the schema expands to more than {MAX_TYPES} types (each use of a named type counts)",
        )
    return document, resolved


def _json_depth(document: Any) -> int:
    """How deep arrays and objects nest (without recursion: the document is not trusted)."""
    deepest, stack = 0, [(document, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (list, dict)):
            deepest = max(deepest, depth)
            if depth > MAX_JSON_DEPTH:
                break
            stack.extend((child, depth + 1) for child in _children(node))
    return deepest


def _children(node: list[Any] | dict[str, Any]) -> list[Any]:
    return list(node.values()) if isinstance(node, dict) else node


def type_count(avro: AvroType) -> int:
    """Types in ``avro`` with every use of a named type counted (what walking it costs)."""
    memo: dict[int, int] = {}

    def count(node: AvroType) -> int:
        known = memo.get(id(node))
        if known is None:
            children = [t for _, t in node.fields] + node.branches
            if node.items is not None:
                children.append(node.items)
            known = memo[id(node)] = 1 + sum(count(c) for c in children)
        return known

    return count(avro)


def canonical_schema_text(document: Any) -> str:
    """Compact JSON of a schema (key order kept): what the registry stores and compares."""
    return json.dumps(document, separators=(",", ":"))


class _Resolver:
    def __init__(self) -> None:
        self.named: dict[str, AvroType] = {}
        self.open: set[str] = set()  # records being defined: a reference back is recursion

    def resolve(self, node: Any, namespace: str | None, depth: int) -> AvroType:
        if depth > MAX_DEPTH:
            raise SchemaError(NAME, f"types nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, str):
            return self._reference(node, namespace)
        if isinstance(node, list):
            return AvroType("union", branches=[self.resolve(b, namespace, depth + 1) for b in node])
        if not isinstance(node, dict) or "type" not in node:
            raise SchemaError(
                NAME, f"expected a type name, a list or an object with 'type': {node!r}"
            )
        kind = node["type"]
        if isinstance(kind, (dict, list)):
            return self.resolve(kind, namespace, depth + 1)
        logical = node.get("logicalType")
        if kind in _PRIMITIVE_DDL:
            result = AvroType(kind, logical=logical)
            if logical == "decimal" and kind == "bytes":
                self._decimal(result, node)
            return result
        if kind == "array":
            return AvroType("array", items=self.resolve(node.get("items"), namespace, depth + 1))
        if kind == "map":
            return AvroType("map", items=self.resolve(node.get("values"), namespace, depth + 1))
        if kind in _NAMED:
            return self._named(node, kind, namespace, logical, depth)
        raise SchemaError(NAME, f"unknown Avro type {kind!r}")

    def _decimal(self, result: AvroType, node: dict[str, Any]) -> None:
        precision, scale = node.get("precision"), node.get("scale", 0)
        if (
            not isinstance(precision, int)
            or not isinstance(scale, int)
            or not 0 <= scale <= precision
        ):
            raise SchemaError(NAME, f"decimal needs 0 <= scale <= precision: {node!r}")
        if precision > 38:
            raise SchemaError(NAME, f"decimal precision {precision} exceeds Spark's maximum of 38")
        result.precision, result.scale = precision, scale

    def _reference(self, name: str, namespace: str | None) -> AvroType:
        if name in _PRIMITIVE_DDL:
            return AvroType(name)
        full = name if "." in name or not namespace else f"{namespace}.{name}"
        for candidate in (full, name):
            if candidate in self.open:
                raise SchemaError(
                    NAME, f"record {candidate} contains itself; Spark has no recursive types"
                )
            if candidate in self.named:
                return self.named[candidate]
        raise SchemaError(NAME, f"unknown type name {name!r}")

    def _named(
        self,
        node: dict[str, Any],
        kind: str,
        namespace: str | None,
        logical: str | None,
        depth: int,
    ) -> AvroType:
        name = node.get("name")
        if not isinstance(name, str) or not name:
            raise SchemaError(NAME, f"a {kind} needs a name: {node!r}")
        space = node.get("namespace", namespace)
        full = name if "." in name or not space else f"{space}.{name}"
        inner_space = full.rpartition(".")[0] or None
        result = AvroType("record" if kind == "error" else kind, logical=logical, name=full)
        if kind == "enum":
            symbols = node.get("symbols")
            if not isinstance(symbols, list) or not all(isinstance(s, str) for s in symbols):
                raise SchemaError(NAME, f"enum {full} needs a list of symbols")
            result.symbols = tuple(symbols)
        elif kind == "fixed":
            size = node.get("size")
            if not isinstance(size, int) or size < 0:
                raise SchemaError(NAME, f"fixed {full} needs a size")
            result.size = size
            if logical == "decimal":
                self._decimal(result, node)
        else:
            fields = node.get("fields")
            if not isinstance(fields, list):
                raise SchemaError(NAME, f"record {full} needs a list of fields")
            self.open.add(full)
            for item in fields:
                if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                    raise SchemaError(NAME, f"record {full} has a field without a name: {item!r}")
                field_type = self.resolve(item.get("type"), inner_space, depth + 1)
                result.fields.append((item["name"], field_type))
            self.open.discard(full)
        self.named[full] = result
        return result


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def spark_ddl(avro: AvroType) -> str:
    """The Spark SQL type (DDL) spark-avro gives this Avro type; every field nullable."""
    kind, logical = avro.kind, avro.logical
    if kind == "int":
        return "date" if logical == "date" else "int"
    if kind == "long":
        if logical in ("timestamp-millis", "timestamp-micros"):
            return "timestamp"
        if logical in ("local-timestamp-millis", "local-timestamp-micros"):
            return "timestamp_ntz"
        return "bigint"
    if kind in ("bytes", "fixed"):
        return f"decimal({avro.precision},{avro.scale})" if logical == "decimal" else "binary"
    if kind == "enum":
        return "string"
    if kind in _PRIMITIVE_DDL:
        return _PRIMITIVE_DDL[kind]
    if kind == "record":
        if not avro.fields:
            raise SchemaError(NAME, f"record {avro.name} has no fields; Spark has no empty struct")
        return "struct<" + ", ".join(f"{_quote(n)}: {spark_ddl(t)}" for n, t in avro.fields) + ">"
    if kind == "array":
        assert avro.items is not None
        return f"array<{spark_ddl(avro.items)}>"
    if kind == "map":
        assert avro.items is not None
        return f"map<string, {spark_ddl(avro.items)}>"
    return _union_ddl(avro)


def _union_ddl(avro: AvroType) -> str:
    rest = avro.non_null_branches
    if not rest:
        return "void"
    if len(rest) == 1:
        return spark_ddl(rest[0])
    kinds = {b.kind for b in rest}
    if len(rest) == 2 and kinds == {"int", "long"}:
        return "bigint"
    if len(rest) == 2 and kinds == {"float", "double"}:
        return "double"
    members = ", ".join(f"member{i}: {spark_ddl(b)}" for i, b in enumerate(rest))
    return f"struct<{members}>"
