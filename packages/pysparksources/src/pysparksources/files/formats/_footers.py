"""How many bytes a parquet or orc file says its footer holds, read before pyarrow reads it.

A footer's length is written at the end of the file, and a reader allocates and reads that
much (then decodes it): a damaged or hostile file can declare gigabytes. Inference checks the
declared size against ``FOOTER_LIMIT`` first. Real footers are kilobytes to a few megabytes
(one entry per column per row group). A file too short or too odd to say is left to pyarrow,
which reports what is wrong with it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FOOTER_LIMIT", "footer_size"]

FOOTER_LIMIT = 64 * 1024 * 1024
_PARQUET_MAGIC = (b"PAR1", b"PARE")  # plain, and with an encrypted footer
# ORC's PostScript (a protobuf message): footerLength, compressionBlockSize, metadataLength,
# stripeStatisticsLength. The block size counts too: the decompressor allocates blocks of it.
_ORC_SIZES = (1, 3, 5, 7)


def footer_size(f: Any, fmt: str) -> int:
    """The footer bytes ``f`` (a seekable binary file) declares; 0 when it declares none."""
    end = int(f.seek(0, 2))
    if fmt == "parquet":
        if end < 12:
            return 0
        f.seek(end - 8)
        tail = f.read(8)
        if len(tail) != 8 or tail[4:] not in _PARQUET_MAGIC:
            return 0
        return int.from_bytes(tail[:4], "little")
    if end < 2:
        return 0
    f.seek(end - 1)
    length = f.read(1)[0]
    if not 0 < length < end:
        return 0
    f.seek(end - 1 - length)
    fields = _varint_fields(f.read(length))
    return sum(fields.get(number, 0) for number in _ORC_SIZES)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """A protobuf varint at ``pos``: (its value, the position after it); IndexError if cut."""
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise IndexError(pos)
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        shift += 7
        if byte < 0x80:
            return value, pos


def _varint_fields(message: bytes) -> dict[int, int]:
    """The varint fields of a protobuf message by number (others skipped); {} if damaged."""
    fields: dict[int, int] = {}
    pos = 0
    try:
        while pos < len(message):
            key, pos = _varint(message, pos)
            number, wire = key >> 3, key & 7
            if wire == 0:
                fields[number], pos = _varint(message, pos)
            elif wire == 2:
                size, pos = _varint(message, pos)
                pos += size
            elif wire in (1, 5):
                pos += 8 if wire == 1 else 4
            else:
                return {}
    except IndexError:
        return {}
    return fields
