"""How much one Avro body may decode into, checked before fastavro builds anything.

fastavro reads an array or map item by item, appending as it goes, and raises EOFError when
the body runs out; it never allocates a declared count or length up front (fastavro 1.x,
checked by tests/eventhubs/avro/test_ehavro_bounds.py). So an item that takes at least one
byte cannot outgrow its body. An item that takes no bytes can: ``null``, a ``fixed`` of size 0
or a record of such fields costs nothing to read, and 11 bytes can declare 2^62 of them.

The rule: a body decodes into at most :data:`VALUES_PER_BYTE` values per byte plus
:data:`VALUES_PER_BODY`, beyond the values of its schema's own fields. For a schema in which
every array or map item takes at least one byte per :data:`VALUES_PER_BYTE` values it holds
(``BodyBounds.needed`` is False: nearly every real schema), fastavro cannot break the rule and
bodies go to it unchecked. For the others, :meth:`BodyBounds.check` walks the body first,
checking every count and length against the bytes that remain and counting values, and
refuses a body that breaks the rule as a malformed record.
"""

from __future__ import annotations

from pysparksources._core.avro_schema import AvroNode, walk
from pysparksources.errors import MalformedRecordError, SchemaError
from pysparksources.eventhubs import NAME

__all__ = ["VALUES_PER_BODY", "VALUES_PER_BYTE", "BodyBounds"]

VALUES_PER_BYTE = 16
VALUES_PER_BODY = 4096  # so that a short body may still hold a few thousand nulls
_FIXED_BYTES = {"null": 0, "boolean": 1, "float": 4, "double": 8}


class _Measures:
    """Per type (by identity: named types are shared): the fewest bytes a value takes and the
    values it decodes into, its arrays' and maps' items not counted."""

    def __init__(self) -> None:
        self._least: dict[int, int] = {}
        self._values: dict[int, int] = {}

    def least(self, avro: AvroNode) -> int:
        known = self._least.get(id(avro))
        if known is None:
            known = self._least[id(avro)] = self._least_bytes(avro)
        return known

    def _least_bytes(self, avro: AvroNode) -> int:
        kind = avro.kind
        if kind in _FIXED_BYTES:
            return _FIXED_BYTES[kind]
        if kind == "fixed":
            return avro.size
        if kind == "record":
            return sum(self.least(t) for _, t in avro.fields)
        if kind == "union":
            return 1 + min((self.least(b) for b in avro.branches), default=0)
        return 1  # a varint: int, long, enum, a length (bytes, string) or a block count

    def values(self, avro: AvroNode) -> int:
        known = self._values.get(id(avro))
        if known is None:
            if avro.kind == "record":
                known = 1 + sum(self.values(t) for _, t in avro.fields)
            elif avro.kind == "union":
                known = 1 + max((self.values(b) for b in avro.branches), default=0)
            else:
                known = 1
            self._values[id(avro)] = known
        return known

    def item(self, collection: AvroNode) -> tuple[int, int]:
        """Least bytes and values of one item of an array, or one entry of a map (its key
        takes at least one byte and is one value)."""
        items = _items(collection)
        least, values = self.least(items), self.values(items)
        return (least + 1, values + 1) if collection.kind == "map" else (least, values)


def _items(collection: AvroNode) -> AvroNode:
    if collection.items is None:  # the resolver gives every array and map its items
        raise SchemaError(NAME, f"a {collection.kind} without items")
    return collection.items


def _collections(avro: AvroNode) -> list[AvroNode]:
    return [node for node in walk(avro) if node.kind in ("array", "map")]


class BodyBounds:
    """The rule above for one writer's schema: :attr:`needed` says whether its bodies must be
    walked, :meth:`check` walks one."""

    def __init__(self, avro: AvroNode) -> None:
        self.avro = avro
        self._measures = _Measures()
        self.needed = any(
            values > VALUES_PER_BYTE * least
            for least, values in map(self._measures.item, _collections(avro))
        )
        self._own = self._measures.values(avro)

    def check(self, body: bytes) -> None:
        """MalformedRecordError unless ``body`` holds a value of the schema whose counts and
        lengths fit the body and which decodes into at most
        ``VALUES_PER_BYTE * len(body) + VALUES_PER_BODY`` values beyond the schema's own."""
        budget = VALUES_PER_BYTE * len(body) + VALUES_PER_BODY + self._own
        _Walk(body, self._measures, budget).value(self.avro)


class _Walk:
    def __init__(self, body: bytes, measures: _Measures, budget: int) -> None:
        self.body, self.pos, self.measures = body, 0, measures
        self.limit = self.left = budget

    def _bad(self, what: str) -> MalformedRecordError:
        return MalformedRecordError(NAME, f"at byte {self.pos} of {len(self.body)}: {what}")

    def _spend(self, values: int) -> None:
        self.left -= values
        if self.left < 0:
            raise self._bad(
                f"the body decodes into more than {self.limit} values "
                f"({VALUES_PER_BYTE} per byte of the body plus {VALUES_PER_BODY}, beyond the "
                "schema's own fields)"
            )

    def _skip(self, count: int) -> None:
        if count < 0 or count > len(self.body) - self.pos:
            raise self._bad(f"{count} bytes declared, {len(self.body) - self.pos} left")
        self.pos += count

    def _long(self) -> int:
        result = shift = 0
        while True:
            if self.pos >= len(self.body):
                raise self._bad("the body ends inside a number")
            byte = self.body[self.pos]
            self.pos += 1
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return (result >> 1) ^ -(result & 1)
            shift += 7
            if shift > 63:
                raise self._bad("a number longer than 10 bytes")

    def value(self, avro: AvroNode) -> None:
        kind = avro.kind
        self._spend(1)
        if kind in _FIXED_BYTES:
            self._skip(_FIXED_BYTES[kind])
        elif kind == "fixed":
            self._skip(avro.size)
        elif kind in ("bytes", "string"):
            self._skip(self._long())
        elif kind in ("int", "long"):
            self._long()
        elif kind == "enum":
            self._index(len(avro.symbols), "enum symbol")
        elif kind == "union":
            self.value(avro.branches[self._index(len(avro.branches), "union branch")])
        elif kind == "record":
            for _, field in avro.fields:
                self.value(field)
        else:
            self._blocks(avro)

    def _index(self, size: int, what: str) -> int:
        index = self._long()
        if not 0 <= index < size:
            raise self._bad(f"{what} {index} of {size}")
        return index

    def _blocks(self, collection: AvroNode) -> None:
        items = _items(collection)
        least, values = self.measures.item(collection)
        while True:
            count = self._long()
            if count == 0:
                return
            if count < 0:  # a block that gives its size in bytes too
                count = -count
                size = self._long()
                if size < 0 or size > len(self.body) - self.pos:
                    raise self._bad(f"a block of {size} bytes, {len(self.body) - self.pos} left")
            if count * least > len(self.body) - self.pos:
                raise self._bad(
                    f"{count} items of at least {least} bytes declared, "
                    f"{len(self.body) - self.pos} bytes left"
                )
            if least == 0:  # items without bytes are all alike: count them, read none
                self._spend(count * values)
                continue
            for _ in range(count):
                if collection.kind == "map":
                    self._spend(1)
                    self._skip(self._long())
                self.value(items)
