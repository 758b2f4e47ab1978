"""Counterparts of Spark's FileStreamSourceSuite tests that exercise the source's internals
(Spark's tests call FileStreamSource.latestOffset or SeenFilesMap directly): here the same
engine calls are driven on pyfile's reader in-process, with the numbers of Spark's tests.
No JVM. The mapping is in docs/spark-file-stream-tests.md."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fsspec
import pyarrow as pa
import pytest
from fsspec.implementations.local import LocalFileSystem
from pyspark.sql.types import StringType, StructField, StructType

import pysparksources.files.source.file_index as source_module
from pysparksources._core.compat import ReadAllAvailable, ReadMaxFiles
from pysparksources.errors import OptionError, PartitionLayoutError, SchemaError
from pysparksources.files.planning import FilePartition
from pysparksources.files.reader import FileBatchReader, FileStreamReader, read_partition
from pysparksources.files.source.seen_files import SeenFiles
from pysparksources.files.storage.filesystem import resolve
from support.pyfile_source import batch_reader, source_config, stream_reader
from support.spark_parity import ARCHIVE_RULES, archive_accepted

TEXT = StructType([StructField("value", StringType())])
START = {"logOffset": -1}


def land(src: Path, count: int, each_in_own_folder: bool = True) -> list[Path]:
    """``count`` one-line text files with modification times 10 s apart (file i at i * 10 s)."""
    files = []
    for i in range(count):
        folder = src / str(i) if each_in_own_folder else src
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"text-{i}"
        path.write_text(f"{i}\n")
        os.utime(path, (i * 10, i * 10))
        files.append(path)
    return files


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the source's folder listings (Spark's tests count listStatus calls)."""
    calls: list[int] = []
    original = source_module.list_files

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(source_module, "list_files", counting)
    return calls


def reader(src: str, log: Path, **options: str) -> FileStreamReader:
    return stream_reader(
        {"path": src, "format": "text", "sourceLogLocation": str(log), **options}, TEXT
    )


def batch_files(r: FileStreamReader, offset: dict[str, int]) -> list[str]:
    return [Path(e.path).name for e in r._driver().log.get(offset["logOffset"])]


def names(files: list[Path]) -> list[str]:
    return [f.name for f in files]


def test_caches_and_leverages_unread_files(tmp_path: Path, listings: list[int]) -> None:
    files = land(tmp_path / "in", 41)
    r = reader(f"{tmp_path}/in/*/*", tmp_path / "log", maxFilesPerTrigger="10")
    for batch in range(4):
        offset = r.latestOffset(START, ReadMaxFiles(10))
        assert offset["logOffset"] == batch
        assert batch_files(r, offset) == names(files[batch * 10 : batch * 10 + 10])
        assert len(listings) == 1  # batches 1..3 came from the unread-file cache
    # One file left over is less than discardCachedInputRatio (0.2) x 10: it was dropped, so
    # the next batch lists again.
    offset = r.latestOffset(START, ReadMaxFiles(10))
    assert offset["logOffset"] == 4 and batch_files(r, offset) == ["text-40"]
    assert len(listings) == 2
    assert r.latestOffset(START, ReadMaxFiles(10))["logOffset"] == 4
    assert len(listings) == 3
    r.stop()


def test_no_unread_file_cache_with_latest_first(tmp_path: Path, listings: list[int]) -> None:
    land(tmp_path / "in", 20)
    r = reader(f"{tmp_path}/in/*/*", tmp_path / "log", latestFirst="true", maxFilesPerTrigger="5")
    assert batch_files(r, r.latestOffset(START, ReadMaxFiles(5)))[0] == "text-19"
    assert len(listings) == 1
    r.latestOffset(START, ReadMaxFiles(5))
    assert len(listings) == 2
    r.stop()


def test_options_for_caching_unread_files(tmp_path: Path, listings: list[int]) -> None:
    files = land(tmp_path / "in", 44)
    r = reader(
        f"{tmp_path}/in/*/*",
        tmp_path / "log",
        maxFilesPerTrigger="10",
        maxCachedFiles="12",
        discardCachedInputRatio="0.1",
    )
    # (first file, files in the batch, listings so far): 10 read + 12 cached; 10 from the
    # cache + 2 left (not below 0.1 x 10); the 2; then the same after a second listing.
    expected = [(0, 10, 1), (10, 10, 1), (20, 2, 1), (22, 10, 2), (32, 10, 2), (42, 2, 2)]
    for batch, (first, count, listed) in enumerate(expected):
        offset = r.latestOffset(START, ReadMaxFiles(10))
        assert offset["logOffset"] == batch
        assert batch_files(r, offset) == names(files[first : first + count])
        assert len(listings) == listed
    assert r.latestOffset(START, ReadMaxFiles(10))["logOffset"] == 5
    assert len(listings) == 3
    r.stop()


