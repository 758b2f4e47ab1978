"""The source's engine calls driven in-process on memory:// (no JVM: memory:// lives in one
process, so Spark's separate Python workers could not see it)."""

from __future__ import annotations

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from pysparksources._core.compat import ReadAllAvailable, ReadMaxFiles
from pysparksources.errors import SourceLogInUseError
from pysparksources.files.reader import FileStreamReader
from support.memory_fs import memory_root
from support.pyfile_source import stream_reader

__all__ = ["memory_root"]  # a fixture the tests below take
SCHEMA = StructType([StructField("id", LongType()), StructField("name", StringType())])


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


def options(memory_root: str, **extra: str) -> dict[str, str]:
    return {
        "path": f"memory://{memory_root}/in",
        "sourceLogLocation": f"memory://{memory_root}/log",
        **extra,
    }


def test_stream_on_memory_filesystem_with_replay_and_restart(memory_root: str) -> None:
    for i in range(3):
        put(f"{memory_root}/in/f{i}.parquet", range(i * 10, i * 10 + 10))
    reader = stream_reader(options(memory_root, maxFilesPerTrigger="2"), SCHEMA)
    start = reader.initialOffset()
    end = reader.latestOffset(start, reader.getDefaultReadLimit())
    assert end["logOffset"] == 0 and list(end) == ["logId", "logOffset"]
    first = rows(reader, start, end)
    assert len(first) == 20
    # A second live reader on the same log is refused.
    with pytest.raises(SourceLogInUseError, match="in use by another running query"):
        stream_reader(options(memory_root), SCHEMA).latestOffset(start, ReadAllAvailable())
    reader.stop()

    # "Crash" after the offset was planned: a new run replays batch 0 with the same files.
    again = stream_reader(options(memory_root, maxFilesPerTrigger="2"), SCHEMA)
    assert rows(again, start, end) == first
    nxt = again.latestOffset(end, ReadMaxFiles(2))
    assert nxt == {"logId": end["logId"], "logOffset": 1}
    assert rows(again, end, nxt) == list(range(20, 30))
    assert again.latestOffset(nxt, ReadMaxFiles(2)) == nxt
    again.stop()


def test_available_now_freezes_the_listing(memory_root: str) -> None:
    put(f"{memory_root}/in/a.parquet", range(3))
    reader = stream_reader(options(memory_root), SCHEMA)
    reader.prepareForTriggerAvailableNow()
    put(f"{memory_root}/in/b.parquet", range(3, 6))
    start = reader.initialOffset()
    end = reader.latestOffset(start, ReadAllAvailable())
    assert rows(reader, start, end) == [0, 1, 2]
    assert reader.latestOffset(end, ReadAllAvailable()) == end
    reader.stop()
