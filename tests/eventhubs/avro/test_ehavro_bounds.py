"""An Avro body decodes into memory bounded by its size, or is a bad record: counts and lengths
are checked against the bytes that remain, and items that take no bytes (null, fixed of size
0) cannot be declared by the billion. Fuzzed over arbitrary bodies and a few schemas: a chunk
decodes into rows and bad records, never a raw exception, within a memory ceiling."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import fastavro
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pysparksources._core.avro_schema import parse_schema
from pysparksources.errors import MalformedRecordError
from pysparksources.eventhubs.avro.body_bounds import VALUES_PER_BODY, VALUES_PER_BYTE, BodyBounds
from pysparksources.eventhubs.avro.decode import decode_batch
from support.avro_chunks import avro_bytes, avro_source, received
from support.memory_cap import address_space_cap

CEILING = 512 * 1024 * 1024  # far above what any body here may decode into


def zigzag(value: int) -> bytes:
    """Avro's long: zigzag, then 7 bits a byte, low first."""
    n = (value << 1) ^ (value >> 63)
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        if not n:
            out.append(low)
            return bytes(out)
        out.append(low | 0x80)


NULLS = {
    "type": "record",
    "name": "Nulls",
    "fields": [{"name": "xs", "type": {"type": "array", "items": "null"}}],
}
ZERO_FIXED = {
    "type": "record",
    "name": "Zeros",
    "fields": [
        {"name": "z", "type": {"type": "array", "items": {"type": "fixed", "name": "Z", "size": 0}}}
    ],
}
NESTED = {
    "type": "record",
    "name": "Outer",
    "fields": [
        {"name": "id", "type": "long"},
        {
            "name": "inner",
            "type": {
                "type": "record",
                "name": "Inner",
                "fields": [
                    {"name": "tags", "type": {"type": "map", "values": "long"}},
                    {
                        "name": "grid",
                        "type": {"type": "array", "items": {"type": "array", "items": "null"}},
                    },
                ],
            },
        },
        {"name": "either", "type": ["null", "string", "Inner", {"type": "array", "items": "int"}]},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
        {"name": "raw", "type": "bytes"},
    ],
}
MAPS = {"type": "map", "values": ["null", "double", {"type": "map", "values": "string"}]}
SCHEMAS = [NULLS, ZERO_FIXED, NESTED, MAPS]
# The body: 2^62 null items in 11 bytes (a count of 10 bytes, then the end).
BILLIONS = zigzag(2**62) + b"\x00"


def _bounds(schema: Any) -> BodyBounds:
    return BodyBounds(parse_schema(json.dumps(schema), "pyeventhub")[1])


def _errors(schema: Any, bodies: list[bytes], **options: str) -> list[str | None]:
    config = avro_source(schema, mode="PERMISSIVE", **options)
    rows = decode_batch(config, received(bodies), [None] * len(bodies))
    return [r["_corrupt_record"] and r["_corrupt_record"]["error"] for r in rows.to_pylist()]


def test_fastavro_reads_items_as_they_come_so_bytes_bound_what_takes_bytes() -> None:
    # What avro.body_bounds relies on: a count or a length is never allocated up front.
    for schema, body in [
        ({"type": "array", "items": "int"}, zigzag(2**62)),
        ({"type": "map", "values": "null"}, zigzag(2**62)),
        ("string", zigzag(2**62)),
        ("bytes", zigzag(2**60) + b"abc"),
    ]:
        with address_space_cap(CEILING), pytest.raises(EOFError):
            fastavro.schemaless_reader(io.BytesIO(body), fastavro.parse_schema(schema))
        assert not _bounds(schema).needed


@pytest.mark.parametrize("schema", [NULLS, ZERO_FIXED], ids=["null", "fixed0"])
def test_billions_of_items_that_take_no_bytes_are_a_bad_record_in_every_mode(
    schema: Any, tmp_path: Any
) -> None:
    # Before, this one event took every byte of the worker's memory.
    assert _bounds(schema).needed
    field, item = schema["fields"][0]["name"], None if schema is NULLS else b""
    bodies = [avro_bytes(schema, {field: [item] * 3}), BILLIONS]
    with address_space_cap(CEILING):
        errors = _errors(schema, bodies)
        assert errors[0] is None
        assert errors[1] is not None and "decodes into more than" in errors[1]
        assert f"{VALUES_PER_BYTE} per byte of the body plus {VALUES_PER_BODY}" in errors[1]
        dropping = avro_source(schema, mode="DROPMALFORMED")
        kept = decode_batch(dropping, received(bodies), [None, None])
        assert kept.num_rows == 1
        with pytest.raises(MalformedRecordError, match="sequenceNumber 41"):
            decode_batch(avro_source(schema), received(bodies), [None, None])


