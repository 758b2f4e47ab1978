"""What the Schema Registry answers for an event's schema id, trusted for nothing: an id it does
not have, or an answer that is no usable Avro schema, is a bad record going through ``mode``;
a registry that refuses us or cannot be reached fails the task and says what to check.

Against the HTTPS registry double with its Entra ID token endpoint (real azure-identity, real
azure-core pipeline), decoding chunks the way a read task does; no Spark, no hub.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from pysparksources.errors import MalformedRecordError, SchemaRegistryError
from pysparksources.eventhubs.avro import schema_registry
from pysparksources.eventhubs.avro.decode import decode_batch
from pysparksources.eventhubs.avro.schema_registry import (
    MAX_SCHEMA_BYTES,
    MISSING_SECONDS,
    clear_caches,
)
from support.avro_chunks import avro_bytes, avro_source, received
from support.schema_registry import CLIENT_SECRET, Answer, SchemaRegistryDouble

ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [{"name": "id", "type": "long"}, {"name": "customer", "type": "string"}],
}
GOOD = "0" * 31 + "1"
UNKNOWN = "f" * 32
BODY = avro_bytes(ORDER, {"id": 7, "customer": "c7"})


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[SchemaRegistryDouble]:
    clear_caches()
    with SchemaRegistryDouble(tmp_path) as double:
        double.add(GOOD, json.dumps(ORDER))
        yield double
    clear_caches()


@pytest.fixture
def no_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """The by-id request without azure-core's retries and their back-off (seconds each)."""
    monkeypatch.setattr(schema_registry, "RETRY", {"retry_total": 0})
    clear_caches()


def _decode(registry: SchemaRegistryDouble, ids: list[str], **options: str) -> pa.RecordBatch:
    config = avro_source(ORDER, **registry.options(), **options)
    types = [f"avro/binary+{i}" for i in ids]
    return decode_batch(config, received([BODY] * len(ids)), types)


def _error(registry: SchemaRegistryDouble, schema_id: str) -> str:
    """The corrupt-record error of one event naming ``schema_id`` (PERMISSIVE)."""
    (row,) = _decode(registry, [schema_id], mode="PERMISSIVE").to_pylist()
    assert row["body"] is None
    return str(row["_corrupt_record"]["error"])


def test_an_unknown_schema_id_is_a_bad_record_whatever_the_mode(
    registry: SchemaRegistryDouble, tmp_path: Path
) -> None:
    # Before, a 404 stopped the query whatever mode said, on every restart.
    registry.answers["b" * 32] = Answer(400, b'{"error": {"code": "BadRequest"}}', "text/json")
    registry.answers["c" * 32] = Answer(410, b"")
    ids = [GOOD, UNKNOWN, "b" * 32, "c" * 32, "../$schemaGroups"]

    rows = _decode(registry, ids, mode="PERMISSIVE").to_pylist()
    assert rows[0]["body"] == {"id": 7, "customer": "c7"}
    assert rows[0]["_corrupt_record"] is None
    errors = [r["_corrupt_record"]["error"] for r in rows[1:]]
    assert [r["body"] for r in rows[1:]] == [None] * 4
    assert f"has no schema {UNKNOWN} (HTTP 404" in errors[0]
    assert f"has no schema {'b' * 32} (HTTP 400" in errors[1]
    assert f"has no schema {'c' * 32} (HTTP 410" in errors[2]
    assert "is not a registry id" in errors[3]  # never sent as a path

    dropped = _decode(registry, ids, mode="DROPMALFORMED").to_pylist()
    assert [r["sequenceNumber"] for r in dropped] == [40]

    with pytest.raises(MalformedRecordError) as failed:
        _decode(registry, ids)  # FAILFAST
    assert "sequenceNumber 41 in partition 3" in str(failed.value)
    assert f"has no schema {UNKNOWN}" in str(failed.value)

    folder = tmp_path / "bad"
    kept = _decode(registry, ids, badRecordsPath=str(folder)).to_pylist()
    assert [r["sequenceNumber"] for r in kept] == [40]
    (written,) = folder.iterdir()
    lines = [json.loads(line) for line in written.read_text().splitlines()]
    assert [line["contentType"] for line in lines] == [f"avro/binary+{i}" for i in ids[1:]]
    assert f"has no schema {UNKNOWN}" in lines[0]["error"]

    # Four decodes of five events: each id asked once (the negative cache), the bad path never.
    assert registry.requests[("GET", "schema-by-id")] == 4


def test_a_missing_id_is_asked_again_after_its_time_so_a_schema_registered_later_is_found(
    registry: SchemaRegistryDouble, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1000.0]
    monkeypatch.setattr(schema_registry._MISSING, "clock", lambda: now[0])
    assert "HTTP 404" in _error(registry, UNKNOWN)
    registry.add(UNKNOWN, json.dumps(ORDER))
    now[0] += MISSING_SECONDS - 1
    assert "HTTP 404" in _error(registry, UNKNOWN)  # remembered: not asked again
    assert registry.requests[("GET", "schema-by-id")] == 1
    now[0] += 1
    (row,) = _decode(registry, [UNKNOWN]).to_pylist()
    assert row["body"] == {"id": 7, "customer": "c7"}
    assert registry.requests[("GET", "schema-by-id")] == 2


