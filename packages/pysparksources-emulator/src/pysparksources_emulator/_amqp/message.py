"""AMQP message sections: split a payload without decoding bodies, and build small replies.

The broker never decodes event bodies or application properties: it keeps their bytes and
only rewrites the message-annotations section, so an event reaches consumers byte-for-byte as
the producer encoded it.
"""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass, field
from typing import Any

from pysparksources_emulator._amqp.types import (
    DecodeError,
    Described,
    ULong,
    decode,
    encode,
    skip,
)

__all__ = [
    "BATCH_FORMAT",
    "IncomingMessage",
    "build_message",
    "encode_annotations",
    "parse_message",
]

BATCH_FORMAT = 0x80013700

HEADER = 0x70
DELIVERY_ANNOTATIONS = 0x71
MESSAGE_ANNOTATIONS = 0x72
PROPERTIES = 0x73
APPLICATION_PROPERTIES = 0x74
DATA = 0x75
AMQP_SEQUENCE = 0x76
AMQP_VALUE = 0x77
FOOTER = 0x78

_unpack_I = struct.Struct(">I").unpack_from
_pack_I = struct.Struct(">I").pack


@dataclass
class IncomingMessage:
    """One message as the broker needs it.

    Attributes
    ----------
    header:
        The raw header section (or ``b""``).
    annotations:
        ``(key, raw_key_and_value_bytes)`` for every message annotation.
    rest:
        Raw bytes from the properties section to the end (body included).
    """

    header: bytes = b""
    annotations: list[tuple[Any, bytes]] = field(default_factory=list)
    rest: bytes = b""
    data_sections: list[memoryview] = field(default_factory=list)
    properties: list[Any] | None = None
    application_properties: dict[Any, Any] | None = None
    value: Any = None

    def annotation(self, key: str) -> Any:
        for name, raw in self.annotations:
            if name == key:
                return decode(raw, skip(raw, 0))[0]
        return None

    @property
    def message_id(self) -> Any:
        return self.properties[0] if self.properties else None


def _section_code(buf: memoryview, pos: int) -> tuple[int, int]:
    """Read a section descriptor at ``pos``; return its code and where its value starts."""
    if buf[pos] != 0x00:
        raise DecodeError("message section without a descriptor")
    descriptor, value_pos = decode(buf, pos + 1)
    if isinstance(descriptor, int):
        return int(descriptor), value_pos
    known = {
        "amqp:header:list": HEADER,
        "amqp:delivery-annotations:map": DELIVERY_ANNOTATIONS,
        "amqp:message-annotations:map": MESSAGE_ANNOTATIONS,
        "amqp:properties:list": PROPERTIES,
        "amqp:application-properties:map": APPLICATION_PROPERTIES,
        "amqp:data:binary": DATA,
        "amqp:amqp-sequence:list": AMQP_SEQUENCE,
        "amqp:amqp-value:*": AMQP_VALUE,
        "amqp:footer:map": FOOTER,
    }
    if descriptor not in known:
        raise DecodeError(f"unknown message section {descriptor!r}")
    return known[descriptor], value_pos


def _map_pairs(buf: memoryview, pos: int) -> list[tuple[Any, bytes]]:
    code = buf[pos]
    if code in (0xC1,):
        count, pos = buf[pos + 2], pos + 3
    elif code == 0xD1:
        count, pos = _unpack_I(buf, pos + 5)[0], pos + 9
    elif code == 0x40:
        return []
    else:
        raise DecodeError("annotations are not a map")
    pairs: list[tuple[Any, bytes]] = []
    for _ in range(count // 2):
        key, value_pos = decode(buf, pos)
        end = skip(buf, value_pos)
        pairs.append((key, bytes(buf[pos:end])))
        pos = end
    return pairs


def parse_message(payload: bytes | memoryview, *, full: bool = False) -> IncomingMessage:
    """Split ``payload`` into sections.

    ``full`` also decodes properties, application properties and an amqp-value body (used for
    the small CBS and management requests, never for events).
    """
    buf = memoryview(payload)
    msg = IncomingMessage()
    pos = 0
    rest_start = -1
    while pos < len(buf):
        start = pos
        code, value_pos = _section_code(buf, pos)
        end = skip(buf, value_pos)
        if code == HEADER:
            msg.header = bytes(buf[start:end])
        elif code == MESSAGE_ANNOTATIONS:
            msg.annotations = _map_pairs(buf, value_pos)
        elif code != DELIVERY_ANNOTATIONS and rest_start < 0:
            rest_start = start
        if code == DATA:
            data_start = value_pos + (2 if buf[value_pos] == 0xA0 else 5)
            msg.data_sections.append(buf[data_start:end])
        elif full and code == PROPERTIES:
            msg.properties = decode(buf, value_pos)[0]
        elif full and code == APPLICATION_PROPERTIES:
            msg.application_properties = decode(buf, value_pos)[0]
        elif full and code == AMQP_VALUE:
            msg.value = decode(buf, value_pos)[0]
        pos = end
    msg.rest = bytes(buf[rest_start:]) if rest_start >= 0 else b""
    return msg


def encode_annotations(raw_pairs: list[bytes], code: int = MESSAGE_ANNOTATIONS) -> bytes:
    """Encode an annotations section from already-encoded key+value pairs."""
    body = b"".join(raw_pairs)
    count = 2 * len(raw_pairs)
    if len(body) + 1 < 256 and count < 256:
        value = bytes((0xC1, len(body) + 1, count)) + body
    else:
        value = b"\xd1" + _pack_I(len(body) + 4) + _pack_I(count) + body
    return bytes((0x00, 0x53, code)) + value


def build_message(
    *,
    properties: dict[str, Any] | None = None,
    application_properties: dict[Any, Any] | None = None,
    value: Any = None,
) -> bytes:
    """Build a small message (CBS and management replies) with an amqp-value body."""
    parts: list[bytes] = []
    if properties:
        names = (
            "message_id", "user_id", "to", "subject", "reply_to", "correlation_id",
            "content_type", "content_encoding", "absolute_expiry_time", "creation_time",
            "group_id", "group_sequence", "reply_to_group_id",
        )  # fmt: skip
        parts.append(encode(Described(ULong(PROPERTIES), [properties.get(n) for n in names])))
    if application_properties is not None:
        parts.append(encode(Described(ULong(APPLICATION_PROPERTIES), application_properties)))
    parts.append(encode(Described(ULong(AMQP_VALUE), value)))
    return b"".join(parts)


def new_message_id() -> uuid.UUID:
    return uuid.uuid4()