def test_items_without_bytes_are_read_up_to_the_bound_and_refused_past_it() -> None:
    # A 3-byte body: its count (2 bytes) and the end of the array; the record and the array
    # themselves are the schema's own values.
    limit = VALUES_PER_BODY + VALUES_PER_BYTE * 3
    bodies = [zigzag(limit) + b"\x00", zigzag(limit + 1) + b"\x00"]
    assert [len(b) for b in bodies] == [3, 3]
    config = avro_source(NULLS, mode="PERMISSIVE")
    rows = decode_batch(config, received(bodies), [None, None]).to_pylist()
    assert rows[0]["body"] == {"xs": [None] * limit}
    assert "decodes into more than" in rows[1]["_corrupt_record"]["error"]


def test_every_count_and_length_is_checked_against_the_bytes_left() -> None:
    bounds = _bounds(NESTED)
    assert bounds.needed  # grid holds arrays of null
    head = zigzag(1) + zigzag(0)  # id, empty tags
    cases = {
        "5 items of at least 1 bytes declared, 0 bytes left": head + zigzag(5),
        "a block of 99 bytes, 2 left": head + zigzag(-1) + zigzag(99) + b"\x00\x00",
        "union branch 9 of 4": head + zigzag(0) + zigzag(9),
        "enum symbol 2 of 2": head + zigzag(0) + zigzag(0) + zigzag(2),
        "7 bytes declared, 1 left": head + zigzag(0) + zigzag(0) + zigzag(1) + zigzag(7) + b"x",
        "a number longer than 10 bytes": b"\xff" * 11,
        "the body ends inside a number": b"\x80",
    }
    for expected, body in cases.items():
        with pytest.raises(MalformedRecordError, match=expected):
            bounds.check(body)
    # A block that gives its size in bytes (negative count) is read like any other.
    blocked = head + zigzag(-2) + zigzag(2) + zigzag(0) + zigzag(0) + zigzag(0)
    blocked += zigzag(0) + zigzag(0) + zigzag(0)  # either: null; kind: A; raw: empty
    bounds.check(blocked)


VALUE = st.integers(-(2**63), 2**63 - 1).map(zigzag)
BODIES = st.one_of(
    st.binary(max_size=48),
    st.lists(st.one_of(VALUE, st.binary(max_size=4)), max_size=12).map(b"".join),
)


@given(schema=st.sampled_from(SCHEMAS), bodies=st.lists(BODIES, min_size=1, max_size=4))
@example(schema=NULLS, bodies=[BILLIONS])
@example(schema=NESTED, bodies=[zigzag(1) + zigzag(0) + zigzag(2**62)])
def test_fuzz_any_body_decodes_or_is_a_bad_record_within_a_memory_ceiling(
    schema: Any, bodies: list[bytes]
) -> None:
    with address_space_cap(CEILING):
        rows = decode_batch(
            avro_source(schema, mode="PERMISSIVE"), received(bodies), [None] * len(bodies)
        ).to_pylist()
        assert len(rows) == len(bodies)
        for row, body in zip(rows, bodies, strict=True):
            corrupt = row["_corrupt_record"]
            if corrupt is not None:
                assert row["body"] is None and corrupt["body"] == body
                assert corrupt["error"] and "MemoryError" not in corrupt["error"]
        with contextlib.suppress(MalformedRecordError):  # FAILFAST's one outcome for a bad body
            decode_batch(avro_source(schema), received(bodies), [None] * len(bodies))


@given(st.lists(st.lists(st.none(), max_size=300), max_size=20), st.integers(0, 2**40))
def test_fuzz_bodies_fastavro_writes_pass_the_check_and_decode(
    grid: list[list[None]], value: int
) -> None:
    inner = {"tags": {"t": value}, "grid": grid}
    record = {"id": value, "inner": inner, "either": None, "kind": "B", "raw": b"r"}
    body = avro_bytes(NESTED, record)
    (row,) = decode_batch(avro_source(NESTED), received([body]), [None]).to_pylist()
    assert row["body"]["inner"]["grid"] == grid and row["body"]["id"] == value
