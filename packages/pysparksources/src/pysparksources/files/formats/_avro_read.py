"""Reading Avro records into Arrow columns, and fitting them to the query's schema.

fastavro decodes the blocks of a split (``_avro_container``) with the schema stripped of its
logical types, so values arrive as stored: timestamps and dates as numbers (converted in
Arrow, also outside the years Python's datetime holds), decimals as bytes. Python touches a
value only where Arrow cannot take it as it comes (:class:`Decoding`): decimals, and unions
Spark reads as structs of members, whose branch is told by the value's Python type, or, for
named types, by the name fastavro returns with it.

A column is then fitted to the type the query asks for (:func:`fitting`), by spark-avro's
rules: the same type, a plain ``long`` as TIMESTAMP (milliseconds, Spark's legacy reading), a
decimal into one with as many integral digits, record fields by name (case-insensitively, or
by position with ``positionalFieldMatching``; a missing one is null, an extra one ignored),
a union's members by position, and Avro's own promotions (int to long, float to double: what
a reader schema would do, and what inference merges across files). Anything else is refused,
naming the column and both types, as Spark refuses it.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.types import StructField, StructType

from pysparksources._core.arrow import spark_arrow_schema
from pysparksources._core.avro_schema import AvroNode, UnionNames, spark_type, walk
from pysparksources._core.compat import spark_type_of
from pysparksources.errors import MalformedRecordError, SchemaError
from pysparksources.files import NAME

__all__ = ["Decoding", "Fit", "arrow_type", "fitting", "natural_type"]

Fit = Callable[[pa.Array], pa.Array]
Transform = Callable[[Any], Any]


def arrow_type(node: AvroNode, unions: UnionNames) -> pa.DataType:
    """The Arrow type of ``node``'s Spark type, as Spark hands columns to Python."""
    schema = spark_arrow_schema(StructType([StructField("c", spark_type(node, unions))]))
    return schema.field(0).type


natural_type = arrow_type


def _decode_type(node: AvroNode, unions: UnionNames) -> pa.DataType:
    """What Arrow builds from fastavro's values: the natural type, but milliseconds kept as
    stored (cast to microseconds afterwards, which also checks the range)."""
    natural = arrow_type(node, unions)
    return _millis_leaves(node, natural, unions)


def _millis_leaves(node: AvroNode, natural: pa.DataType, unions: UnionNames) -> pa.DataType:
    node = node.plain()
    if node.kind == "long" and node.logical in ("timestamp-millis", "local-timestamp-millis"):
        return pa.timestamp("ms", tz=natural.tz)
    if node.kind == "record":
        return pa.struct(
            [
                pa.field(f.name, _millis_leaves(n, f.type, unions))
                for (_, n), f in zip(node.fields, natural, strict=True)
            ]
        )
    if node.kind == "array" and node.items is not None:
        return pa.list_(_millis_leaves(node.items, natural.value_type, unions))
    if node.kind == "map" and node.items is not None:
        return pa.map_(pa.string(), _millis_leaves(node.items, natural.item_type, unions))
    if node.general_union():
        return pa.struct(
            [
                pa.field(f.name, _millis_leaves(b, f.type, unions))
                for b, f in zip(node.branches, natural, strict=True)
            ]
        )
    return natural


# -- Python values to Arrow -----------------------------------------------------------------
def needs_names(root: AvroNode) -> bool:
    """Whether fastavro must name the branch of every named value in a union: when a union
    Spark reads as members holds a named type. Its values look like another branch's in
    Python (a record like a map or another record, an enum like a string, a fixed like
    bytes), so only the name tells the member."""
    return any(
        node.general_union() and any(b.named for b in node.plain().branches) for node in walk(root)
    )


