"""Fuzzing what the sources read back from storage: offsets, pyfile's source log, manifests
(the small state files beside them: test_fuzz_state_files.py).

An offset Spark hands back from the checkpoint (a hand edit, another source's offset) must
give :class:`OffsetError` naming the checkpoint file; a damaged source-log or manifest line
a :class:`CheckpointError` naming its file. Never KeyError, TypeError, OverflowError or
RecursionError.
(Truncated offset JSON never reaches the source: PySpark's runner parses it first, see
docs/errors.md.)
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from pysparksources._core.compat import ReadAllAvailable
from pysparksources._core.option_table import Use
from pysparksources.errors import CheckpointError, LimitExceededError, OffsetError
from pysparksources.eventhubs.options import parse_options as eventhubs_parse
from pysparksources.eventhubs.reader import _positions_of
from pysparksources.files.offsets import LogOffset
from pysparksources.files.sink.manifest import parse_manifest
from pysparksources.files.source.source_log import _parse as parse_source_log
from pysparksources.rate.config import RateConfig
from pysparksources.rate.options import parse_options
from pysparksources.rate.reader import RateStreamReader
from support.json_values import JSONISH, SCALARS


def stream_config(raw: dict[str, str]) -> RateConfig:
    """pyrate's config for a readStream with these options."""
    return parse_options(raw, Use.STREAM_READ)


def _offsets(keys: list[str]) -> st.SearchStrategy[Any]:
    """Offsets near the real ones (the right keys, odd values) and anything at all."""
    near = st.fixed_dictionaries({k: SCALARS for k in keys})
    return st.one_of(near, st.dictionaries(st.sampled_from([*keys, "x"]), SCALARS), JSONISH)


TIME_MODE = RateStreamReader(stream_config({"rowsPerSecond": "5", "numPartitions": "2"}))
BATCH_MODE = RateStreamReader(stream_config({"rowsPerBatch": "5", "numPartitions": "2"}))


def _named_checkpoint(error: OffsetError) -> None:
    assert "<checkpointLocation>/offsets/<batchId>" in str(error)


@given(_offsets(["createdMs", "second", "value"]), _offsets(["offset", "timestamp"]))
@example({"createdMs": "0", "second": 1, "value": 3}, {"offset": 1.5, "timestamp": 0})
@example({"createdMs": True, "second": 1, "value": 3}, {"offset": None, "timestamp": 0})
@example({"createdMs": 0, "second": 2**70, "value": 3}, {"offset": -1, "timestamp": 0})
def test_pyrate_offsets(time_offset: Any, batch_offset: Any) -> None:
    for reader, offset in ((TIME_MODE, time_offset), (BATCH_MODE, batch_offset)):
        try:
            reader.partitions(offset, offset)
            reader.latestOffset(offset, ReadAllAvailable())
        except OffsetError as error:
            _named_checkpoint(error)
        except LimitExceededError as error:  # a valid offset past the 64-bit row count
            assert "overflows a 64-bit long" in str(error)


@given(st.one_of(_offsets(["logOffset"]), _offsets(["logId", "logOffset"])))
@example({"logOffset": "3"})
@example({"logOffset": [3]})  # int([3]) was a TypeError
@example({"logOffset": float("inf")})  # int(inf) was an OverflowError
def test_pyfile_offsets(offset: Any) -> None:
    try:
        parsed = LogOffset.from_json(offset)
        position, log_id = parsed.batch_id, parsed.log_id
        assert position >= -1
        assert log_id is None or isinstance(log_id, str)
    except OffsetError as error:
        _named_checkpoint(error)


EH_CONFIG = eventhubs_parse(
    {"connectionString": "Endpoint=sb://h/;SharedAccessKeyName=n;SharedAccessKey=k;EntityPath=hub"},
    Use.STREAM_READ,
    None,
)


@given(st.one_of(st.dictionaries(st.just("hub"), _offsets(["0", "1"])), JSONISH))
@example({"hub": {"0": "5"}})  # was accepted through int("5")
@example({"hub": {"0": 1.5}})
@example({"hub": {"zero": 5}})
@example({"hub": {"0": None}})  # int(None) was a TypeError
def test_pyeventhub_offsets(offset: Any) -> None:
    try:
        positions = _positions_of(EH_CONFIG, offset)
    except OffsetError as error:
        _named_checkpoint(error)
        return
    assert all(k.isdigit() and v >= 0 for k, v in positions.items())


ENTRY = st.fixed_dictionaries(
    {"path": SCALARS, "timestamp": SCALARS, "batchId": SCALARS},
    optional={"size": SCALARS},
)
LINES = st.lists(
    st.one_of(ENTRY.map(json.dumps), JSONISH.map(json.dumps), st.text(max_size=30)), max_size=4
)


@given(st.sampled_from(["v1", "v2", ""]), LINES)
@example("v1", ['{"path": "a", "timestamp": "1", "batchId": 0}'])  # was int("1")
@example("v1", ["[" * 50_000])  # json.loads RecursionError
@example("v1", ['{"path": "a", "timestamp": 1}'])  # KeyError batchId
@example("v1", ['{"path": "a", "timestamp": 1, "batchId": -3}'])  # was taken as batch -3
@example("v1", ['{"path": "", "timestamp": 2e400, "batchId": 0}'])
@example("v1", ['{"path": "a", "timestamp": 1, "batchId": 0, "size": -9}'])
def test_source_log_files(version: str, lines: list[str]) -> None:
    text = "\n".join([version, *lines])
    try:
        entries = parse_source_log(text, "memory://log/7")
    except CheckpointError as error:
        assert "memory://log/7" in str(error)
        return
    for e in entries:
        assert isinstance(e.path, str) and e.path
        assert 0 <= e.batch_id < 2**63 and -(2**63) <= e.timestamp < 2**63 and e.size >= -1


SINK_ENTRY = st.fixed_dictionaries(
    {"path": SCALARS},
    optional={"size": SCALARS, "modificationTime": SCALARS, "action": SCALARS, "isDir": SCALARS},
)


@given(
    st.sampled_from([b"v1", b"v2", b""]),
    st.lists(
        st.one_of(SINK_ENTRY.map(json.dumps), JSONISH.map(json.dumps), st.text(max_size=30)),
        max_size=4,
    ).map(lambda lines: "\n".join(lines).encode()),
    st.binary(max_size=8),
)
@example(b"v1", b'{"path": "a", "size": Infinity}', b"")  # int(inf) was an OverflowError
@example(b"v1", b'"just a string"', b"")  # item["path"] on a str was a TypeError
@example(b"v1", b"", b"\xff\xfe")  # not UTF-8
@example(b"v1", b'{"path": "a", "size": "12"}', b"")  # was int("12")
@example(b"v1", b'{"path": "a", "isDir": "false"}', b"")  # was bool("false"): a folder
@example(b"v1", b'{"path": {"x": 1}}', b"")  # was str() of the object: a path
@example(b"v1", b'{"path": "a", "action": 5}', b"")
@example(b"v1", b'{"path": "a", "size": -1, "modificationTime": 1e30}', b"")
def test_manifest_files(version: bytes, body: bytes, tail: bytes) -> None:
    try:
        files = parse_manifest(version + b"\n" + body + tail, "file:///out/_spark_metadata/3")
    except CheckpointError as error:
        assert "file:///out/_spark_metadata/3" in str(error)
        return
    for f in files:
        assert isinstance(f.path, str) and f.path and isinstance(f.is_dir, bool)
        assert type(f.size) is int and 0 <= f.size < 2**63 and f.action in ("add", "delete")
        assert type(f.modification_time) is int and abs(f.modification_time) <= 2**63
