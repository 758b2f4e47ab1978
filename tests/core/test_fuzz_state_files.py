"""Fuzzing the small state files read back from storage, beside test_fuzz_checkpoints.py.

pyfile's source log keeps ``lease.json``, ``identity.json``, ``claimed.json`` and
``cleaned.json`` beside its batch files; the schema location keeps ``_schemas/<n>``; the
migrate command reads Spark's checkpoint (``offsets/<n>``, ``sources/<i>/0``). Whatever such a
file holds, and whatever files a folder holds, reading it gives a value of the right type or a
:class:`CheckpointError` naming the file: never KeyError, TypeError, AttributeError,
RecursionError, ImportError or an ``int()`` failure. Everything runs on fsspec's in-memory
filesystem (one folder per test, cleared for each example) or a temporary folder.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pyspark.sql.types import StructType

from pysparksources._core.checkpoint import Checkpoint
from pysparksources.errors import CheckpointError, SourceLogInUseError
from pysparksources.eventhubs._migrate import parse_connector_offset
from pysparksources.files.schema.store import SchemaStore
from pysparksources.files.source.source_log import SourceLog
from pysparksources.files.storage.filesystem import resolve
from support.json_values import JSONISH, SCALARS

DEEP = "[" * 100_000  # json.loads: RecursionError
# Names that str.isdigit() takes for digits: "²" then fails int(), "٣" and a full-width one
# are int() 3 and 1.
# "07" is not batch 7's file either, and int() refuses over 4,300 digits.
DIGITS = st.text(alphabet="0123456789²٣\uff11", min_size=1, max_size=4)
MEMORY_DIGITS = DIGITS | st.just("9" * 5000)  # longer than a local file name may be


def _batch(name: str) -> int | None:
    """What a name numbers: Spark's spelling of a batch id, nothing else."""
    ok = name.isascii() and name.isdigit() and len(name) < 20 and str(int(name)) == name
    return int(name) if ok else None


def _memory(name: str) -> tuple[Any, Any]:
    """A fresh in-memory folder: (its FileLocation, the filesystem)."""
    location = resolve(f"memory://state-fuzz/{name}", {})
    fs = location.filesystem()
    if fs.exists(location.path):
        fs.rm(location.path, recursive=True)
    fs.makedirs(location.path, exist_ok=True)
    return location, fs


