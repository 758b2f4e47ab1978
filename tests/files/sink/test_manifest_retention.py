"""The manifest's cost and clean-up, driven in-process on memory:// (no JVM).

A commit must not list the folder (two or three lookups by name, plus the previous compact
file and its deltas on a compaction batch); superseded files go as Spark's cleanupDelay rule
says; a reader of the folder parses each manifest file once and asks storage nothing per file.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import fsspec
import pyarrow as pa
import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from pysparksources._core.compat import ReadAllAvailable
from pysparksources.files.config import ManifestRetention
from pysparksources.files.sink.manifest import CommittedFiles, ManifestLog, SinkFile
from pysparksources.files.storage.filesystem import resolve
from pysparksources.files.writer import FilesWritten, WrittenFile
from support.pyfile_sink import sink_config, stream_writer
from support.pyfile_source import stream_reader

SCHEMA = StructType([StructField("id", LongType()), StructField("tag", StringType())])


@pytest.fixture
def root() -> Iterator[str]:
    path = f"/pyfile-manifest-{uuid.uuid4().hex}"
    yield path
    fs = fsspec.filesystem("memory")
    if fs.exists(path):
        fs.rm(path, recursive=True)


class Calls:
    """Counts the memory filesystem's listings, reads and per-file lookups."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.fs: Any = fsspec.filesystem("memory")  # one instance per process (fsspec cache)
        self.ls: list[str] = []
        self.cat: list[str] = []
        self.info: list[str] = []
        for name in ("ls", "cat_file", "info"):
            original = getattr(self.fs, name)
            record = {"ls": self.ls, "cat_file": self.cat, "info": self.info}[name]

            def wrapped(path: str, *args: Any, _o: Any = original, _r: Any = record, **kw: Any):  # type: ignore[no-untyped-def]
                _r.append(str(path))
                return _o(path, *args, **kw)

            monkeypatch.setattr(self.fs, name, wrapped)

    def reset(self) -> None:
        self.ls.clear()
        self.cat.clear()
        self.info.clear()


def names(root: str) -> list[str]:
    fs: Any = fsspec.filesystem("memory")
    found = [p.rsplit("/", 1)[-1] for p in fs.ls(f"{root}/out/_spark_metadata", detail=False)]
    return sorted(found, key=lambda n: int(n.split(".")[0]))


def message(batch: int) -> FilesWritten:
    return FilesWritten(batch, [WrittenFile(f"part-b{batch}.parquet", 100 + batch, 1000 + batch)])


