"""ORC's compressed streams, for the few small ones pyfile reads or rewrites itself (footers).

An ORC stream is a run of chunks, each a 3-byte header (length and an "original" flag) and
its bytes, stored or compressed with the file's codec. LZ4 and LZO blocks are decoded in
Python: pyarrow has no LZO codec, and its LZ4 one must be told the decompressed size, which
ORC's chunks do not record.
"""

from __future__ import annotations

import enum
import zlib

import pyarrow as pa

from pysparksources.errors import MalformedRecordError
from pysparksources.files import NAME

__all__ = ["Compression", "decompress", "stored_chunks"]


class Compression(enum.IntEnum):
    """ORC's CompressionKind, as the postscript records it."""

    NONE = 0
    ZLIB = 1
    SNAPPY = 2
    LZO = 3
    LZ4 = 4
    ZSTD = 5
    BROTLI = 6


def decompress(data: bytes, kind: int) -> bytes:
    """A whole stream of ``kind``'s chunks, decompressed."""
    if kind == Compression.NONE:
        return data
    out = []
    pos = 0
    while pos < len(data):
        header = data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16
        end = pos + 3 + (header >> 1)
        chunk = data[pos + 3 : end]
        out.append(chunk if header & 1 else _inflate(chunk, kind))
        pos = end
    return b"".join(out)


def stored_chunks(data: bytes, kind: int, block_size: int) -> bytes:
    """``data`` as a stream of "original" (stored, not compressed) chunks, which any reader of
    a ``kind`` file takes."""
    if kind == Compression.NONE:
        return data
    out = bytearray()
    for pos in range(0, len(data), block_size):
        chunk = data[pos : pos + block_size]
        out += (len(chunk) << 1 | 1).to_bytes(3, "little") + chunk
    return bytes(out)


def _inflate(chunk: bytes, kind: int) -> bytes:
    if kind == Compression.ZLIB:
        return zlib.decompressobj(-15).decompress(chunk)
    if kind == Compression.SNAPPY:
        size = _snappy_length(chunk)
        return pa.Codec("snappy").decompress(chunk, decompressed_size=size, asbytes=True)  # type: ignore[no-any-return]
    if kind in (Compression.ZSTD, Compression.BROTLI):
        codec = "zstd" if kind == Compression.ZSTD else "brotli"
        return pa.CompressedInputStream(pa.BufferReader(chunk), codec).read()  # type: ignore[no-any-return]
    if kind == Compression.LZ4:
        return _lz4_block(chunk)
    if kind == Compression.LZO:
        return _lzo_block(chunk)
    raise MalformedRecordError(NAME, f"unknown ORC compression kind {kind}")


def _snappy_length(chunk: bytes) -> int:
    """The decompressed size a snappy block starts with (a base-128 varint)."""
    value = shift = pos = 0
    while True:
        byte = chunk[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value
        shift += 7


def _lz4_block(data: bytes) -> bytes:
    """An LZ4 block (no frame) decompressed."""
    out = bytearray()
    pos = 0
    while pos < len(data):
        token = data[pos]
        pos += 1
        length = token >> 4
        if length == 15:
            length, pos = _lz4_length(data, pos, length)
        out += data[pos : pos + length]
        pos += length
        if pos >= len(data):
            break  # the last sequence has literals only
        distance = data[pos] | data[pos + 1] << 8
        pos += 2
        length = token & 15
        if length == 15:
            length, pos = _lz4_length(data, pos, length)
        _copy_match(out, distance, length + 4)
    return bytes(out)


def _copy_match(out: bytearray, distance: int, length: int) -> None:
    if distance <= 0 or distance > len(out):
        raise MalformedRecordError(NAME, "corrupt compressed data (match before the start)")
    start = len(out) - distance
    for i in range(length):  # byte by byte: a match may overlap what it writes
        out.append(out[start + i])


def _lz4_length(data: bytes, pos: int, length: int) -> tuple[int, int]:
    """A 4-bit length of 15 continues in bytes, added up until one is not 255."""
    while True:
        more = data[pos]
        pos += 1
        length += more
        if more != 255:
            return length, pos


def _lzo_length(data: bytes, pos: int, base: int) -> tuple[int, int]:
    """A length field whose bits were all zero: 255 per zero byte, then the next byte."""
    length = base
    while data[pos] == 0:
        length += 255
        pos += 1
    return length + data[pos], pos + 1


def _lzo_block(data: bytes) -> bytes:
    """LZO1X data (as ORC's Java and C++ LZO codecs write it) decompressed."""
    out = bytearray()
    pos = 0
    state = 0  # literals the previous instruction copied (4: a run of four or more)
    if data and data[0] > 17:
        count = data[0] - 17
        out += data[1 : 1 + count]
        pos, state = 1 + count, min(count, 4)
    while pos < len(data):
        op = data[pos]
        pos += 1
        if op >= 64:  # a match of 3-8 bytes within 2 kB
            length, distance = (op >> 5) + 1, (data[pos] << 3) + (op >> 2 & 7) + 1
            pos += 1
        elif op >= 32:  # a match within 16 kB
            length = op & 31
            if length == 0:
                length, pos = _lzo_length(data, pos, 31)
            length += 2
            op = data[pos] | data[pos + 1] << 8  # its two low bits count the literals after
            distance = (op >> 2) + 1
            pos += 2
        elif op >= 16:  # a match within 16-48 kB, or the end of the data
            length = op & 7
            if length == 0:
                length, pos = _lzo_length(data, pos, 7)
            length += 2
            trailer = data[pos] | data[pos + 1] << 8
            pos += 2
            distance = 16384 + ((op & 8) << 11) + (trailer >> 2)
            if distance == 16384:
                break
            op = trailer  # its two low bits count the literals that follow
        elif state == 0:  # a run of literals
            length = op
            if length == 0:
                length, pos = _lzo_length(data, pos, 15)
            length += 3
            out += data[pos : pos + length]
            pos += length
            state = 4
            continue
        else:  # a short match: 2 bytes within 1 kB, or 3 bytes 2-3 kB back after a run
            length = 3 if state == 4 else 2
            distance = (data[pos] << 2) + (op >> 2 & 3) + (2049 if state == 4 else 1)
            pos += 1
        _copy_match(out, distance, length)
        state = op & 3
        out += data[pos : pos + state]
        pos += state
    return bytes(out)
