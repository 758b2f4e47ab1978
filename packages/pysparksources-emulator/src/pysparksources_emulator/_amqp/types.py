"""AMQP 1.0 type system: encode Python values to wire bytes and decode them back.

Plain Python values map to the widest natural AMQP type (``int`` -> long, ``float`` -> double,
``str`` -> string, ``bytes`` -> binary). The small wrapper classes below pick another type when
the wire needs it (a ``uint`` handle, a ``symbol`` key, a ``timestamp``); decoding returns the
same wrappers so a value survives a decode/encode round trip with its type intact.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Array",
    "Byte",
    "DecodeError",
    "Described",
    "Encoded",
    "Float",
    "Int",
    "Short",
    "Symbol",
    "Timestamp",
    "UByte",
    "UInt",
    "ULong",
    "UShort",
    "decode",
    "decode_all",
    "encode",
    "skip",
]


class DecodeError(ValueError):
    """The bytes are not valid AMQP: the peer sent garbage or a frame was cut short."""


def _char(point: int) -> str:
    """An AMQP char is one UTF-32BE code unit: a Unicode scalar value, never a surrogate."""
    if point > 0x10FFFF or 0xD800 <= point <= 0xDFFF:
        raise DecodeError(f"char 0x{point:X} is not a Unicode scalar value")
    return chr(point)


class UByte(int):
    """AMQP ubyte."""


class UShort(int):
    """AMQP ushort."""


class UInt(int):
    """AMQP uint (handles, delivery ids, windows)."""


class ULong(int):
    """AMQP ulong (descriptors)."""


class Byte(int):
    """AMQP byte."""


class Short(int):
    """AMQP short."""


class Int(int):
    """AMQP int (status codes)."""


class Timestamp(int):
    """AMQP timestamp: milliseconds since the Unix epoch."""


class Float(float):
    """AMQP float (32-bit)."""


class Symbol(str):
    """AMQP symbol: an ASCII name such as a condition or an annotation key."""


class Encoded(bytes):
    """Bytes that are already an AMQP encoding; spliced into the output verbatim."""


@dataclass(frozen=True)
class Described:
    """A described value: ``descriptor`` (usually a ULong code or a Symbol) and its value."""

    descriptor: Any
    value: Any


@dataclass(frozen=True)
class Array:
    """An AMQP array: every element shares one ``constructor`` byte (e.g. 0xB3 for symbols)."""

    constructor: int
    items: tuple[Any, ...]


_pack_b = struct.Struct(">b").pack
_pack_B = struct.Struct(">B").pack
_pack_h = struct.Struct(">h").pack
_pack_H = struct.Struct(">H").pack
_pack_i = struct.Struct(">i").pack
_pack_I = struct.Struct(">I").pack
_pack_q = struct.Struct(">q").pack
_pack_Q = struct.Struct(">Q").pack
_pack_f = struct.Struct(">f").pack
_pack_d = struct.Struct(">d").pack
_unpack_b = struct.Struct(">b").unpack_from
_unpack_h = struct.Struct(">h").unpack_from
_unpack_H = struct.Struct(">H").unpack_from
_unpack_i = struct.Struct(">i").unpack_from
_unpack_I = struct.Struct(">I").unpack_from
_unpack_q = struct.Struct(">q").unpack_from
_unpack_Q = struct.Struct(">Q").unpack_from
_unpack_f = struct.Struct(">f").unpack_from
_unpack_d = struct.Struct(">d").unpack_from


def _encode_int(value: int) -> bytes:
    if isinstance(value, UInt):
        if value == 0:
            return b"\x43"
        if value < 256:
            return b"\x52" + _pack_B(value)
        return b"\x70" + _pack_I(value)
    if isinstance(value, ULong):
        if value == 0:
            return b"\x44"
        if value < 256:
            return b"\x53" + _pack_B(value)
        return b"\x80" + _pack_Q(value)
    if isinstance(value, Timestamp):
        return b"\x83" + _pack_q(value)
    if isinstance(value, Int):
        if -128 <= value <= 127:
            return b"\x54" + _pack_b(value)
        return b"\x71" + _pack_i(value)
    if isinstance(value, UByte):
        return b"\x50" + _pack_B(value)
    if isinstance(value, UShort):
        return b"\x60" + _pack_H(value)
    if isinstance(value, Byte):
        return b"\x51" + _pack_b(value)
    if isinstance(value, Short):
        return b"\x61" + _pack_h(value)
    if -128 <= value <= 127:
        return b"\x55" + _pack_b(value)
    return b"\x81" + _pack_q(value)


def _variable(small: int, large: int, payload: bytes) -> bytes:
    if len(payload) < 256:
        return bytes((small, len(payload))) + payload
    return bytes((large,)) + _pack_I(len(payload)) + payload


def _compound(small: int, large: int, empty: bytes | None, count: int, body: bytes) -> bytes:
    if count == 0 and empty is not None:
        return empty
    if len(body) + 1 < 256 and count < 256:
        return bytes((small, len(body) + 1, count)) + body
    return bytes((large,)) + _pack_I(len(body) + 4) + _pack_I(count) + body


def encode(value: Any) -> bytes:
    """Encode one Python value (see the module docstring for the type mapping)."""
    if value is None:
        return b"\x40"
    if value is True:
        return b"\x41"
    if value is False:
        return b"\x42"
    if isinstance(value, Encoded):
        return bytes(value)
    if isinstance(value, int):
        return _encode_int(value)
    if isinstance(value, Symbol):
        return _variable(0xA3, 0xB3, value.encode("ascii"))
    if isinstance(value, str):
        return _variable(0xA1, 0xB1, value.encode("utf-8"))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _variable(0xA0, 0xB0, bytes(value))
    if isinstance(value, Float):
        return b"\x72" + _pack_f(value)
    if isinstance(value, float):
        return b"\x82" + _pack_d(value)
    if isinstance(value, Described):
        return b"\x00" + encode(value.descriptor) + encode(value.value)
    if isinstance(value, (list, tuple)):
        return _compound(0xC0, 0xD0, b"\x45", len(value), b"".join(encode(v) for v in value))
    if isinstance(value, dict):
        body = b"".join(encode(k) + encode(v) for k, v in value.items())
        return _compound(0xC1, 0xD1, None, 2 * len(value), body)
    if isinstance(value, uuid.UUID):
        return b"\x98" + value.bytes
    if isinstance(value, Array):
        return _encode_array(value)
    raise TypeError(f"cannot encode {type(value).__name__} as AMQP")


_ARRAY_ELEMENT: dict[int, Callable[[Any], bytes]] = {
    0xB3: lambda v: _pack_I(len(v.encode("ascii"))) + v.encode("ascii"),
    0xB1: lambda v: _pack_I(len(v.encode("utf-8"))) + v.encode("utf-8"),
    0xB0: lambda v: _pack_I(len(v)) + bytes(v),
    0x81: _pack_q,
    0x80: _pack_Q,
    0x71: _pack_i,
    0x70: _pack_I,
    0x83: _pack_q,
    0x50: _pack_B,
    0x98: lambda v: v.bytes,
}


def _encode_array(array: Array) -> bytes:
    element = _ARRAY_ELEMENT.get(array.constructor)
    if element is None:
        raise TypeError(f"arrays of constructor 0x{array.constructor:02x} are not supported")
    body = bytes((array.constructor,)) + b"".join(element(item) for item in array.items)
    count = len(array.items)
    if len(body) + 1 < 256 and count < 256:
        return bytes((0xE0, len(body) + 1, count)) + body
    return b"\xf0" + _pack_I(len(body) + 4) + _pack_I(count) + body


# Fixed widths of the constructors without a size prefix (used by skip and arrays).
_FIXED: dict[int, int] = {
    0x40: 0, 0x41: 0, 0x42: 0, 0x43: 0, 0x44: 0, 0x45: 0,
    0x50: 1, 0x51: 1, 0x52: 1, 0x53: 1, 0x54: 1, 0x55: 1, 0x56: 1,
    0x60: 2, 0x61: 2,
    0x70: 4, 0x71: 4, 0x72: 4, 0x73: 4, 0x74: 4,
    0x80: 8, 0x81: 8, 0x82: 8, 0x83: 8, 0x84: 8,
    0x94: 16, 0x98: 16,
}  # fmt: skip


# Peers nest values (described, lists, maps) a few levels deep; a frame of nested constructors
# must end as a decode error, not as a RecursionError.
MAX_DEPTH = 64


def skip(buf: bytes | memoryview, pos: int, _depth: int = 0) -> int:
    """Return the position just past the value starting at ``pos`` without decoding it."""
    if _depth > MAX_DEPTH:
        raise DecodeError(f"AMQP value nested deeper than {MAX_DEPTH} levels")
    try:
        code = buf[pos]
        if code == 0x00:
            return skip(buf, skip(buf, pos + 1, _depth + 1), _depth + 1)
        width = _FIXED.get(code)
        if width is not None:
            end = pos + 1 + width
        elif code in (0xA0, 0xA1, 0xA3, 0xC0, 0xC1, 0xE0):
            end = pos + 2 + buf[pos + 1]
        elif code in (0xB0, 0xB1, 0xB3, 0xD0, 0xD1, 0xF0):
            end = pos + 5 + _unpack_I(buf, pos + 1)[0]
        else:
            raise DecodeError(f"unknown AMQP constructor 0x{code:02x} at {pos}")
    except (IndexError, struct.error) as exc:
        raise DecodeError("truncated AMQP value") from exc
    if end > len(buf):
        raise DecodeError("truncated AMQP value")
    return end


def _decode_fixed(code: int, buf: bytes | memoryview, pos: int) -> Any:
    if code == 0x40:
        return None
    if code == 0x41:
        return True
    if code == 0x42:
        return False
    if code == 0x43:
        return UInt(0)
    if code == 0x44:
        return ULong(0)
    if code == 0x45:
        return []
    if code == 0x50:
        return UByte(buf[pos])
    if code == 0x51:
        return Byte(_unpack_b(buf, pos)[0])
    if code == 0x52:
        return UInt(buf[pos])
    if code == 0x53:
        return ULong(buf[pos])
    if code == 0x54:
        return Int(_unpack_b(buf, pos)[0])
    if code == 0x55:
        return _unpack_b(buf, pos)[0]
    if code == 0x56:
        return buf[pos] != 0
    if code == 0x60:
        return UShort(_unpack_H(buf, pos)[0])
    if code == 0x61:
        return Short(_unpack_h(buf, pos)[0])
    if code == 0x70:
        return UInt(_unpack_I(buf, pos)[0])
    if code == 0x71:
        return Int(_unpack_i(buf, pos)[0])
    if code == 0x72:
        return Float(_unpack_f(buf, pos)[0])
    if code == 0x73:
        return _char(_unpack_I(buf, pos)[0])
    if code == 0x80:
        return ULong(_unpack_Q(buf, pos)[0])
    if code == 0x81:
        return _unpack_q(buf, pos)[0]
    if code == 0x82:
        return _unpack_d(buf, pos)[0]
    if code == 0x83:
        return Timestamp(_unpack_q(buf, pos)[0])
    if code == 0x98:
        return uuid.UUID(bytes=bytes(buf[pos : pos + 16]))
    # decimal32/64/128 have no natural Python value here; keep the raw bytes.
    return bytes(buf[pos : pos + _FIXED[code]])


def _decode_body(code: int, buf: bytes | memoryview, pos: int, end: int) -> Any:
    """Decode a value whose constructor is ``code`` and whose bytes are ``buf[pos:end]``."""
    if code in (0xA0, 0xB0):
        return bytes(buf[pos:end])
    try:
        if code in (0xA1, 0xB1):
            return bytes(buf[pos:end]).decode("utf-8")
        if code in (0xA3, 0xB3):
            return Symbol(bytes(buf[pos:end]).decode("ascii"))
    except UnicodeDecodeError as exc:
        raise DecodeError(f"invalid text in an AMQP string or symbol: {exc.reason}") from None
    raise DecodeError(f"unexpected constructor 0x{code:02x}")


def _decode_items(buf: bytes | memoryview, pos: int, count: int, end: int, depth: int) -> list[Any]:
    items: list[Any] = []
    for _ in range(count):
        value, pos = decode(buf, pos, depth + 1)
        items.append(value)
    if pos != end:
        raise DecodeError("compound size does not match its items")
    return items


def _decode_array(buf: bytes | memoryview, pos: int, count: int, end: int, depth: int) -> Array:
    start = pos
    descriptor = None
    if buf[pos] == 0x00:
        descriptor, pos = decode(buf, pos + 1, depth + 1)
    code = buf[pos]
    pos += 1
    items: list[Any] = []
    width = _FIXED.get(code)
    for _ in range(count):
        if width is not None:
            items.append(_decode_fixed(code, buf, pos))
            pos += width
        elif code in (0xA0, 0xA1, 0xA3):
            size = buf[pos]
            items.append(_decode_body(code, buf, pos + 1, pos + 1 + size))
            pos += 1 + size
        elif code in (0xB0, 0xB1, 0xB3):
            size = _unpack_I(buf, pos)[0]
            items.append(_decode_body(code, buf, pos + 4, pos + 4 + size))
            pos += 4 + size
        else:
            raise DecodeError(f"unsupported array element 0x{code:02x}")
    if pos != end:
        raise DecodeError(f"array size does not match its items (start {start})")
    if descriptor is not None:
        return Array(code, tuple(Described(descriptor, item) for item in items))
    return Array(code, tuple(items))


def decode(buf: bytes | memoryview, pos: int = 0, _depth: int = 0) -> tuple[Any, int]:
    """Decode the value at ``pos``; return it and the position just past it."""
    if _depth > MAX_DEPTH:
        raise DecodeError(f"AMQP value nested deeper than {MAX_DEPTH} levels")
    try:
        code = buf[pos]
        pos += 1
        if code == 0x00:
            descriptor, pos = decode(buf, pos, _depth + 1)
            value, pos = decode(buf, pos, _depth + 1)
            return Described(descriptor, value), pos
        width = _FIXED.get(code)
        if width is not None:
            if pos + width > len(buf):
                raise DecodeError("truncated AMQP value")
            return _decode_fixed(code, buf, pos), pos + width
        if code in (0xA0, 0xA1, 0xA3):
            end = pos + 1 + buf[pos]
            if end > len(buf):
                raise DecodeError("truncated AMQP value")
            return _decode_body(code, buf, pos + 1, end), end
        if code in (0xB0, 0xB1, 0xB3):
            end = pos + 4 + _unpack_I(buf, pos)[0]
            if end > len(buf):
                raise DecodeError("truncated AMQP value")
            return _decode_body(code, buf, pos + 4, end), end
        if code in (0xC0, 0xC1, 0xE0):
            end = pos + 1 + buf[pos]
            count = buf[pos + 1]
            pos += 2
        elif code in (0xD0, 0xD1, 0xF0):
            end = pos + 4 + _unpack_I(buf, pos)[0]
            count = _unpack_I(buf, pos + 4)[0]
            pos += 8
        else:
            raise DecodeError(f"unknown AMQP constructor 0x{code:02x} at {pos - 1}")
        if end > len(buf):
            raise DecodeError("truncated AMQP value")
        if code in (0xE0, 0xF0):
            return _decode_array(buf, pos, count, end, _depth), end
        items = _decode_items(buf, pos, count, end, _depth)
        if code in (0xC0, 0xD0):
            return items, end
        if count % 2:
            raise DecodeError("map with an odd number of items")
        it = iter(items)
        return dict(zip(it, it, strict=True)), end
    except (IndexError, struct.error) as exc:
        raise DecodeError("truncated AMQP value") from exc


def decode_all(buf: bytes | memoryview) -> list[Any]:
    """Decode every value in ``buf`` back to back."""
    values: list[Any] = []
    pos = 0
    while pos < len(buf):
        value, pos = decode(buf, pos)
        values.append(value)
    return values
