"""AMQP 1.0 frame layer: protocol headers and the 8-byte frame header.

A frame is ``size:uint32 doff:uint8 type:uint8 channel:uint16`` followed by the body; ``doff``
counts 4-byte words of header, always 2 here because no extended header is ever needed.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

__all__ = [
    "AMQP_HEADER",
    "FRAME_AMQP",
    "FRAME_SASL",
    "SASL_HEADER",
    "TLS_HEADER",
    "Frame",
    "FrameError",
    "build_frame",
    "read_frame",
]

AMQP_HEADER = b"AMQP\x00\x01\x00\x00"
SASL_HEADER = b"AMQP\x03\x01\x00\x00"
TLS_HEADER = b"AMQP\x02\x01\x00\x00"
FRAME_AMQP = 0
FRAME_SASL = 1

_HEADER = struct.Struct(">IBBH")


class FrameError(ValueError):
    """A frame header that no conforming peer would send (closes the connection)."""


@dataclass(frozen=True)
class Frame:
    """One decoded frame: its type, channel and body (performative plus any payload)."""

    type: int
    channel: int
    body: memoryview


def build_frame(channel: int, body: bytes, frame_type: int = FRAME_AMQP) -> bytes:
    """Prefix ``body`` with a frame header; an empty body is a heartbeat."""
    return _HEADER.pack(8 + len(body), 2, frame_type, channel) + body


def read_frame(buf: bytearray, max_size: int) -> tuple[Frame | None, int]:
    """Parse one frame from the start of ``buf``.

    Returns
    -------
    (frame, consumed)
        ``(None, 0)`` while the buffer holds only part of a frame.
    """
    if len(buf) < 8:
        return None, 0
    size, doff, frame_type, channel = _HEADER.unpack_from(buf, 0)
    if size < 8 or doff < 2:
        raise FrameError(f"malformed frame header (size {size}, doff {doff})")
    if size > max_size:
        raise FrameError(f"frame of {size} bytes exceeds max-frame-size {max_size}")
    if len(buf) < size:
        return None, 0
    body = memoryview(bytes(buf[doff * 4 : size]))
    return Frame(frame_type, channel, body), size