def test_max_cached_files_zero_lists_every_batch(tmp_path: Path, listings: list[int]) -> None:
    """SPARK-48802."""
    files = land(tmp_path / "in", 20)
    r = reader(f"{tmp_path}/in/*/*", tmp_path / "log", maxFilesPerTrigger="10", maxCachedFiles="0")
    for batch in range(2):
        offset = r.latestOffset(START, ReadMaxFiles(10))
        assert batch_files(r, offset) == names(files[batch * 10 : batch * 10 + 10])
        assert len(listings) == batch + 1
    assert r.latestOffset(START, ReadMaxFiles(10))["logOffset"] == 1
    assert len(listings) == 3
    r.stop()


def test_available_now_uses_its_one_listing_not_the_cache(
    tmp_path: Path, listings: list[int]
) -> None:
    """SPARK-48314."""
    land(tmp_path / "in", 20)
    r = reader(f"{tmp_path}/in/*/*", tmp_path / "log", maxFilesPerTrigger="5", maxCachedFiles="2")
    r.prepareForTriggerAvailableNow()
    listings.clear()
    for _ in range(2):
        offset = r.latestOffset(START, ReadMaxFiles(5))
        assert len(batch_files(r, offset)) == 5  # not the 2 a cache would hold
        assert listings == []
    r.stop()


def files_in(r: FileStreamReader, start: int, end: int) -> list[str]:
    parts = r.partitions({"logOffset": start}, {"logOffset": end})
    return sorted(
        Path(s.path).name for p in parts if isinstance(p, FilePartition) for s in p.splits
    )


def test_any_range_of_batches_is_read_without_rechecking_files(tmp_path: Path) -> None:
    """get arbitrary batch from FileStreamSource (across a compaction, after a restart); do not
    recheck that files exist during getBatch (sizes come from the log)."""
    files = land(tmp_path / "in", 12, each_in_own_folder=False)
    r = reader(str(tmp_path / "in"), tmp_path / "log")
    offset = START
    for _ in range(12):
        end = r.latestOffset(offset, ReadMaxFiles(1))
        r.commit(end)
        offset = end
    assert (tmp_path / "log" / "9.compact").exists()
    for path in files:
        path.unlink()  # planning a logged batch touches no input file
    for current in (r, reader(str(tmp_path / "in"), tmp_path / "log")):
        if current is not r:
            r.stop()
        assert files_in(current, -1, 2) == ["text-0", "text-1", "text-2"]
        assert files_in(current, 0, 1) == ["text-1"]
        assert files_in(current, 0, 2) == ["text-1", "text-2"]
        assert files_in(current, 1, 2) == ["text-2"]
        assert files_in(current, 8, 11) == ["text-10", "text-11", "text-9"]
        sizes = [s.size for p in current.partitions(START, {"logOffset": 11}) for s in p.splits]
        assert sorted(sizes) == [2] * 10 + [3] * 2
    current.stop()


def test_offsets_stay_small_however_many_files_a_batch_has(tmp_path: Path) -> None:
    """SPARK-17372: the offset Spark writes to its WAL never holds file names."""
    src = tmp_path / "in" / "a=1"
    src.mkdir(parents=True)
    for i in range(10_000):
        (src / f"f{i}").write_text("x\n")
    r = reader(str(tmp_path / "in"), tmp_path / "log")
    offset = r.latestOffset(START, ReadAllAvailable())
    # The log's batch id and the log's identity (32 hex digits), nothing per file.
    assert offset["logOffset"] == 0 and len(json.dumps(offset)) < 80, offset
    assert len(r._driver().log.get(0)) == 10_000
    r.stop()