def check_unions(root: AvroNode, what: str) -> None:
    """Refuse a union whose members fastavro's values cannot tell apart: one holding both
    int and long, or both float and double, beside other types."""
    for node in walk(root):
        if node.general_union():
            kinds = {b.kind for b in node.plain().branches}
            for pair in (("int", "long"), ("float", "double")):
                if set(pair) <= kinds:
                    raise SchemaError(
                        NAME,
                        f"{what}: the union {node.describe()} holds both {pair[0]} and "
                        f"{pair[1]}, whose values pyfile cannot tell apart; give avroSchema "
                        f"with a union that has only {pair[1]} (Avro promotes {pair[0]} to "
                        "it)",
                    )


class Decoding:
    """Turns fastavro's records into Arrow columns of their natural types."""

    def __init__(
        self, columns: list[tuple[str, AvroNode]], unions: UnionNames, named_values: bool
    ) -> None:
        self.names = [name for name, _ in columns]
        self._decode = pa.struct(
            [pa.field(name, _decode_type(node, unions)) for name, node in columns]
        )
        self._natural = [arrow_type(node, unions) for _, node in columns]
        self._unions = unions
        self._named_values = named_values
        self._transforms = [
            (name, t) for name, node in columns if (t := self._transform(node)) is not None
        ]

    def columns(self, records: list[Any]) -> list[pa.Array]:
        """The wanted columns of ``records`` (fastavro's dicts, changed in place)."""
        for name, transform in self._transforms:
            for record in records:
                record[name] = transform(record.get(name))
        whole = pa.array(records, self._decode)
        arrays = whole.flatten()
        return [
            a if a.type == natural else a.cast(natural)
            for a, natural in zip(arrays, self._natural, strict=True)
        ]

    # -- what Python does to a value before Arrow takes it ------------------------------
    def _transform(self, node: AvroNode) -> Transform | None:
        if node.kind == "union":
            return self._union(node)
        if node.logical == "decimal":
            scale = node.scale
            return lambda value: None if value is None else _decimal(value, scale)
        if node.kind == "record":
            inner = [(n, t) for n, child in node.fields if (t := self._transform(child))]
            if not inner:
                return None

            def record(value: Any) -> Any:
                if value is not None:
                    for name, transform in inner:
                        value[name] = transform(value.get(name))
                return value

            return record
        if node.kind in ("array", "map") and node.items is not None:
            item = self._transform(node.items)
            if item is None:
                return None
            if node.kind == "array":
                return lambda value: None if value is None else [item(v) for v in value]
            return lambda value: None if value is None else {k: item(v) for k, v in value.items()}
        return None

    def _union(self, node: AvroNode) -> Transform | None:
        if not node.general_union():
            plain = node.plain()
            inner = self._transform(plain) if plain.kind != "union" else None
            unwrap = self._named_values and plain.named
            if not unwrap:
                return inner
            return lambda value: _unwrapped(value, inner)
        return _Members(node.plain(), self._unions, self._transform, self._named_values)


def _unwrapped(value: Any, inner: Transform | None) -> Any:
    if isinstance(value, tuple):
        value = value[1]
    return value if inner is None or value is None else inner(value)


def _decimal(value: bytes, scale: int) -> decimal.Decimal:
    """Avro's decimal bytes: a big-endian two's complement unscaled value."""
    unscaled = int.from_bytes(value, "big", signed=True)
    digits = tuple(int(d) for d in str(abs(unscaled)))
    return decimal.Decimal((1 if unscaled < 0 else 0, digits, -scale))


