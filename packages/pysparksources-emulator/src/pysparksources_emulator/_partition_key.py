"""Which partition a partition key lands on, the way Event Hubs clients compute it.

Bob Jenkins' lookup3 ``hashlittle2`` with both seeds 0 over the key's *code points* (one unit
per character, not UTF-8 bytes: that is what the Python SDK's public behaviour shows for
non-ASCII keys); the two 32-bit results are XOR-ed and read as a signed 16-bit number ``h``;
the partition is ``abs(h % n)`` with Python's modulo. Checked against the azure-eventhub SDK's
buffered producer, which routes keyed events itself (the distribution's
tests/test_sdk_features.py).
"""

from __future__ import annotations

__all__ = ["key_hash", "partition_for_key"]

_M = 0xFFFFFFFF


def _rot(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & _M


def _mix(a: int, b: int, c: int) -> tuple[int, int, int]:
    a = (a - c) & _M
    a ^= _rot(c, 4)
    c = (c + b) & _M
    b = (b - a) & _M
    b ^= _rot(a, 6)
    a = (a + c) & _M
    c = (c - b) & _M
    c ^= _rot(b, 8)
    b = (b + a) & _M
    a = (a - c) & _M
    a ^= _rot(c, 16)
    c = (c + b) & _M
    b = (b - a) & _M
    b ^= _rot(a, 19)
    a = (a + c) & _M
    c = (c - b) & _M
    c ^= _rot(b, 4)
    b = (b + a) & _M
    return a, b, c


def _final(a: int, b: int, c: int) -> tuple[int, int, int]:
    c ^= b
    c = (c - _rot(b, 14)) & _M
    a ^= c
    a = (a - _rot(c, 11)) & _M
    b ^= a
    b = (b - _rot(a, 25)) & _M
    c ^= b
    c = (c - _rot(b, 16)) & _M
    a ^= c
    a = (a - _rot(c, 4)) & _M
    b ^= a
    b = (b - _rot(a, 14)) & _M
    c ^= b
    c = (c - _rot(b, 24)) & _M
    return a, b, c


def _word(units: list[int]) -> int:
    """Little-endian word from up to four units (a unit above 255 spills into the next byte)."""
    word = 0
    for i, unit in enumerate(units):
        word += unit << (8 * i)
    return word & _M


def _hashlittle2(units: list[int], seed_c: int = 0, seed_b: int = 0) -> tuple[int, int]:
    length = len(units)
    a = b = c = (0xDEADBEEF + length + seed_c) & _M
    c = (c + seed_b) & _M
    pos = 0
    while length - pos > 12:
        a = (a + _word(units[pos : pos + 4])) & _M
        b = (b + _word(units[pos + 4 : pos + 8])) & _M
        c = (c + _word(units[pos + 8 : pos + 12])) & _M
        a, b, c = _mix(a, b, c)
        pos += 12
    tail = units[pos:]
    if not tail:
        return c, b
    a = (a + _word(tail[0:4])) & _M
    b = (b + _word(tail[4:8])) & _M
    c = (c + _word(tail[8:12])) & _M
    a, b, c = _final(a, b, c)
    return c, b


def key_hash(key: str) -> int:
    """The signed 16-bit hash of ``key``."""
    c, b = _hashlittle2([ord(ch) for ch in key])
    h = (c ^ b) & 0xFFFF
    return h - 0x10000 if h >= 0x8000 else h


def partition_for_key(key: str, partition_count: int) -> int:
    return abs(key_hash(key) % partition_count)