def test_seen_files_map() -> None:
    """SeenFilesMap: purge by maxFileAge relative to the newest file."""
    seen = SeenFiles(max_age_ms=10, file_name_only=False)
    seen.add("a", 5)
    assert len(seen) == 1
    seen.purge()
    assert len(seen) == 1
    seen.add("b", 15)
    seen.purge()
    assert len(seen) == 2  # a gap of exactly 10 ms purges nothing
    seen.add("c", 16)
    assert len(seen) == 3
    seen.purge()
    assert len(seen) == 2
    seen.add("c", 25)  # an existing entry is updated, not added
    assert len(seen) == 2
    assert not seen.is_new("c", 20)  # seen before
    assert not seen.is_new("d", 5)  # older than the purge threshold
    assert seen.is_new("e", 20)


def test_seen_files_map_with_file_name_only() -> None:
    seen = SeenFiles(max_age_ms=10, file_name_only=True)
    seen.add("file:///a/b/c/d", 5)
    seen.add("file:///a/b/c/e", 5)
    assert len(seen) == 2
    for path in ("d", "file:///d", "file:///x/d", "file:///x/y/d"):
        assert not seen.is_new(path, 5)
    for path in ("s3:///bucket/d", "s3n:///bucket/d", "s3a:///bucket/d"):
        seen.add(path, 5)
    assert len(seen) == 2


def test_seen_files_map_is_relative_to_the_last_purge() -> None:
    """SeenFilesMap should only consider a file old if it is earlier than last purge time."""
    seen = SeenFiles(max_age_ms=10, file_name_only=False)
    seen.add("a", 20)
    assert seen.is_new("b", 9) and seen.is_new("b", 10)  # no purge yet: threshold 0
    seen.purge()
    assert not seen.is_new("b", 9) and seen.is_new("b", 10)


def test_option_names_are_case_insensitive(tmp_path: Path) -> None:
    """SPARK-18433 (the real-query variant is in test_spark_parity_source.py)."""
    config = source_config(
        {"path": str(tmp_path), "MAXFILESPERTRIGGER": "1", "sourcelogLocation": "x"}
    )
    assert config.max_files_per_trigger == 1


@pytest.mark.parametrize(
    ("pattern", "archive"),
    [
        ("/hello*/spar?", "/hello/spark/structured/streaming"),
        ("/hello*/spar?/structured/streaming", "/hello/spark/structured"),
        ("/hello*/spar?/structured/*", "/hello/spark/structured/streaming"),
    ],
)
def test_archive_folder_matching_the_source_pattern_is_refused(pattern: str, archive: str) -> None:
    """SourceFileArchiver - fail when base archive path matches source pattern (Spark's three
    cases; more, compared with Spark's own source, in test_spark_parity_source.py)."""
    options = {"path": pattern, "cleanSource": "archive", "sourceArchiveDir": archive}
    with pytest.raises(OptionError, match="sourceArchiveDir"):
        source_config({**options, "sourceLogLocation": "/log"})


def test_archive_folder_on_another_filesystem_is_refused(tmp_path: Path) -> None:
    """SourceFileArchiver - different filesystems between source and archive."""
    options = {
        "path": str(tmp_path),
        "cleanSource": "archive",
        "sourceArchiveDir": "memory://archive",
        "sourceLogLocation": str(tmp_path / "log"),
    }
    with pytest.raises(OptionError, match="same filesystem"):
        source_config(options)


class _FailingChecks(LocalFileSystem):  # type: ignore[misc]
    """Local files, but looking at ``_spark_metadata`` or at a glob path fails (like Spark's
    FailFormatCheckFileSystem)."""

    protocol = "pyfiletestfailingchecks"

    @classmethod
    def _strip_protocol(cls, path: Any) -> Any:
        text = str(path)
        prefix = cls.protocol + "://"
        return super()._strip_protocol(text[len(prefix) :] if text.startswith(prefix) else text)

    @staticmethod
    def _check(path: Any) -> None:
        text = str(path)
        if text.rstrip("/").endswith("/_spark_metadata") or any(c in text for c in "*?["):
            raise OSError(f"cannot access {text}")

    def info(self, path: Any, **kwargs: Any) -> Any:
        self._check(path)
        return super().info(path, **kwargs)

    def isdir(self, path: Any) -> bool:
        self._check(path)
        return bool(super().isdir(path))


@pytest.fixture
def failing_checks() -> Iterator[str]:
    fsspec.register_implementation(_FailingChecks.protocol, _FailingChecks, clobber=True)
    yield _FailingChecks.protocol


def read_all(r: FileBatchReader) -> list[str]:
    rows: list[str] = []
    for part in r.partitions():
        for batch in read_partition(part):
            assert isinstance(batch, pa.RecordBatch)
            rows += batch.column(0).to_pylist()
    return sorted(rows)