def test_commits_list_nothing_and_superseded_files_go(
    root: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = {"path": f"memory://{root}/out", "minBatchesToRetain": "2", "logCleanupDelay": "0"}
    calls = Calls(monkeypatch)
    listed_at = []
    for batch in range(25):
        calls.reset()
        stream_writer(options, SCHEMA).commit([message(batch)], batch)
        metadata_listings = [p for p in calls.ls if p.endswith("_spark_metadata")]
        if metadata_listings:
            listed_at.append(batch)
        # A compaction reads the previous compact file and the deltas after it, nothing more.
        assert len(calls.cat) == (min(batch, 10) if (batch + 1) % 10 == 0 else 0), batch
    # Listed for the first batch (is the folder empty?) and when the retention floor moved.
    assert listed_at == [0, 11, 21]
    # Spark's rule with minBatchesToRetain=2: batches 23 and 24 stay readable, so the compact
    # file 19 that covers them stays, and everything before it is gone.
    assert names(root) == ["19.compact", "20", "21", "22", "23", "24"]
    manifest = ManifestLog(resolve(f"memory://{root}/out/_spark_metadata"))
    assert sorted(f.size for f in manifest.all_files()) == [100 + b for b in range(25)]

    # A replay of the last batch adds nothing; so does one of a batch whose file is gone.
    for batch in (24, 3):
        stream_writer(options, SCHEMA).commit([message(batch)], batch)
    assert names(root) == ["19.compact", "20", "21", "22", "23", "24"]
    assert len(manifest.all_files()) == 25


def test_cleanup_delay_keeps_young_files_until_a_later_floor_move(root: str) -> None:
    retention = ManifestRetention(
        enabled=True, min_batches=2, cleanup_delay_ms=3_600_000, output_ttl_ms=None
    )
    manifest = ManifestLog(resolve(f"memory://{root}/out/_spark_metadata"), 10, retention)
    for batch in range(25):
        manifest.add(batch, [SinkFile(f"memory://{root}/out/{batch}", batch, batch)])
    assert len(names(root)) == 25  # the floor moved at 11 and 21, but every file is young
    assert manifest.delete_expired(24, now_ms=2**45) == []  # the floor did not move at 24
    for batch in range(25, 32):
        manifest.add(batch, [SinkFile(f"memory://{root}/out/{batch}", batch, batch)])
    assert len(names(root)) == 32
    # The next move, an hour on: everything before the compact file 29 goes at once.
    assert manifest.delete_expired(31, now_ms=2**45) == list(range(29))
    assert names(root) == ["29.compact", "30", "31"]
    assert sorted(f.size for f in manifest.all_files()) == list(range(32))


def test_a_reader_parses_each_manifest_file_once(
    root: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = ManifestLog(resolve(f"memory://{root}/out/_spark_metadata"))
    for batch in range(25):
        manifest.add(batch, [SinkFile(f"memory://{root}/out/{batch}", batch, batch)])
    calls = Calls(monkeypatch)
    view = CommittedFiles(manifest)
    assert len(view.refresh()) == 25
    read = sorted(p.rsplit("/", 1)[-1] for p in calls.cat)
    assert read == ["19.compact", "20", "21", "22", "23", "24"]
    generation = view.generation
    calls.reset()
    assert len(view.refresh()) == 25 and calls.cat == [] and view.generation == generation
    manifest.add(25, [SinkFile(f"memory://{root}/out/25", 25, 25)])
    assert len(view.refresh()) == 26 and [p.rsplit("/", 1)[-1] for p in calls.cat] == ["25"]
    calls.reset()
    for batch in range(26, 30):
        manifest.add(batch, [SinkFile(f"memory://{root}/out/{batch}", batch, batch)])
    calls.reset()
    assert len(view.refresh()) == 30  # a new compact file replaces the view: one read
    assert [p.rsplit("/", 1)[-1] for p in calls.cat] == ["29.compact"]


def test_the_source_takes_sizes_and_times_from_the_manifest(
    root: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = f"memory://{root}/out"
    writer = stream_writer({"path": out}, SCHEMA)
    for batch in range(3):
        rows = pa.record_batch({"id": pa.array([batch], pa.int64()), "tag": ["t"]})
        writer.commit([writer.write(iter([rows]))], batch)
    recorded = {
        f.path.rsplit("/", 1)[-1]: (f.size, f.modification_time)
        for f in ManifestLog(resolve(f"{out}/_spark_metadata")).all_files()
    }
    calls = Calls(monkeypatch)
    options = {"path": out, "sourceLogLocation": f"memory://{root}/log", "maxFileAge": "365d"}
    reader = stream_reader(options, StructType(SCHEMA.fields[:1]))
    start = reader.initialOffset()
    end = reader.latestOffset(start, ReadAllAvailable())
    parts = reader.partitions(start, end)
    assert not [p for p in calls.info if p.endswith(".parquet")], calls.info  # no HEAD per file
    splits = [s for p in parts for s in p.splits]  # type: ignore[attr-defined]
    assert {s.path.rsplit("/", 1)[-1]: s.size for s in splits} == {
        name: size for name, (size, _) in recorded.items()
    }
    got = sorted(v for p in parts for b in reader.read(p) for v in b.column(0).to_pylist())
    assert got == [0, 1, 2]
    history = reader._driver().history
    assert {e.path.rsplit("/", 1)[-1]: (e.size, e.timestamp) for e in history} == recorded
    reader.stop()


def test_a_failing_sweep_never_fails_the_commit(
    root: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    retention = ManifestRetention(
        enabled=True, min_batches=1, cleanup_delay_ms=0, output_ttl_ms=None
    )
    manifest = ManifestLog(resolve(f"memory://{root}/out/_spark_metadata"), 10, retention)
    for batch in range(10):
        manifest.add(batch, [SinkFile(f"memory://{root}/out/{batch}", batch, batch)])
    fs: Any = fsspec.filesystem("memory")

    def unavailable(*args: Any, **kwargs: Any) -> Any:
        raise OSError("service unavailable")

    monkeypatch.setattr(fs, "ls", unavailable)
    with caplog.at_level("WARNING", logger="pysparksources.files.sink.manifest"):
        manifest.add(10, [SinkFile(f"memory://{root}/out/10", 10, 10)])  # the floor moves here
    monkeypatch.undo()
    assert manifest.is_committed(10) and len(names(root)) == 11
    assert any("superseded" in r.getMessage() for r in caplog.records)


def test_retention_leaves_old_output_out_of_the_next_compact_file(root: str) -> None:
    """Spark's ``retention``: entries of earlier batches older than it leave the manifest at
    the compaction; the compacting batch keeps its own, whatever their age."""
    options = {"path": f"memory://{root}/out", "retention": "10m"}
    now_ms = int(time.time() * 1000)
    for batch in range(10):
        age_ms = 3_600_000 if batch < 5 or batch == 9 else 0  # 0-4 and 9 are an hour old
        written = WrittenFile(f"part-b{batch}.parquet", 100 + batch, now_ms - age_ms)
        stream_writer(options, SCHEMA).commit([FilesWritten(batch, [written])], batch)
        if batch == 8:  # before the compaction every file is still listed
            manifest = ManifestLog(resolve(f"memory://{root}/out/_spark_metadata"))
            assert len(manifest.all_files()) == 9
    manifest = ManifestLog(resolve(f"memory://{root}/out/_spark_metadata"))
    assert sorted(f.size for f in manifest.all_files()) == [105, 106, 107, 108, 109]


@pytest.mark.parametrize(
    ("given", "ms"), [("3600000", 3_600_000), ("1h", 3_600_000), ("90s", 90_000)]
)
def test_retention_reads_a_bare_number_as_milliseconds_as_spark_does(
    root: str, given: str, ms: int
) -> None:
    config = sink_config({"path": f"memory://{root}/out", "retention": given}, SCHEMA)
    assert config.retention.output_ttl_ms == ms