def _json_or_bytes(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[bytes]:
    return st.one_of(
        strategy.map(lambda v: json.dumps(v).encode()),
        JSONISH.map(lambda v: json.dumps(v).encode()),
        st.binary(max_size=20),
    )


# -- the source log's small files ---------------------------------------------------------
LEASE = st.fixed_dictionaries(
    {"host": SCALARS, "owner": SCALARS, "pid": SCALARS, "renewedMs": SCALARS}
)


@settings(max_examples=40)  # each acquire waits 50 ms to see the lease it wrote
@given(_json_or_bytes(LEASE))
@example(b"[1, 2]")  # .get on a list was an AttributeError
@example(b'{"host": "h", "owner": "o", "pid": "12", "renewedMs": 0}')
@example(b'{"host": "h", "owner": "o", "pid": 1, "renewedMs": "soon"}')  # int("soon")
@example(DEEP.encode())
@example(b'{"host": "h", "owner": "o", "pid": 1')  # a write cut short: no lease
def test_lease_files(data: bytes) -> None:
    location, fs = _memory("lease")
    fs.pipe_file(f"{location.path}/lease.json", data)
    log = SourceLog(location)
    try:
        log.acquire(60)
    except SourceLogInUseError:
        return  # a lease record of a live owner, as a real one would be
    except CheckpointError as error:
        assert "memory:///state-fuzz/lease/lease.json" in str(error)
        assert "delete it once no query uses this source log" in str(error)
        log.release()  # never raises, and leaves the damaged lease for the user
        assert fs.cat_file(f"{location.path}/lease.json") == data
        return
    log.release()
    assert not fs.exists(f"{location.path}/lease.json")


def test_a_live_lease_still_refuses_a_second_query() -> None:
    location, fs = _memory("live")
    record = {
        "host": socket.gethostname(),
        "owner": "another",
        "pid": os.getpid(),
        "renewedMs": int(time.time() * 1000),
    }
    fs.pipe_file(f"{location.path}/lease.json", json.dumps(record).encode())
    with pytest.raises(SourceLogInUseError, match="in use by another running query"):
        SourceLog(location).acquire(60)


IDENTITY = st.fixed_dictionaries({"logId": SCALARS}, optional={"createdMs": SCALARS})
CLEANED = st.fixed_dictionaries({"cleanedThrough": SCALARS})


@given(_json_or_bytes(IDENTITY), _json_or_bytes(CLEANED), _json_or_bytes(JSONISH))
@example(b'{"logId": null}', b'{"cleanedThrough": 2e40}', b"[]")  # logId None: no id at all
@example(b'{"logId": 12}', b'{"cleanedThrough": true}', b"{}")  # str(12) was taken as an id
@example(b'{"logId": ["a"]}', b'{"cleanedThrough": -7}', b'"x"')
@example(DEEP.encode(), DEEP.encode(), DEEP.encode())
def test_identity_claimed_and_cleaned_files(
    identity: bytes, cleaned: bytes, claimed: bytes
) -> None:
    location, fs = _memory("identity")
    for name, data in (("identity", identity), ("cleaned", cleaned), ("claimed", claimed)):
        fs.pipe_file(f"{location.path}/{name}.json", data)
    log = SourceLog(location)
    for name, read in (
        ("identity", log.identity),
        ("cleaned", log.cleaned_through),
        ("claimed", log.is_claimed),
    ):
        try:
            value = read()
        except CheckpointError as error:
            assert f"memory:///state-fuzz/identity/{name}.json" in str(error)
            continue
        if name == "identity":
            assert isinstance(value, str) and 0 < len(value) <= 256
        elif name == "cleaned":
            assert isinstance(value, int) and not isinstance(value, bool) and value >= -1
        else:
            assert value is True


def test_an_identity_that_vanishes_while_it_is_created_names_the_file() -> None:
    """create_identity loses the race, then the winner's file is gone (or holds no id): under
    ``python -O`` the old ``assert`` let None through as the log's id."""
    location, fs = _memory("race")
    log = SourceLog(location)
    fs.pipe_file(f"{location.path}/identity.json", b'{"logId": null}')
    with pytest.raises(CheckpointError, match=r"identity\.json holds null, not a log id"):
        log.create_identity()

    class Vanishing(SourceLog):
        def identity(self) -> str | None:
            fs.rm(f"{location.path}/identity.json")
            return super().identity()

    fs.pipe_file(f"{location.path}/identity.json", b'{"logId": "abc"}')
    with pytest.raises(CheckpointError, match="was deleted while this query created it"):
        Vanishing(location).create_identity()


@given(st.lists(MEMORY_DIGITS.map(lambda d: d + ".compact") | MEMORY_DIGITS, max_size=4))
@example(["²"])  # int("²") was a ValueError
@example(["٣"])  # was read as batch 3, whose file is named "3"
@example(["00.compact"])  # read as 0.compact, which is not there
def test_file_names_in_a_source_log_folder(names: list[str]) -> None:
    location, fs = _memory("names")
    for name in names:
        fs.pipe_file(f"{location.path}/{name}", b"v1\n")
    log = SourceLog(location)
    numbers = [_batch(name.split(".")[0]) for name in names]
    assert log.latest_batch_id() == max((n for n in numbers if n is not None), default=-1)
    assert log.restore() == []


# -- schema versions ----------------------------------------------------------------------
SIMPLE = st.sampled_from(["long", "string", "decimal(3,1)", "decimal(99,1)", "nope", "udt"])
TYPE = st.recursive(
    SIMPLE | SCALARS,
    lambda inner: st.fixed_dictionaries(
        {"type": st.sampled_from(["array", "map", "struct", "udt"]) | SCALARS},
        optional={
            "elementType": inner,
            "containsNull": SCALARS,
            "keyType": inner,
            "valueType": inner,
            "valueContainsNull": SCALARS,
            "fields": st.lists(inner, max_size=2),
            "pyClass": SCALARS,
            "sqlType": inner,
        },
    ),
    max_leaves=8,
)
FIELD = st.fixed_dictionaries(
    {"name": SCALARS, "type": TYPE}, optional={"nullable": SCALARS, "metadata": JSONISH}
)
SCHEMA = st.fixed_dictionaries(
    {"type": st.just("struct") | SCALARS, "fields": st.lists(FIELD, max_size=3) | SCALARS}
)
VERSION = st.fixed_dictionaries({"schema": SCHEMA}, optional={"reason": SCALARS})
PROBE = "pysparksources_state_fuzz_probe"  # a module a version file must never make us import
UDT = {"type": "udt", "pyClass": f"{PROBE}.Probe", "sqlType": "long", "class": "x"}


def _nested(depth: int) -> dict[str, Any]:
    inner: Any = "long"
    for _ in range(depth):
        inner = {"type": "array", "elementType": inner, "containsNull": True}
    return {"schema": {"type": "struct", "fields": [{"name": "a", "type": inner}]}}


@given(_json_or_bytes(VERSION))
@example(
    json.dumps({"schema": {"type": "struct", "fields": [{"name": "u", "type": UDT}]}}).encode()
)
@example(json.dumps(_nested(900)).encode())  # fromJson: RecursionError
@example(b'{"schema": {"type": "struct", "fields": [{"name": 1, "type": "long"}]}}')  # assert
@example(b'{"schema": {"type": "struct", "fields": "ab"}}')  # AttributeError
@example(b'{"schema": {"type": "struct", "fields": []}, "reason": ["x"]}')
def test_schema_versions(data: bytes) -> None:
    location, fs = _memory("schemas")
    fs.pipe_file(f"{location.path}/_schemas/3", data)
    try:
        version = SchemaStore(location).latest()
    except CheckpointError as error:
        assert "schema version 3 in memory:///state-fuzz/schemas/_schemas" in str(error)
        assert PROBE not in sys.modules
        return
    assert version is not None and isinstance(version.schema, StructType)
    assert isinstance(version.reason, str)
    version.schema.simpleString()


def test_a_deep_but_valid_schema_version_reads() -> None:
    location, fs = _memory("deep-ok")
    fs.pipe_file(f"{location.path}/_schemas/0", json.dumps(_nested(40)).encode())
    version = SchemaStore(location).latest()
    assert version is not None and version.schema.simpleString().count("array<") == 40


@given(st.lists(MEMORY_DIGITS, max_size=3, unique=True))
@example(["²", "1"])
@example(["00"])
def test_schema_version_names(names: list[str]) -> None:
    location, fs = _memory("schema-names")
    body = json.dumps({"schema": {"type": "struct", "fields": []}}).encode()
    for name in names:
        fs.pipe_file(f"{location.path}/_schemas/{name}", body)
    version = SchemaStore(location).latest()
    numbers = [n for n in map(_batch, names) if n is not None]
    assert (version.number if version else None) == (max(numbers) if numbers else None)


# -- a Structured Streaming checkpoint (eventhubs migrate-checkpoint) ---------------------
CHECKPOINT_LINES = st.lists(
    st.one_of(
        st.sampled_from(["v1", "v2", "v²", "v" + "9" * 5000, "-", ""]),
        JSONISH.map(json.dumps),
        st.text(max_size=20),
    ),
    max_size=4,
)


@given(st.lists(DIGITS, max_size=3, unique=True), CHECKPOINT_LINES)
@example(["²"], ["v1", "{}", "-"])  # int("²") was a ValueError
@example(["0"], ["v²", "{}"])  # the version line: int("²") too
def test_checkpoint_offset_logs(names: list[str], lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        offsets = Path(folder) / "offsets"
        offsets.mkdir()
        for name in names:
            (offsets / name).write_text("\n".join(lines))
        checkpoint = Checkpoint(folder)
        for batch in checkpoint.batch_ids("offsets"):
            assert (offsets / str(batch)).exists()
            try:
                entry = checkpoint.offsets(batch)
            except CheckpointError as error:
                assert f"offsets/{batch}" in str(error)
                continue
            for source in entry.sources:
                parsed = parse_connector_offset(source or "")
                assert parsed is None or all(
                    pid.isdigit() and seq >= 0
                    for hub in parsed.values()
                    for pid, seq in hub.items()
                )


@given(
    st.one_of(
        st.dictionaries(st.text(max_size=4), st.dictionaries(DIGITS, SCALARS, max_size=2)),
        JSONISH,
    ).map(json.dumps)
)
@example('{"hub": {"²": 5}}')  # int("²") was a ValueError
@example(DEEP)  # RecursionError
def test_connector_offsets(text: str) -> None:
    parsed = parse_connector_offset(text)
    if parsed is not None:
        for hub in parsed.values():
            assert all(pid == str(int(pid)) and seq >= 0 for pid, seq in hub.items())