def test_failing_metadata_or_glob_checks_do_not_fail_the_read(
    tmp_path: Path, failing_checks: str
) -> None:
    """formatCheck fail should not fail the query; fail to check glob path should not fail the
    query (as in Spark, the folder is then read as plain files)."""
    out = tmp_path / "out"
    (out / "_spark_metadata").mkdir(parents=True)
    (out / "_spark_metadata" / "0").write_text("v1\n")
    (out / "part-0.txt").write_text("foo\n")
    for path in (str(out), f"{out}/*"):
        r = batch_reader({"path": f"{failing_checks}://{path}", "format": "text"}, TEXT)
        assert read_all(r) == ["foo"]
    assert resolve(f"{failing_checks}://{out}").protocol == failing_checks


def _tree(root: Path, *files: str) -> None:
    for rel in files:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"{Path(rel).name}\n")


def _listed(root: Path, path: str, recursive: bool = False) -> list[str]:
    from pysparksources.files.options import split_glob
    from pysparksources.files.storage.folder_listing import list_files

    base, pattern = split_glob(f"{root}/{path}")
    fs = resolve(str(root)).filesystem()
    return sorted(
        Path(f.path).relative_to(root).as_posix()
        for f in list_files(fs, base, pattern, recursive=recursive)
    )


def test_listing_follows_sparks_partition_discovery(tmp_path: Path) -> None:
    """What Spark 4.3's file stream source read from each layout (checked by running it, and
    compared in test_spark_parity_source.py): plain subfolders are not read, partition folders
    are (nested plain folders below them too), a glob's matched folders are read one level
    deep, and partition folders beside plain ones are refused."""
    _tree(tmp_path, "l1/a", "l1/sub/b", "l1/sub/deeper/c")
    assert _listed(tmp_path, "l1") == ["l1/a"]
    assert _listed(tmp_path, "l1", recursive=True) == ["l1/a", "l1/sub/b", "l1/sub/deeper/c"]
    _tree(tmp_path, "l2/k=1/a", "l2/k=1/sub/b", "l2/k=2/c", "l2/d")
    assert _listed(tmp_path, "l2") == ["l2/d", "l2/k=1/a", "l2/k=1/sub/b", "l2/k=2/c"]
    _tree(tmp_path, "l3/top", "l3/subdir/s1", "l3/subdir/subsub/s2", "l3/subdir/subsub/x/s3")
    assert _listed(tmp_path, "l3/*/*") == ["l3/subdir/s1", "l3/subdir/subsub/s2"]
    _tree(tmp_path, "conflict/k=1/a", "conflict/plain/b")
    with pytest.raises(PartitionLayoutError, match="conflict/plain"):
        _listed(tmp_path, "conflict")
    _tree(tmp_path, "roots/x/k=1/a", "roots/y/k=2/b")  # two glob roots, each partitioned
    with pytest.raises(PartitionLayoutError, match="roots/x"):
        _listed(tmp_path, "roots/*")
    _tree(tmp_path, "names/j=1/a", "names/k=2/b")
    with pytest.raises(PartitionLayoutError, match="partition column names"):
        _listed(tmp_path, "names")


def test_partition_values_only_without_a_glob(tmp_path: Path) -> None:
    """read new files in partitioned table with/without globbing: through a glob Spark reads
    no partition values (the column comes from the files, here null)."""
    (tmp_path / "t" / "partition=foo").mkdir(parents=True)
    (tmp_path / "t" / "partition=foo" / "f.json").write_text('{"value": "v"}\n')
    schema = StructType(
        [StructField("value", StringType()), StructField("partition", StringType())]
    )
    for path, expected in ((f"{tmp_path}/t", "foo"), (f"{tmp_path}/t/*/*", None)):
        r = batch_reader({"path": path, "format": "json"}, schema)
        rows = [b.to_pylist() for p in r.partitions() for b in read_partition(p)]
        assert rows == [[{"value": "v", "partition": expected}]], path


def test_the_reader_reads_plain_subfolders_only_with_recursive_file_lookup(tmp_path: Path) -> None:
    """The reader passes recursiveFileLookup to the listing (Spark's rule for plain folders)."""
    _tree(tmp_path, "in/a", "in/sub/b")
    for extra, expected in (({}, ["a"]), ({"recursiveFileLookup": "true"}, ["a", "b"])):
        r = batch_reader({"path": f"{tmp_path}/in", "format": "text", **extra}, TEXT)
        assert read_all(r) == expected, extra