class _Members:
    """A union value as the struct of members Spark reads: the one its branch names set."""

    def __init__(
        self,
        node: AvroNode,
        unions: UnionNames,
        transform: Callable[[AvroNode], Transform | None],
        named_values: bool,
    ) -> None:
        names = unions.names(node.branches)
        self._by_name: dict[str, tuple[str, Transform | None]] = {}
        self._by_kind: dict[str, tuple[str, Transform | None]] = {}
        for member, branch in zip(names, node.branches, strict=True):
            entry = (member, transform(branch))
            if branch.named and branch.name:
                self._by_name[branch.name] = entry
                self._by_name[branch.name.rpartition(".")[2]] = entry
            if not (named_values and branch.named):  # those come with their name
                self._by_kind.setdefault(_python_kind(branch), entry)

    def __call__(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
            entry = self._by_name.get(value[0])
            value = value[1]
        else:
            entry = self._by_kind.get(_kind_of(value))
        if entry is None:
            raise MalformedRecordError(
                NAME, f"a union value of Python type {type(value).__name__} fits no member"
            )
        member, transform = entry
        return {member: value if transform is None or value is None else transform(value)}


def _python_kind(branch: AvroNode) -> str:
    """The Python type fastavro gives a branch's values, as :func:`_kind_of` names it."""
    return {
        "boolean": "bool",
        "int": "int",
        "long": "int",
        "float": "float",
        "double": "float",
        "string": "str",
        "enum": "str",
        "bytes": "bytes",
        "fixed": "bytes",
        "array": "list",
        "map": "dict",
        "record": "dict",
    }.get(branch.kind, branch.kind)


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    for kind in (int, float, str, bytes, list, dict):
        if isinstance(value, kind):
            return kind.__name__
    return type(value).__name__


# -- fitting a column to the query's type ---------------------------------------------------
@dataclass(frozen=True)
class _Context:
    unions: UnionNames
    positional: bool
    what: str  # the file, for messages


def fitting(
    node: AvroNode, wanted: pa.DataType, path: str, unions: UnionNames, positional: bool, what: str
) -> Fit | None:
    """How a column of ``node`` becomes ``wanted`` (None: it already is); SchemaError when
    spark-avro would not read it so."""
    return _fit(node, wanted, path, _Context(unions, positional, what))


def _fit(node: AvroNode, wanted: pa.DataType, path: str, ctx: _Context) -> Fit | None:
    natural = arrow_type(node, ctx.unions)
    if _same(natural, wanted):
        return None
    plain = node.plain()
    t = pa.types
    if plain.kind == "null" and node.kind == "union":
        return lambda a: pa.nulls(len(a), wanted)  # a union of null alone: null as any type
    if (plain.kind, plain.logical) == ("int", None) and t.is_int64(wanted):
        return lambda a: a.cast(wanted)  # Avro's promotion of int to long
    if plain.kind == "float" and t.is_float64(wanted):
        return lambda a: a.cast(wanted)
    if plain.kind == "long" and plain.logical is None and t.is_timestamp(wanted):
        # spark-avro reads a plain long as milliseconds since the epoch
        return lambda a: a.cast(pa.timestamp("ms", tz=wanted.tz)).cast(wanted)
    if plain.logical == "decimal" and t.is_decimal(wanted):
        if plain.precision - plain.scale > wanted.precision - wanted.scale:
            raise _incompatible(node, wanted, path, ctx, "its integral digits do not fit")
        return lambda a: a.cast(wanted)
    if plain.kind == "record" and t.is_struct(wanted):
        return _record_fit(plain, wanted, path, ctx)
    if plain.general_union() and t.is_struct(wanted):
        if wanted.num_fields != len(plain.branches):
            raise _incompatible(node, wanted, path, ctx, "the union has another number of members")
        children = [
            _fit(b, wanted.field(i).type, f"{path}.{wanted.field(i).name}", ctx)
            for i, b in enumerate(plain.branches)
        ]
        return _struct_of(list(range(len(children))), children, wanted)
    if plain.kind == "array" and plain.items is not None and t.is_list(wanted):
        item = _fit(plain.items, wanted.value_type, f"{path}.element", ctx)
        return None if item is None else _list_of(item, wanted)
    if plain.kind == "map" and plain.items is not None and t.is_map(wanted):
        if not t.is_string(wanted.key_type):
            raise _incompatible(node, wanted, path, ctx, "Avro map keys are strings")
        value = _fit(plain.items, wanted.item_type, f"{path}.value", ctx)
        return None if value is None else _map_of(value, wanted)
    raise _incompatible(node, wanted, path, ctx, None)


def _record_fit(node: AvroNode, wanted: pa.DataType, path: str, ctx: _Context) -> Fit:
    names = [n for n, _ in node.fields]
    sources: list[int | None] = []
    children: list[Fit | None] = []
    for position in range(wanted.num_fields):
        fld = wanted.field(position)
        index = match_field(names, fld.name, position, ctx.positional, f"{ctx.what}, {path}")
        sources.append(index)
        children.append(
            None
            if index is None
            else _fit(node.fields[index][1], fld.type, f"{path}.{fld.name}", ctx)
        )
    return _struct_of(sources, children, wanted)


def match_field(
    names: list[str], wanted: str, position: int, positional: bool, where: str
) -> int | None:
    """The index of the Avro field a Spark field reads: by position with
    ``positionalFieldMatching``, else by name, exact or case-insensitive (Spark's default)."""
    if positional:
        return position if position < len(names) else None
    if wanted in names:
        return names.index(wanted)
    found = [i for i, name in enumerate(names) if name.lower() == wanted.lower()]
    if len(found) > 1:
        raise SchemaError(
            NAME,
            f"{where}: {wanted!r} matches the Avro fields "
            + ", ".join(repr(names[i]) for i in found)
            + " (names compare case-insensitively, as in Spark)",
        )
    return found[0] if found else None


def _struct_of(sources: list[int | None], children: list[Fit | None], wanted: pa.DataType) -> Fit:
    def fit(array: pa.Array) -> pa.Array:
        array = _whole(array)
        parts = array.flatten()
        out = []
        for index, child, fld in zip(sources, children, wanted, strict=True):
            if index is None:
                out.append(pa.nulls(len(array), fld.type))
            else:
                part = parts[index]
                out.append(part if child is None else child(part))
        mask = array.is_null() if array.null_count else None
        return pa.StructArray.from_arrays(out, fields=list(wanted), mask=mask)

    return fit


def _list_of(item: Fit, wanted: pa.DataType) -> Fit:
    def fit(array: pa.Array) -> pa.Array:
        array = _whole(array)
        mask = array.is_null() if array.null_count else None
        return pa.ListArray.from_arrays(array.offsets, item(array.values), type=wanted, mask=mask)

    return fit


def _map_of(value: Fit, wanted: pa.DataType) -> Fit:
    def fit(array: pa.Array) -> pa.Array:
        array = _whole(array)
        mask = array.is_null() if array.null_count else None
        return pa.MapArray.from_arrays(
            array.offsets, array.keys, value(array.items), type=wanted, mask=mask
        )

    return fit


def _whole(array: pa.Array) -> pa.Array:
    return pa.concat_arrays([array]) if array.offset else array


def _same(left: pa.DataType, right: pa.DataType) -> bool:
    """Equal types, nested fields' nullability aside."""
    t = pa.types
    if t.is_struct(left) and t.is_struct(right):
        return left.num_fields == right.num_fields and all(
            a.name == b.name and _same(a.type, b.type) for a, b in zip(left, right, strict=True)
        )
    if t.is_list(left) and t.is_list(right):
        return _same(left.value_type, right.value_type)
    if t.is_map(left) and t.is_map(right):
        return _same(left.key_type, right.key_type) and _same(left.item_type, right.item_type)
    return bool(left == right)


def _incompatible(
    node: AvroNode, wanted: pa.DataType, path: str, ctx: _Context, why: str | None
) -> SchemaError:
    natural = spark_type(node, ctx.unions).simpleString()
    try:
        asked = spark_type_of(wanted).simpleString()
    except (TypeError, ValueError):
        asked = str(wanted)
    reason = f" ({why})" if why else ""
    return SchemaError(
        NAME,
        f"{ctx.what}: column {path!r} is Avro {node.describe()}, which reads as {natural}, "
        f"not as the schema's {asked}{reason}; spark-avro refuses it too: give {natural} in "
        "the schema",
    )
