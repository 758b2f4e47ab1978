"""The sink's engine calls driven in-process (no JVM): memory://, the manifest, escaping.

memory:// lives inside one process, so Spark's separate Python workers could not share it;
here write() and commit() run in this process, as Spark would call them, and the output is
read back through fsspec and pyarrow.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from pysparksources.files.sink.manifest import (
    ManifestLog,
    SinkFile,
    committed_files,
    file_uri,
    uri_to_url,
)
from pysparksources.files.storage.filesystem import resolve
from pysparksources.files.storage.partition_folders import escape
from pysparksources.files.writer import FilesWritten
from support.memory_fs import memory_root
from support.pyfile_sink import stream_writer

__all__ = ["memory_root"]  # a fixture the tests below take
SCHEMA = StructType([StructField("id", LongType()), StructField("tag", StringType())])


def batches(ids: range, size: int = 10) -> Iterator[pa.RecordBatch]:
    for start in range(ids.start, ids.stop, size):
        chunk = range(start, min(start + size, ids.stop))
        yield pa.record_batch(
            {"id": pa.array(chunk, pa.int64()), "tag": [f"t{i % 2}" for i in chunk]}
        )


def read_ids(urls: list[str]) -> list[int]:
    out: list[int] = []
    for url in urls:
        fs, path = fsspec.core.url_to_fs(url)
        with fs.open(path, "rb") as handle:
            out += pq.read_table(handle).column("id").to_pylist()
    return sorted(out)


def test_memory_stream_commit_replay_and_abort(memory_root: str) -> None:
    options = {
        "path": f"memory://{memory_root}/out",
        "partitionBy": "tag",
        "maxRecordsPerFile": "15",
    }
    writer = stream_writer(options, SCHEMA)
    first = writer.write(batches(range(0, 40)))
    assert isinstance(first, FilesWritten)
    assert len(first.files) == 4  # 20 rows per tag, 15 per file
    writer.commit([first], 0)
    assert committed_files(f"memory://{memory_root}/out") is not None
    assert read_ids(committed_files(f"memory://{memory_root}/out") or []) == list(range(40))
    # A replay of batch 0 (e.g. after a crash before Spark's commit log): nothing is added
    # and the replay's own files are deleted.
    again = stream_writer(options, SCHEMA)
    replay = again.write(batches(range(0, 40)))
    again.commit([replay], 0)
    fs = fsspec.filesystem("memory")
    assert not any(fs.exists(f"{memory_root}/out/{f.relative}") for f in replay.files)
    assert read_ids(committed_files(f"memory://{memory_root}/out") or []) == list(range(40))
    # An aborted batch leaves no files and no manifest entry.
    failed = again.write(batches(range(40, 60)))
    again.abort([failed, None], 1)
    assert not any(fs.exists(f"{memory_root}/out/{f.relative}") for f in failed.files)
    assert (
        ManifestLog(resolve(f"memory://{memory_root}/out/_spark_metadata")).latest_batch_id() == 0
    )
    # Manifest paths name the partition folders; the URL form opens with fsspec.
    urls = committed_files(f"memory://{memory_root}/out") or []
    assert all(u.startswith(f"memory://{memory_root}/out/tag=t") for u in urls)


def test_abort_also_deletes_files_of_its_batch_that_no_message_reported(memory_root: str) -> None:
    # A task that finishes just after its job failed has no message in abort(); its file is
    # found by the batch tag in its name. Other batches and hidden folders are left alone.
    writer = stream_writer({"path": f"memory://{memory_root}/out", "partitionBy": "tag"}, SCHEMA)
    writer.commit([writer.write(batches(range(0, 10)))], 0)
    fs = fsspec.filesystem("memory")
    late = [
        f"{memory_root}/out/tag=t0/part-00001-b1-{uuid.uuid4()}.c000.snappy.parquet",
        f"{memory_root}/out/part-00000-b1-{uuid.uuid4()}.c000.json",
    ]
    kept = [
        f"{memory_root}/out/tag=t1/part-00001-b11-{uuid.uuid4()}.c000.snappy.parquet",
        f"{memory_root}/out/_temporary/part-00000-b1-{uuid.uuid4()}.c000.json",
    ]
    for path in late + kept:
        fs.pipe(path, b"x")
    writer.abort([None, None], 1)
    assert [p for p in late if fs.exists(p)] == []
    assert [p for p in kept if fs.exists(p)] == kept
    # Batch 0 is in the manifest: an abort of its replay must not touch its live files.
    live = f"{memory_root}/out/tag=t0/part-00000-b0-{uuid.uuid4()}.c000.snappy.parquet"
    fs.pipe(live, b"x")
    writer.abort([None], 0)
    assert fs.exists(live)


def test_no_manifest_means_none(memory_root: str, tmp_path: Path) -> None:
    assert committed_files(f"memory://{memory_root}/plain") is None
    assert committed_files(str(tmp_path)) is None
    (tmp_path / "_spark_metadata").mkdir()
    assert committed_files(str(tmp_path)) == []


@pytest.mark.parametrize("protocol", ["file", "memory"])
def test_manifest_compacts_and_never_overwrites(
    protocol: str, memory_root: str, tmp_path: Path
) -> None:
    base = str(tmp_path / "out") if protocol == "file" else f"memory://{memory_root}/out"
    log = ManifestLog(resolve(base + "/_spark_metadata"), compact_interval=3)
    for batch in range(8):
        log.add(batch, [SinkFile(f"file:///x/{batch}", batch, 1000 + batch)])
    compacted = [b for b, is_compact in sorted(log.batches().items()) if is_compact]
    assert sorted(log.batches()) == list(range(8)) and compacted == [2, 5]
    assert sorted(f.size for f in log.all_files()) == list(range(8))
    with pytest.raises(FileExistsError):
        log.add(7, [])
    assert len(log.read_batch(5, compact=True)) == 6
    # Spark's "delete" action removes an entry.
    log.add(8, [SinkFile("file:///x/3", 0, 0, action="delete")])
    assert sorted(f.size for f in log.all_files()) == [0, 1, 2, 4, 5, 6, 7]


def test_manifest_line_format() -> None:
    line = SinkFile("file:///o/part-0.parquet", 12, 345).to_json()
    assert list(json.loads(line)) == [
        "path",
        "size",
        "isDir",
        "modificationTime",
        "blockReplication",
        "blockSize",
        "action",
    ]
    assert line.startswith('{"path":"file:///o/part-0.parquet","size":12,"isDir":false,')


def test_uris_are_encoded_like_hadoop_paths() -> None:
    uri = file_uri("file:///tmp/out dir", "p=a%3Ab é/part-0.json")
    assert uri == "file:///tmp/out%20dir/p=a%253Ab%20é/part-0.json"
    assert uri_to_url(uri) == "file:///tmp/out dir/p=a%3Ab é/part-0.json"
    assert uri_to_url("file:/tmp/x") == "file:///tmp/x"
    assert file_uri("abfs://c@acct.dfs.core.windows.net/out", "a.parquet") == (
        "abfs://c@acct.dfs.core.windows.net/out/a.parquet"
    )
    assert escape("a:/ %=b") == "a%3A%2F %25%3Db"


@pytest.mark.parametrize("tz", ["UTC", None])
def test_fast_iso_timestamps_and_dates_match_arrow(tz: str | None) -> None:
    import numpy as np
    import pyarrow.compute as pc

    from pysparksources.files.values.rendering import iso_dates, iso_timestamps

    rng = np.random.default_rng(7)
    spread = rng.integers(-62_135_596_800_000_000, 253_402_300_799_999_999, 20_000)
    clustered = np.arange(20_000, dtype=np.int64) * 1000 + 1_795_355_624_279_000
    for values in (spread, clustered, np.array([], dtype=np.int64)):
        column = pa.array(values, pa.timestamp("us", tz=tz))
        expected = pc.strftime(column, format="%Y-%m-%dT%H:%M:%S" + ("Z" if tz else ""))
        assert iso_timestamps(column).to_pylist() == expected.to_pylist()
    with_null = pa.array([0, None], pa.timestamp("us", tz=tz))
    assert iso_timestamps(with_null).to_pylist()[1] is None
    days = pa.array(rng.integers(-719_162, 2_932_896, 20_000).astype("int32")).view(pa.date32())
    assert iso_dates(days).to_pylist() == pc.strftime(days, format="%Y-%m-%d").to_pylist()


@pytest.mark.parametrize("ignore_nulls", [True, False])
def test_json_lines_parse_back_with_fixed_width_and_null_columns(ignore_nulls: bool) -> None:
    import datetime as dt

    import pyarrow as pa

    from pysparksources.files.values.rendering import json_lines

    utc = dt.timezone.utc
    stamps = [dt.datetime(2024, 2, 29, 23, 59, 59, 123456, tzinfo=utc)] * 2
    batch = pa.RecordBatch.from_pydict(
        {
            "day": pa.array([dt.date(1999, 12, 31), dt.date(2024, 2, 29)]),
            "ts": pa.array(stamps, pa.timestamp("us", tz="UTC")),
            "maybe": pa.array([None, stamps[1]], pa.timestamp("us", tz="UTC")),
            "n": pa.array([7, None], pa.int64()),
        }
    )
    lines = json_lines(batch, ignore_null_fields=ignore_nulls).to_pylist()
    assert all(line.endswith("\n") for line in lines)
    first, second = (json.loads(line) for line in lines)
    assert first["day"] == "1999-12-31" and second["day"] == "2024-02-29"
    assert first["ts"] == second["ts"] == "2024-02-29T23:59:59.123456Z"
    assert second["maybe"] == "2024-02-29T23:59:59.123456Z" and second.get("n") is None
    assert ("maybe" in first) is (not ignore_nulls)


def test_json_lines_of_a_constant_column_match_the_per_row_rendering() -> None:
    import datetime as dt

    import pyarrow as pa

    from pysparksources.files.values.rendering import json_lines

    utc = dt.timezone.utc
    stamp = dt.datetime(2026, 11, 23, 6, 5, 4, 32, tzinfo=utc)
    other = dt.datetime(1970, 1, 1, tzinfo=utc)

    def lines(stamps: list[dt.datetime], days: list[dt.date]) -> list[str]:
        batch = pa.RecordBatch.from_pydict(
            {
                "ts": pa.array(stamps, pa.timestamp("us", tz="UTC")),
                "day": pa.array(days, pa.date32()),
                "n": pa.array(range(len(stamps)), pa.int64()),
            }
        )
        rendered: list[str] = json_lines(batch).to_pylist()
        return rendered

    day = dt.date(2026, 11, 23)
    constant = lines([stamp] * 3, [day] * 3)  # rendered once per column
    varying = lines([stamp, stamp, other], [day, day, dt.date(1, 1, 1)])  # rendered per row
    assert constant[:2] == varying[:2]
    assert constant[0] == '{"ts":"2026-11-23T06:05:04.000032Z","day":"2026-11-23","n":0}\n'
