"""``schemaHints``: column types that override what inference found.

A hint list is Spark DDL, ``id BIGINT, amount DECIMAL(12,2), tags MAP<STRING,STRING>``; a name
may be a path into nested values (``payload.ts TIMESTAMP``; ``element`` for an array's
elements, ``key``/``value`` for a map's), backquoted where it needs to be (```a b` INT``).
Parsed here, in Python: the driver-side worker that infers schemas has no JVM to parse DDL.
A hinted column the data lacks is added (at the end, or at the end of its struct).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from pysparksources.errors import SchemaError
from pysparksources.files import NAME

__all__ = ["Hint", "apply_hints", "parse_hints", "parse_type"]

_SIMPLE: dict[str, DataType] = {
    "boolean": BooleanType(),
    "tinyint": ByteType(),
    "byte": ByteType(),
    "smallint": ShortType(),
    "short": ShortType(),
    "int": IntegerType(),
    "integer": IntegerType(),
    "bigint": LongType(),
    "long": LongType(),
    "float": FloatType(),
    "real": FloatType(),
    "double": DoubleType(),
    "string": StringType(),
    "binary": BinaryType(),
    "date": DateType(),
    "timestamp": TimestampType(),
    "timestamp_ltz": TimestampType(),
    "timestamp_ntz": TimestampNTZType(),
}
_TOKEN = re.compile(r"\s*(`(?:[^`]|``)*`|[A-Za-z_][A-Za-z0-9_]*|\d+|[<>(),:.])")


@dataclass(frozen=True)
class Hint:
    """One hint: the column's path (top-level name first) and its type."""

    path: tuple[str, ...]
    data_type: DataType

    @property
    def name(self) -> str:
        return ".".join(self.path)


class _Tokens:
    def __init__(self, text: str, what: str) -> None:
        self.what = what
        self.text = text
        self.items: list[str] = []
        position = 0
        while position < len(text):
            if text[position:].strip() == "":
                break
            match = _TOKEN.match(text, position)
            if match is None:
                raise self.fail(f"unexpected {text[position:].strip()[:20]!r}")
            self.items.append(match.group(1))
            position = match.end()
        self.at = 0

    def fail(self, problem: str) -> SchemaError:
        raise SchemaError(NAME, f"{self.what} {self.text!r}: {problem}")

    def peek(self) -> str | None:
        return self.items[self.at] if self.at < len(self.items) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None:
            self.fail(f"ends early{f', expected {expected!r}' if expected else ''}")
        assert token is not None
        if expected is not None and token.lower() != expected:
            self.fail(f"expected {expected!r}, found {token!r}")
        self.at += 1
        return token

    def name(self) -> str:
        token = self.take()
        if token.startswith("`"):
            return token[1:-1].replace("``", "`")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", token):
            self.fail(f"expected a column name, found {token!r}")
        return token


def _type(tokens: _Tokens) -> DataType:
    word = tokens.take().lower()
    if word in _SIMPLE:
        return _SIMPLE[word]
    if word in ("decimal", "dec", "numeric"):
        if tokens.peek() != "(":
            return DecimalType(10, 0)
        tokens.take("(")
        precision = int(tokens.take())
        scale = 0
        if tokens.peek() == ",":
            tokens.take(",")
            scale = int(tokens.take())
        tokens.take(")")
        if not 1 <= precision <= 38 or not 0 <= scale <= precision:
            tokens.fail(f"DECIMAL({precision},{scale}) is not a decimal Spark has")
        return DecimalType(precision, scale)
    if word in ("varchar", "char"):
        tokens.take("(")
        tokens.take()
        tokens.take(")")
        return StringType()
    if word == "array":
        tokens.take("<")
        element = _type(tokens)
        tokens.take(">")
        return ArrayType(element)
    if word == "map":
        tokens.take("<")
        key = _type(tokens)
        tokens.take(",")
        value = _type(tokens)
        tokens.take(">")
        return MapType(key, value)
    if word == "struct":
        tokens.take("<")
        fields: list[StructField] = []
        while tokens.peek() != ">":
            if fields:
                tokens.take(",")
            name = tokens.name()
            if tokens.peek() == ":":
                tokens.take(":")
            fields.append(StructField(name, _type(tokens)))
        tokens.take(">")
        return StructType(fields)
    tokens.fail(f"{word!r} is not a Spark SQL type")
    raise AssertionError


def parse_type(text: str, what: str = "type") -> DataType:
    """One Spark SQL type written as DDL (``DECIMAL(12,2)``, ``MAP<STRING,INT>``...)."""
    tokens = _Tokens(text, what)
    data_type = _type(tokens)
    if tokens.peek() is not None:
        tokens.fail(f"unexpected {tokens.peek()!r} after the type")
    return data_type


def parse_hints(text: str) -> tuple[Hint, ...]:
    """The hints of a ``schemaHints`` value; :class:`SchemaError` naming what is wrong."""
    tokens = _Tokens(text, "schemaHints")
    hints: list[Hint] = []
    while tokens.peek() is not None:
        if hints:
            tokens.take(",")
        path = [tokens.name()]
        while tokens.peek() == ".":
            tokens.take(".")
            path.append(tokens.name())
        hints.append(Hint(tuple(path), _type(tokens)))
    if not hints:
        tokens.fail("names no column")
    return tuple(hints)


def apply_hints(schema: StructType, hints: tuple[Hint, ...]) -> StructType:
    """``schema`` with each hinted column's type replaced (or the column added)."""
    for hint in hints:
        replaced = _replace(schema, hint.path, hint)
        assert isinstance(replaced, StructType)
        schema = replaced
    return schema


def _replace(data_type: DataType, path: tuple[str, ...], hint: Hint) -> DataType:
    if not path:
        return hint.data_type
    head, rest = path[0], path[1:]
    if isinstance(data_type, StructType):
        fields = list(data_type.fields)
        for i, f in enumerate(fields):
            if f.name.lower() == head.lower():
                fields[i] = StructField(f.name, _replace(f.dataType, rest, hint), f.nullable)
                return StructType(fields)
        if rest:
            raise SchemaError(
                NAME, f"schemaHints: {hint.name}: there is no column {head!r} to look into"
            )
        return StructType([*fields, StructField(head, hint.data_type)])
    if isinstance(data_type, ArrayType) and head.lower() == "element":
        return ArrayType(_replace(data_type.elementType, rest, hint), data_type.containsNull)
    if isinstance(data_type, MapType) and head.lower() in ("key", "value"):
        key, value = data_type.keyType, data_type.valueType
        if head.lower() == "key":
            key = _replace(key, rest, hint)
        else:
            value = _replace(value, rest, hint)
        return MapType(key, value, data_type.valueContainsNull)
    raise SchemaError(
        NAME,
        f"schemaHints: {hint.name}: {head!r} is not inside a {data_type.simpleString()} "
        "(a struct has fields, an array 'element', a map 'key' and 'value')",
    )