def test_the_negative_cache_is_bounded_in_entries_and_in_time(
    registry: SchemaRegistryDouble,
) -> None:
    # (The registry of process caches itself: tests/core/test_process_caches.py.)
    missing = schema_registry._MISSING
    assert missing.max_age_s == MISSING_SECONDS
    for i in range(schema_registry.MISSING_IDS + 1):
        missing.put(("ns", str(i)), f"no {i}")
    assert len(missing) == schema_registry.MISSING_IDS == 1024
    assert missing.get(("ns", "0")) is None and missing.get(("ns", "1")) == "no 1"


@pytest.mark.usefixtures("no_retries")
@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (Answer(401, b""), "refused our credential getting schema"),
        (Answer(403, b'{"error": "Forbidden"}', "application/json"), "Schema Registry Reader"),
        (Answer(429, b""), "did not answer for schema"),
        (Answer(503, b"down", "text/plain"), "did not answer for schema"),
    ],
    ids=["401", "403", "429", "503"],
)
def test_a_registry_that_refuses_us_or_fails_stops_the_query_whatever_the_mode(
    registry: SchemaRegistryDouble, answer: Answer, expected: str
) -> None:
    registry.answers[UNKNOWN] = answer
    with pytest.raises(SchemaRegistryError) as failed:
        _decode(registry, [GOOD, UNKNOWN], mode="DROPMALFORMED")
    message = str(failed.value)
    assert expected in message and f"HTTP {answer.status}" in message
    assert f"schema registry {registry.host} group orders at https://{registry.host}" in message
    assert CLIENT_SECRET not in message


@pytest.mark.usefixtures("no_retries")
def test_no_token_or_no_registry_stops_the_query_saying_what_to_check(
    registry: SchemaRegistryDouble,
) -> None:
    config = avro_source(ORDER, **{**registry.options(), "clientSecret": "wrong-secret-xyz"})
    with pytest.raises(SchemaRegistryError) as refused:
        decode_batch(config, received([BODY]), [f"avro/binary+{GOOD}"])
    message = str(refused.value)
    assert "could not get an Entra ID token" in message
    assert "check tenantId, clientId and clientSecret" in message
    assert "wrong-secret-xyz" not in message and CLIENT_SECRET not in message

    # Tokens from the double's authority, the registry on a port where nothing listens.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{probe.getsockname()[1]}"
    options = {**registry.options(), "schemaRegistry.fullyQualifiedNamespace": closed}
    config = avro_source(ORDER, **options, mode="PERMISSIVE")
    with pytest.raises(SchemaRegistryError) as unreachable:
        decode_batch(config, received([BODY]), [f"avro/binary+{UNKNOWN}"])
    message = str(unreachable.value)
    assert f"could not be reached at https://{closed}" in message
    assert "check schemaRegistry.fullyQualifiedNamespace, the network" in message
    assert CLIENT_SECRET not in message


def _nested_records(depth: int) -> dict[str, Any]:
    inner: Any = "long"
    for level in range(depth):
        inner = {"type": "record", "name": f"R{level}", "fields": [{"name": "x", "type": inner}]}
    return inner  # type: ignore[no-any-return]


def _doubling(level: int) -> dict[str, Any]:
    """Record L<n> has two fields of type L<n-1>: 2^n types once expanded, in n lines."""
    if level == 0:
        return {"type": "record", "name": "L0", "fields": []}
    below = [{"name": "a", "type": _doubling(level - 1)}, {"name": "b", "type": f"L{level - 1}"}]
    return {"type": "record", "name": f"L{level}", "fields": below}


RECURSIVE = {
    "type": "record",
    "name": "Node",
    "fields": [{"name": "next", "type": ["null", "Node"]}],
}
HOSTILE = {
    "html": (Answer(200, b"<html>sign in</html>", "text/html"), "is 'text/html', not an Avro"),
    "json-schema": (
        Answer(200, b'{"type": "object"}', "application/json;serialization=Json"),
        "not an Avro schema",
    ),
    "not-json": (Answer(200, b'{"type": "record"'), "not valid JSON"),
    "not-utf8": (Answer(200, b'"\xff\xfe"'), "is not UTF-8 text"),
    "deep-json": (Answer(200, b"[" * 100_000 + b"]" * 100_000), "JSON nested deeper than 256"),
    "deep-types": (Answer(200, json.dumps(_nested_records(70)).encode()), "deeper than 64"),
    "doubling": (
        Answer(200, json.dumps(_doubling(40)).encode()),
        "expands to more than 100000 types",
    ),
    "recursive": (Answer(200, json.dumps(RECURSIVE).encode()), "Node contains itself"),
    "huge": (Answer(200, b" " * (2 * MAX_SCHEMA_BYTES)), f"larger than {MAX_SCHEMA_BYTES}"),
    "endless": (Answer(200, None), f"larger than {MAX_SCHEMA_BYTES} bytes"),
}


@pytest.mark.timeout(60)  # before, the endless answer was read until memory ran out
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_an_answer_that_is_no_usable_avro_schema_is_a_bad_record_and_read_no_further(
    registry: SchemaRegistryDouble, case: str
) -> None:
    answer, expected = HOSTILE[case]
    registry.answers[UNKNOWN] = answer
    error = _error(registry, UNKNOWN)
    assert expected in error, error
    assert "MalformedRecordError" in error and "Traceback" not in error
    assert f"schema {UNKNOWN}" in error
    with pytest.raises(MalformedRecordError):
        _decode(registry, [UNKNOWN])  # FAILFAST: the one documented outcome
    assert registry.requests[("GET", "schema-by-id")] == 1  # remembered as missing
    if answer.body is None:
        assert registry.endless_bytes < 8 * MAX_SCHEMA_BYTES, registry.endless_bytes
