"""Avro's object container files: the header, the blocks between sync markers, the codecs.

A file is ``Obj\\x01``, a metadata map (the writer's schema, the codec), a 16-byte sync
marker, then blocks: a count of records, a byte size, the (compressed) records and the sync
marker again. A split of a file (a byte range a task reads) holds the blocks whose preceding
sync marker starts in it, as Hadoop's Avro input format and Spark decide; so a large file is
read by several tasks, each finding its first block by the marker.

The blocks are decompressed here, not by fastavro: null, deflate, bzip2 and xz with the
standard library, snappy (its raw format and the CRC-32 Avro adds) and zstandard with
pyarrow, so every codec Spark writes reads without another package. What fastavro then
decodes is a null-codec stream of the same blocks (:class:`DecodedStream`).

Everything here is hostile until checked: sizes are bounded (the header by the caller, a
block by :data:`MAX_BLOCK_BYTES` before and after decompression), a marker must follow each
block, a snappy block must match its checksum. A problem raises :class:`MalformedRecordError`
with the byte position, which the reader turns into an error naming the file (or a skip,
``ignoreCorruptFiles``).
"""

from __future__ import annotations

import bz2
import io
import lzma
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from pysparksources.errors import MalformedRecordError
from pysparksources.files import NAME

__all__ = [
    "CODECS",
    "MAGIC",
    "MAX_BLOCK_BYTES",
    "MAX_HEADER_BYTES",
    "SYNC_SIZE",
    "Block",
    "DecodedStream",
    "Header",
    "blocks",
    "compress",
    "encode_block",
    "encode_header",
    "header_size",
    "read_header",
]

MAGIC = b"Obj\x01"
SYNC_SIZE = 16
# A block larger than this, stored or decompressed, is refused as corrupt: Avro writers cut
# blocks at 16-64 KB by default (Java's limit is 2 GiB; a task holds a block whole).
MAX_BLOCK_BYTES = 256 << 20
# A header larger than this is refused as corrupt (real ones hold a schema: kilobytes).
MAX_HEADER_BYTES = 64 << 20
_CHUNK = 64 << 10
# The codecs Avro names, as Spark's writer names them (``compression``) -> as the header does.
CODECS: Mapping[str, str] = {
    "none": "null",
    "uncompressed": "null",
    "snappy": "snappy",
    "deflate": "deflate",
    "bzip2": "bzip2",
    "xz": "xz",
    "zstandard": "zstandard",
}


def _corrupt(position: int, problem: str) -> MalformedRecordError:
    return MalformedRecordError(NAME, f"corrupt Avro data at byte {position}: {problem}")


class _Input:
    """A binary file read forward in chunks, with Avro's varints; knows its position."""

    def __init__(self, f: Any, position: int) -> None:
        self._f = f
        f.seek(position)
        self._buffer = b""
        self._at = 0
        self.position = position

    def _fill(self, wanted: int) -> None:
        while len(self._buffer) - self._at < wanted:
            chunk = self._f.read(max(_CHUNK, wanted))
            if not chunk:
                return
            self._buffer = self._buffer[self._at :] + chunk
            self._at = 0

    def exact(self, size: int) -> bytes:
        self._fill(size)
        data = self._buffer[self._at : self._at + size]
        if len(data) != size:
            raise _corrupt(self.position, f"the file ends {size - len(data)} bytes early")
        self._at += size
        self.position += size
        return data

    def at_end(self) -> bool:
        self._fill(1)
        return self._at >= len(self._buffer)

    def long(self) -> int:
        """A zigzag varint (Avro's int and long)."""
        value = shift = 0
        start = self.position
        while True:
            byte = self.exact(1)[0]
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return (value >> 1) ^ -(value & 1)
            shift += 7
            if shift > 63:
                raise _corrupt(start, "a number longer than 10 bytes")

    def skip(self, size: int) -> None:
        self._fill(0)
        kept = len(self._buffer) - self._at
        if size <= kept:
            self._at += size
        else:
            self._f.seek(self.position + size)
            self._buffer, self._at = b"", 0
        self.position += size

    def find(self, marker: bytes, limit: int | None) -> int | None:
        """Move past the first ``marker`` that starts before ``limit``; its position, or None
        (at the end of the file, or past ``limit``)."""
        while True:
            self._fill(len(marker))
            window = self._buffer[self._at :]
            found = window.find(marker)
            if found >= 0:
                where = self.position + found
                if limit is not None and where >= limit:
                    return None
                self._at += found + len(marker)
                self.position = where + len(marker)
                return where
            if len(window) < len(marker):
                return None  # the end of the file
            keep = len(marker) - 1  # a marker may straddle two chunks
            step = len(window) - keep
            if limit is not None and self.position + step >= limit:
                return None
            self._at += step
            self.position += step
            self._fill(len(marker) + 1)
            if len(self._buffer) - self._at <= keep:
                return None