def test_an_escaped_glob_character_is_a_literal(tmp_path: Path) -> None:
    """SPARK-21996/SPARK-43343: a folder named text[123]text is read through the escaped path
    text\\[123\\]text, as with Spark (the unescaped one is a glob matching text1text...)."""
    _tree(tmp_path, "text[123]text/a", "text1text/b", "a{b}c/c")
    assert _listed(tmp_path, "text\\[123\\]text") == ["text[123]text/a"]
    assert _listed(tmp_path, "text[123]text") == ["text1text/b"]
    assert _listed(tmp_path, "a\\{b\\}c") == ["a{b}c/c"]


@pytest.mark.parametrize("mode", ["delete", "archive"])
def test_clean_source_on_a_sink_output_is_refused(tmp_path: Path, mode: str) -> None:
    """Throw UnsupportedOperationException on configuring delete/archive when source path
    refers the output dir of FileStreamSink (the real queries are in the parity module)."""
    out = tmp_path / "out"
    (out / "_spark_metadata").mkdir(parents=True)
    (out / "part-0.txt").write_text("foo\n")
    (out / "_spark_metadata" / "0").write_text(
        "v1\n"
        + json.dumps(
            {
                "path": (out / "part-0.txt").as_uri(),
                "size": 4,
                "isDir": False,
                "modificationTime": 1,
                "blockReplication": 1,
                "blockSize": 1,
                "action": "add",
            }
        )
    )
    r = reader(
        str(out), tmp_path / "log", cleanSource=mode, sourceArchiveDir=str(tmp_path / "arch")
    )
    with pytest.raises(OptionError, match=r"cleanSource.*_spark_metadata"):
        r.latestOffset(START, ReadAllAvailable())
    r.stop()
    assert (out / "part-0.txt").exists()


def test_schemas_spark_refuses_are_refused_at_start(tmp_path: Path) -> None:
    """SPARK-20460 (duplicate column names, case-insensitively) and SPARK-35320 (JSON map keys
    other than STRING) fail when the reader is built, at query start, naming the column."""
    from pyspark.sql.types import IntegerType, MapType

    options = {"path": str(tmp_path), "sourceLogLocation": str(tmp_path / "log")}
    for a, b in (("a", "a"), ("aA", "Aa")):
        twice = StructType([StructField(a, IntegerType()), StructField(b, IntegerType())])
        with pytest.raises(SchemaError, match=f"column name '{b}' appears twice"):
            stream_reader({**options, "format": "json"}, twice)
    for key in (IntegerType(), MapType(StringType(), StringType())):
        nested = StructType(
            [StructField("s", StructType([StructField("m", MapType(key, StringType()))]))]
        )
        with pytest.raises(SchemaError, match=r"'s\.m'.*STRING keys"):
            stream_reader({**options, "format": "json"}, nested)
    # Parquet and orc maps may have other keys, as in Spark.
    ints = StructType([StructField("m", MapType(IntegerType(), StringType()))])
    stream_reader({**options, "format": "parquet"}, ints).stop()


# Spark 4.3's verdicts for (source path, sourceArchiveDir) below one folder, from running its
# own source (test_spark_parity_source.py::test_archive_folder_rules_match_spark repeats it).
@pytest.mark.parametrize(("source", "archive", "accepted"), ARCHIVE_RULES)
def test_archive_folder_rule_is_sparks(
    tmp_path: Path, source: str, archive: str, accepted: bool
) -> None:
    assert archive_accepted(tmp_path, source, archive) is accepted


def test_orc_file_without_the_schemas_columns_gives_null_rows(tmp_path: Path) -> None:
    """read from orc files with changing schema: a file lacking every column of the schema
    still gives its rows, with nulls (pyarrow reads no rows when asked for no columns)."""
    import pyarrow.orc as orc

    (tmp_path / "in").mkdir()
    orc.write_table(pa.table({"v": ["x", "y"]}), str(tmp_path / "in" / "a.orc"))
    schema = StructType([StructField("k", StringType())])
    r = batch_reader({"path": str(tmp_path / "in"), "format": "orc"}, schema)
    rows = [row for p in r.partitions() for b in read_partition(p) for row in b.to_pylist()]
    assert rows == [{"k": None}, {"k": None}]
