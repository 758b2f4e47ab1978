"""What every stream reader owes the engine, checked on the three sources alike, in process.

Each reader is built from options through its data source (``DataSource.streamReader``, as
Spark builds it at query start) and driven through its public calls only: ``initialOffset``,
``latestOffset``, ``partitions``, ``read``, ``commit``. The contract:

- offsets are canonical JSON: ``json.dumps`` (what Spark stores) gives the same text as
  ``json.dumps(sort_keys=True)``, and a compact sorted dump reads back equal; Spark compares
  offsets as strings, so a reordered key would look like new data;
- ``initialOffset`` and, with nothing new, ``latestOffset`` give the same answer when asked again
  (Spark asks more than once while it plans a batch);
- partitions survive pickling (they travel to the executors) and a copy reads the same rows;
- an offset the reader did not write, as a hand edit of the checkpoint leaves it, raises
  :class:`~pysparksources.errors.OffsetError` naming the checkpoint file (docs/errors.md),
  never a KeyError or TypeError. A well-formed value of the wrong identity (pyfile's ``logId``
  of another source log) may raise its parent :class:`~pysparksources.errors.CheckpointError`,
  which names the setting to restore.

pyrate and pyfile (on ``memory://``) need no server; pyeventhub runs against the emulator.
"""

from __future__ import annotations

import json
import pickle
import time
from collections.abc import Callable, Iterator
from typing import Any

import fsspec
import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from pysparksources.errors import CheckpointError, OffsetError
from pysparksources.eventhubs.datasource import EventHubDataSource
from pysparksources.files.datasource import FileDataSource
from pysparksources.rate.datasource import RateDataSource
from support.eventhubs import send
from support.memory_fs import memory_root

__all__ = ["memory_root"]  # a fixture the tests below take

Offset = dict[str, Any]


def _canonical(offset: Any, what: str) -> None:
    assert isinstance(offset, dict), f"{what}: {offset!r} is not a JSON object"
    stored = json.dumps(offset)
    assert stored == json.dumps(offset, sort_keys=True), f"{what}: keys not sorted: {stored}"
    compact = json.dumps(offset, sort_keys=True, separators=(",", ":"))
    assert json.loads(compact) == offset, f"{what}: {stored} does not survive JSON"


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _leaves(inner, (*path, key))
    else:
        yield path


def _replaced(offset: Offset, path: tuple[Any, ...], value: Any) -> Offset:
    copy: Offset = json.loads(json.dumps(offset))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return copy


def corruptions(offset: Offset) -> list[tuple[Any, type[CheckpointError]]]:
    """Offsets this reader never wrote, with the error each must raise: empty, a foreign key,
    and each of ``offset``'s values turned into a fraction, null, a list (OffsetError) or other
    text (an identity pyfile's log id may hold: CheckpointError), as hand edits leave them."""
    bad: list[tuple[Any, type[CheckpointError]]] = [
        (value, OffsetError) for value in ({}, {"unexpected": 1}, [], "0")
    ]
    for path in _leaves(offset):
        bad += [(_replaced(offset, path, value), OffsetError) for value in (1.5, None, [1])]
        bad.append((_replaced(offset, path, "7"), CheckpointError))
    return bad


def check_contract(reader: Any, rows: Callable[[Any, list[Any]], list[Any]]) -> None:
    """Drive ``reader`` as Spark does for one AvailableNow batch and check the contract."""
    try:
        initial = reader.initialOffset()
        reader.prepareForTriggerAvailableNow()
        _canonical(initial, "initialOffset")
        assert reader.initialOffset() == initial, "initialOffset moved between two calls"
        limit = reader.getDefaultReadLimit()
        end = reader.latestOffset(initial, limit)
        _canonical(end, "latestOffset")
        assert end != initial, "the batch under test is empty"
        assert reader.latestOffset(initial, limit) == end, "latestOffset moved, nothing new"

        parts = reader.partitions(initial, end)
        copies = [pickle.loads(pickle.dumps(part)) for part in parts]
        read = rows(reader, parts)
        assert read, "the batch under test read no rows"
        assert rows(reader, copies) == read, "a pickled partition reads other rows"
        reader.commit(end)
        assert reader.latestOffset(end, limit) == end, "latestOffset moved past the end"

        for bad, error in corruptions(end):
            for name, args in (("latestOffset", (bad, limit)), ("partitions", (bad, end))):
                with pytest.raises(error) as caught:
                    getattr(reader, name)(*args)
                if error is OffsetError:
                    assert "offsets/<batchId>" in str(caught.value), (name, bad, caught.value)
    finally:
        reader.stop()


def _sorted_rows(reader: Any, parts: list[Any]) -> list[Any]:
    rows = [row for part in parts for batch in reader.read(part) for row in batch.to_pylist()]
    return sorted(rows, key=repr)


def test_pyrate_batch_mode() -> None:
    source = RateDataSource({"rowsPerBatch": "7", "numPartitions": "2"})
    check_contract(source.streamReader(source.schema()), _sorted_rows)


def test_pyrate_time_mode() -> None:
    """Time mode's first offset holds the stream's creation time; a second later it has rows."""
    source = RateDataSource({"rowsPerSecond": "5", "numPartitions": "2"})
    reader = source.streamReader(source.schema())
    reader.initialOffset()
    time.sleep(1.1)
    check_contract(reader, _sorted_rows)


def test_pyfile(memory_root: str) -> None:
    fs = fsspec.filesystem("memory")
    for name in ("a", "b"):
        fs.pipe_file(f"{memory_root}/in/{name}.json", b'{"id": 1, "name": "x"}\n')
    schema = StructType([StructField("id", LongType()), StructField("name", StringType())])
    source = FileDataSource(
        {
            "format": "json",
            "path": f"memory://{memory_root}/in",
            "sourceLogLocation": f"memory://{memory_root}/log",
        }
    )
    check_contract(source.streamReader(schema), _sorted_rows)


def test_pyeventhub(eventhubs_emulator: Any) -> None:
    conn = eventhubs_emulator.connection_string("test")
    send(conn, ["a", "b"], partition_id="0")
    send(conn, ["c"], partition_id="1")
    source = EventHubDataSource({"connectionString": conn, "startingPosition": "start"})

    def rows(reader: Any, parts: list[Any]) -> list[Any]:
        return [
            (r["partition"], r["sequenceNumber"], r["body"]) for r in _sorted_rows(reader, parts)
        ]

    check_contract(source.streamReader(source.schema()), rows)