@dataclass(frozen=True)
class Header:
    """What a file's header holds."""

    metadata: dict[str, bytes]
    sync: bytes
    end: int  # the byte after the header's sync marker: where the first block starts
    codec: str
    schema: str


def header_size(f: Any) -> int:
    """The bytes of ``f``'s header, found without reading its values (0: not an Avro file,
    or one too damaged to say): what reading it will cost."""
    try:
        source = _Input(f, 0)
        if source.exact(4) != MAGIC:
            return 0
        _metadata(source, read=False)
        return source.position + SYNC_SIZE
    except MalformedRecordError:
        return 0


def read_header(f: Any) -> Header:
    """The header at the start of ``f``; :class:`MalformedRecordError` if it is not one."""
    source = _Input(f, 0)
    if source.exact(4) != MAGIC:
        raise MalformedRecordError(NAME, "not an Avro object container file (no Obj\\x01 magic)")
    metadata = _metadata(source, read=True)
    sync = source.exact(SYNC_SIZE)
    codec = metadata.get("avro.codec", b"null").decode("utf-8", "replace")
    if codec not in _DECOMPRESSORS:
        raise MalformedRecordError(
            NAME,
            f"Avro codec {codec!r} is not one pyfile reads ("
            + ", ".join(sorted(_DECOMPRESSORS))
            + ")",
        )
    raw = metadata.get("avro.schema")
    if raw is None:
        raise MalformedRecordError(NAME, "the Avro header holds no avro.schema")
    try:
        schema = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedRecordError(NAME, "the Avro header's avro.schema is not UTF-8") from None
    return Header(metadata, sync, source.position, codec, schema)


def _metadata(source: _Input, read: bool) -> dict[str, bytes]:
    """The header's map of string to bytes (values skipped unless ``read``; what is read is
    bounded by :data:`MAX_HEADER_BYTES`)."""
    out: dict[str, bytes] = {}
    while True:
        start = source.position
        count = source.long()
        if count == 0:
            return out
        if count < 0:  # a negative count is followed by the block's size in bytes
            count = -count
            source.long()
        for _ in range(count):
            key = source.exact(_length(source, start))
            size = _length(source, start)
            if not read:
                source.skip(size)
                continue
            if source.position + size > MAX_HEADER_BYTES:
                raise _corrupt(start, f"a header over {MAX_HEADER_BYTES >> 20} MiB")
            out[key.decode("utf-8", "replace")] = source.exact(size)


def _length(source: _Input, start: int) -> int:
    size = source.long()
    if not 0 <= size <= MAX_BLOCK_BYTES:
        raise _corrupt(start, f"a length of {size} bytes in the header")
    return size


@dataclass(frozen=True)
class Block:
    """One block: its records' count and their bytes, decompressed."""

    position: int  # where the block starts in the file
    count: int
    data: bytes


def blocks(f: Any, header: Header, start: int, end: int | None) -> Iterator[Block]:
    """The blocks of a split ``[start, end)`` (``end`` None: to the file's end): those whose
    preceding sync marker starts in it; the first block's marker ends the header."""
    source = _Input(f, max(start, header.end - SYNC_SIZE))
    if source.find(header.sync, end) is None:
        return
    decompress = _DECOMPRESSORS[header.codec]
    while not source.at_end():
        position = source.position
        count = source.long()
        size = source.long()
        if count < 0 or not 0 <= size <= MAX_BLOCK_BYTES:
            raise _corrupt(position, f"a block of {count} records in {size} bytes")
        stored = source.exact(size)
        marker_at = source.position
        if source.exact(SYNC_SIZE) != header.sync:
            raise _corrupt(marker_at, "no sync marker after the block (Invalid sync)")
        yield Block(position, count, decompress(stored, position))
        if end is not None and marker_at >= end:
            return  # the next block belongs to the next split


# -- codecs ---------------------------------------------------------------------------------
def _bounded(decompressor: Any, data: bytes, position: int) -> bytes:
    out = decompressor.decompress(data, MAX_BLOCK_BYTES + 1)
    if len(out) > MAX_BLOCK_BYTES:
        raise _corrupt(position, f"a block decompresses past {MAX_BLOCK_BYTES >> 20} MiB")
    return bytes(out)


def _null(data: bytes, position: int) -> bytes:
    return data


def _deflate(data: bytes, position: int) -> bytes:
    try:
        return _bounded(zlib.decompressobj(-15), data, position)
    except zlib.error as error:
        raise _corrupt(position, f"deflate: {error}") from None


def _bzip2(data: bytes, position: int) -> bytes:
    try:
        return _bounded(bz2.BZ2Decompressor(), data, position)
    except (OSError, EOFError) as error:
        raise _corrupt(position, f"bzip2: {error}") from None


