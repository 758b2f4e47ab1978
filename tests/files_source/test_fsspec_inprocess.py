"""The source's engine calls driven in-process on memory:// (no JVM: memory:// lives in one
process, so Spark's separate Python workers could not see it)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxFiles
from pyspark.sql.types import LongType, StringType, StructField, StructType

from pysparksources.files.source import FileStreamReader
from pysparksources.files.source_log import SourceLogInUse

SCHEMA = StructType([StructField("id", LongType()), StructField("name", StringType())])


@pytest.fixture
def root() -> Iterator[str]:
    path = f"/pyfile-{uuid.uuid4().hex}"
    yield path
    fs = fsspec.filesystem("memory")
    if fs.exists(path):
        fs.rm(path, recursive=True)


def put(path: str, ids: range) -> None:
    fs = fsspec.filesystem("memory")
    with fs.open(path, "wb") as f:
        pq.write_table(pa.table({"id": list(ids), "name": [str(i) for i in ids]}), f)


def rows(reader: FileStreamReader, start: dict[str, int], end: dict[str, int]) -> list[int]:
    out: list[int] = []
    for part in reader.partitions(start, end):
        for batch in reader.read(part):
            assert batch.schema == pa.schema([("id", pa.int64()), ("name", pa.string())])
            out.extend(batch.column(0).to_pylist())
    return sorted(out)


def options(root: str, **extra: str) -> dict[str, str]:
    return {"path": f"memory://{root}/in", "sourceLogLocation": f"memory://{root}/log", **extra}


def test_stream_on_memory_filesystem_with_replay_and_restart(root: str) -> None:
    for i in range(3):
        put(f"{root}/in/f{i}.parquet", range(i * 10, i * 10 + 10))
    reader = FileStreamReader(options(root, maxFilesPerTrigger="2"), SCHEMA)
    start = reader.initialOffset()
    end = reader.latestOffset(start, reader.getDefaultReadLimit())
    assert end["logOffset"] == 0 and list(end) == ["logId", "logOffset"]
    first = rows(reader, start, end)
    assert len(first) == 20
    # A second live reader on the same log is refused.
    with pytest.raises(SourceLogInUse):
        FileStreamReader(options(root), SCHEMA).latestOffset(start, ReadAllAvailable())
    reader.stop()

    # "Crash" after the offset was planned: a new run replays batch 0 with the same files.
    again = FileStreamReader(options(root, maxFilesPerTrigger="2"), SCHEMA)
    assert rows(again, start, end) == first
    nxt = again.latestOffset(end, ReadMaxFiles(2))
    assert nxt == {"logId": end["logId"], "logOffset": 1}
    assert rows(again, end, nxt) == list(range(20, 30))
    assert again.latestOffset(nxt, ReadMaxFiles(2)) == nxt
    again.stop()


def test_available_now_freezes_the_listing(root: str) -> None:
    put(f"{root}/in/a.parquet", range(3))
    reader = FileStreamReader(options(root), SCHEMA)
    reader.prepareForTriggerAvailableNow()
    put(f"{root}/in/b.parquet", range(3, 6))
    start = reader.initialOffset()
    end = reader.latestOffset(start, ReadAllAvailable())
    assert rows(reader, start, end) == [0, 1, 2]
    assert reader.latestOffset(end, ReadAllAvailable()) == end
    reader.stop()
