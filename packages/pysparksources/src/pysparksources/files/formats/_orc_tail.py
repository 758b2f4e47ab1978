"""An ORC file's tail read, and the file given to pyarrow with its timestamps left as stored.

pyarrow reads with ORC's C++ library, whose reader zone is fixed at UTC: it returns a
TIMESTAMP's wall time in the writer's zone taken for UTC, loses which of the two instants a
wall time repeated when clocks go back was, and moves negative seconds with a fraction of 1 ms
or more one second earlier (on that wall time). It returns TIMESTAMP WITH LOCAL TIME ZONE
values, the same encoding, unconverted: so pyarrow is given the file with its footer declaring
the TIMESTAMP columns as those, which yields the stored seconds exactly. Only the tail
(postscript and footer) and each stripe's small footer are read here, with the little of
protobuf they need; the stripes stream through pyarrow from the file itself.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Iterator
from typing import Any, NamedTuple

import pyarrow as pa

from pysparksources.errors import MalformedRecordError
from pysparksources.files import NAME
from pysparksources.files.formats._orc_codecs import Compression, decompress, stored_chunks

__all__ = ["LIST", "MAP", "STRUCT", "TIMESTAMP", "OrcTail", "OrcType", "read_tail"]

TIMESTAMP, LIST, MAP, STRUCT = 9, 10, 11, 12  # ORC's Type.Kind values
_TIMESTAMP_INSTANT = 18  # TIMESTAMP WITH LOCAL TIME ZONE
_TAIL_GUESS = 16 * 1024
# What parsing a damaged tail or stripe footer raises besides MalformedRecordError.
_MALFORMED = (IndexError, zlib.error, pa.ArrowException)


class OrcType(NamedTuple):
    """One type of the footer's tree, by id (a child has a larger id than its parent)."""

    kind: int
    subtypes: list[int]
    names: list[str]  # a struct's field names


class OrcTail:
    """One ORC file's types and stripe footers, and :attr:`source`, the file for pyarrow."""

    def __init__(
        self,
        f: Any,
        compression: int,
        types: list[OrcType],
        stripe_footers: list[tuple[int, int]],
        source: io.RawIOBase,
    ) -> None:
        self._f, self._compression = f, compression
        self.types = types
        self._stripe_footers = stripe_footers  # where each stripe's footer is, and its size
        self.source = source

    def stripe_zone(self, index: int) -> str | None:
        """The writer's zone stripe ``index``'s footer names, if it names one."""
        where, length = self._stripe_footers[index]
        self._f.seek(where)
        zone = None
        try:
            footer = decompress(self._f.read(length), self._compression)
            for number, value, *_ in _fields(footer):
                if number == 3 and value:
                    zone = bytes(value).decode("utf-8")
        except _MALFORMED as error:
            raise MalformedRecordError(
                NAME, f"cannot read the footer of ORC stripe {index}: {error}"
            ) from None
        return zone


def read_tail(f: Any) -> OrcTail:
    """``f``'s tail; its :attr:`~OrcTail.source` declares TIMESTAMP columns as instants."""
    size = f.seek(0, io.SEEK_END)
    try:
        return _read_tail(f, size)
    except _MALFORMED as error:
        raise MalformedRecordError(NAME, f"cannot read the ORC file's tail: {error}") from None


def _read_tail(f: Any, size: int) -> OrcTail:
    tail_size = min(size, _TAIL_GUESS)
    f.seek(size - tail_size)
    tail = f.read(tail_size)
    ps_length = tail[-1]
    postscript = tail[-1 - ps_length : -1]
    footer_length, compression, block_size = 0, int(Compression.NONE), 256 * 1024
    for number, value, *_ in _fields(postscript):
        if number == 1:
            footer_length = value
        elif number == 2:
            compression = value
        elif number == 3:
            block_size = value
    footer_start = size - 1 - ps_length - footer_length
    if footer_length + ps_length + 1 > tail_size:
        f.seek(footer_start)
        raw_footer = f.read(footer_length)
    else:
        raw_footer = tail[tail_size - 1 - ps_length - footer_length : -1 - ps_length]
    footer = bytearray(decompress(bytes(raw_footer), compression))
    types: list[OrcType] = []
    stripe_footers: list[tuple[int, int]] = []
    for number, value, _, begin, _ in _fields(bytes(footer)):
        if number == 3:
            info = {n: v for n, v, *_ in _fields(value)}
            where = info.get(1, 0) + info.get(2, 0) + info.get(3, 0)
            stripe_footers.append((where, info.get(4, 0)))
        elif number == 4:
            kind, subtypes, names = 0, [], []
            for n, v, _, at, _ in _fields(value):
                if n == 1 and v == TIMESTAMP:
                    footer[begin + at] = _TIMESTAMP_INSTANT  # both are one-byte varints
                if n == 1:
                    kind = v
                elif n == 2:
                    subtypes += _packed(v)
                elif n == 3:
                    names.append(bytes(v).decode("utf-8"))
            types.append(OrcType(kind, subtypes, names))
    if not types:
        raise MalformedRecordError(NAME, "cannot read the ORC file's tail: it lists no types")
    new_footer = stored_chunks(bytes(footer), compression, block_size)
    new_postscript = _encode_varint(1 << 3) + _encode_varint(len(new_footer))
    new_postscript += b"".join(
        postscript[start:end] for number, _, start, _, end in _fields(postscript) if number != 1
    )
    source = _PatchedFile(
        f, footer_start, new_footer + new_postscript + bytes([len(new_postscript)])
    )
    return OrcTail(f, compression, types, stripe_footers, source)


class _PatchedFile(io.RawIOBase):
    """``f``'s first ``head`` bytes followed by ``tail`` (read-only, seekable)."""

    def __init__(self, f: Any, head: int, tail: bytes) -> None:
        super().__init__()
        self._f, self._head, self._tail, self._pos = f, head, tail, 0
        self._size = head + len(tail)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def read(self, size: int | None = -1) -> bytes:
        end = self._size if size is None or size < 0 else min(self._size, self._pos + size)
        parts = []
        while self._pos < end:
            if self._pos < self._head:
                self._f.seek(self._pos)
                part = self._f.read(min(end, self._head) - self._pos)
                if not part:
                    raise MalformedRecordError(NAME, "the ORC file ended early")
            else:
                part = self._tail[self._pos - self._head : end - self._head]
            parts.append(part)
            self._pos += len(part)
        return b"".join(parts)

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


# -- the little of protobuf the tail needs ----------------------------------------------------
def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _fields(data: bytes) -> Iterator[tuple[int, Any, int, int, int]]:
    """(field number, value, start of the field, start of its value, end) for each field."""
    pos = 0
    while pos < len(data):
        start = pos
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        begin = pos
        value: Any
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 2:
            length, begin = _varint(data, pos)
            pos = begin + length
            value = data[begin:pos]
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
            value = data[begin:pos]
        else:
            raise MalformedRecordError(NAME, f"unexpected protobuf wire type {wire}")
        if pos > len(data):
            raise MalformedRecordError(NAME, "truncated protobuf message")
        yield number, value, start, begin, pos


def _packed(data: bytes) -> list[int]:
    values, pos = [], 0
    while pos < len(data):
        value, pos = _varint(data, pos)
        values.append(value)
    return values


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