def _xz(data: bytes, position: int) -> bytes:
    try:
        return _bounded(lzma.LZMADecompressor(), data, position)
    except (lzma.LZMAError, EOFError) as error:
        raise _corrupt(position, f"xz: {error}") from None


def _snappy(data: bytes, position: int) -> bytes:
    """Raw snappy, then the CRC-32 of the decompressed bytes, big-endian."""
    if len(data) < 5:
        raise _corrupt(position, "a snappy block shorter than its checksum")
    body, checksum = data[:-4], data[-4:]
    size = shift = i = 0
    while True:  # the snappy preamble: the decompressed length, an unsigned varint
        if i >= len(body) or shift > 35:
            raise _corrupt(position, "a snappy block without its length")
        size |= (body[i] & 0x7F) << shift
        shift += 7
        i += 1
        if body[i - 1] < 0x80:
            break
    if size > MAX_BLOCK_BYTES:
        raise _corrupt(position, f"a block decompresses past {MAX_BLOCK_BYTES >> 20} MiB")
    try:
        out = pa.decompress(body, decompressed_size=size, codec="snappy", asbytes=True)
    except (pa.ArrowException, ValueError) as error:
        raise _corrupt(position, f"snappy: {error}") from None
    if zlib.crc32(out).to_bytes(4, "big") != checksum:
        raise _corrupt(position, "a snappy block that does not match its checksum")
    return bytes(out)


def _zstandard(data: bytes, position: int) -> bytes:
    try:
        with pa.CompressedInputStream(pa.BufferReader(data), "zstd") as stream:
            out = stream.read(MAX_BLOCK_BYTES + 1)
    except (pa.ArrowException, OSError, ValueError) as error:
        raise _corrupt(position, f"zstandard: {error}") from None
    if len(out) > MAX_BLOCK_BYTES:
        raise _corrupt(position, f"a block decompresses past {MAX_BLOCK_BYTES >> 20} MiB")
    return bytes(out)


_DECOMPRESSORS: dict[str, Callable[[bytes, int], bytes]] = {
    "null": _null,
    "deflate": _deflate,
    "bzip2": _bzip2,
    "xz": _xz,
    "snappy": _snappy,
    "zstandard": _zstandard,
}


def _pack_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(6, zlib.DEFLATED, -15)  # Spark's default level
    return packer.compress(data) + packer.flush()


def _pack_snappy(data: bytes) -> bytes:
    packed = pa.compress(data, codec="snappy", asbytes=True)
    return bytes(packed) + zlib.crc32(data).to_bytes(4, "big")


_COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    "null": bytes,
    "deflate": _pack_deflate,
    "bzip2": bz2.compress,
    "xz": lambda data: lzma.compress(data, format=lzma.FORMAT_XZ),
    "snappy": _pack_snappy,
    "zstandard": lambda data: bytes(pa.compress(data, codec="zstd", asbytes=True)),
}


def compress(codec: str, data: bytes) -> bytes:
    """``data`` compressed as Avro's ``codec`` (a value of :data:`CODECS`) stores a block."""
    return _COMPRESSORS[codec](data)


# -- writing --------------------------------------------------------------------------------
def _long(value: int) -> bytes:
    encoded = (value << 1) ^ (value >> 63)
    out = bytearray()
    while encoded >= 0x80:
        out.append(encoded & 0x7F | 0x80)
        encoded >>= 7
    out.append(encoded)
    return bytes(out)


def _bytes(value: bytes) -> bytes:
    return _long(len(value)) + value


def encode_header(schema: str, codec: str, sync: bytes, extra: Mapping[str, bytes] = {}) -> bytes:
    """A header declaring ``schema`` and ``codec`` (and ``extra`` metadata)."""
    entries = {"avro.schema": schema.encode("utf-8"), "avro.codec": codec.encode(), **extra}
    body = b"".join(_bytes(k.encode("utf-8")) + _bytes(v) for k, v in entries.items())
    return MAGIC + _long(len(entries)) + body + _long(0) + sync


def encode_block(count: int, data: bytes, sync: bytes) -> bytes:
    """A block of ``count`` records whose (compressed) bytes are ``data``."""
    return _long(count) + _long(len(data)) + data + sync


class DecodedStream(io.RawIOBase):
    """A null-codec container file, read as it is made: a header for ``schema`` (given as
    JSON text), then ``source``'s blocks, decompressed. fastavro decodes it in one loop."""

    def __init__(self, schema: str, sync: bytes, source: Iterator[Block]) -> None:
        self._sync = sync
        self._source = source
        self._pending = memoryview(encode_header(schema, "null", sync))
        self.block: Block | None = None  # the block being read, for error messages

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not len(self._pending):
            block = next(self._source, None)
            if block is None:
                return 0
            self.block = block
            self._pending = memoryview(encode_block(block.count, block.data, self._sync))
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size
