"""Pure-Python tests of pyfile's listing, seen-files, admission and log rules (no JVM)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from pysparksources._core.compat import ReadAllAvailable, ReadMaxBytes, ReadMaxFiles
from pysparksources._core.option_table import Use
from pysparksources.errors import SourceLogInUseError
from pysparksources.files.planning import ReadContext, plan_partitions
from pysparksources.files.source.admission import Admission, take_by_bytes
from pysparksources.files.source.seen_files import SeenFiles
from pysparksources.files.source.source_log import LogEntry, SourceLog
from pysparksources.files.storage.filesystem import resolve
from pysparksources.files.storage.folder_listing import FileEntry, glob_regex, is_hidden, list_files
from support.processes import process_state
from support.pyfile_source import source_config

# Every option at its default, as the table declares it (admission's cache sizes, the reader).
DEFAULTS = source_config({"path": "/data"}, Use.BATCH_READ)


def admission(seen: SeenFiles, latest_first: bool = False) -> Admission:
    return Admission(
        seen,
        latest_first=latest_first,
        max_cached_files=DEFAULTS.max_cached_files,
        discard_ratio=DEFAULTS.discard_cached_input_ratio,
    )


def files(*spec: tuple[str, int, int]) -> list[FileEntry]:
    return [FileEntry(p, t, s) for p, t, s in spec]


def test_hidden_names_follow_spark() -> None:
    assert is_hidden("_SUCCESS") and is_hidden(".part.crc") and is_hidden("a._COPYING_")
    assert not is_hidden("_k=1") and not is_hidden("part-0.parquet")


def test_hadoop_glob_filter() -> None:
    regex = glob_regex("*.{csv,json}")
    assert regex.match("a.csv") and regex.match("b.json") and not regex.match("c.txt")
    assert glob_regex("f[0-2].txt").match("f1.txt") and not glob_regex("f[!0-2].txt").match(
        "f1.txt"
    )


def test_glob_classes_take_set_operators_literally_and_refuse_a_nested_bracket() -> None:
    """Python reads "&&", "~~", "||" and "[" in a class as future set syntax (a FutureWarning
    per pattern); in a glob they are plain characters, and Hadoop refuses a nested "["."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        regex = glob_regex("f[a&&b~~|].txt")
        assert all(regex.match(f"f{c}.txt") for c in "ab&~|") and not regex.match("fc.txt")
        assert glob_regex("f[\\[].txt").match("f[.txt")
    with pytest.raises(ValueError, match=r"'\[' inside the character class \[\[a\]"):
        glob_regex("f[[a].txt")


def test_listing_recurses_skips_hidden_and_filters(tmp_path: Path) -> None:
    for rel in ("a.csv", "sub/b.csv", "k=1/c.csv", "_tmp/d.csv", ".x/e.csv", "f.txt", "_SUCCESS"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("1\n")
    fs = resolve(str(tmp_path)).filesystem()
    # A plain folder beside a partition folder: only recursiveFileLookup reads both (Spark's
    # rules; test_spark_parity_inprocess.py has the layouts).
    found = {
        Path(f.path).relative_to(tmp_path).as_posix()
        for f in list_files(fs, str(tmp_path), None, recursive=True)
    }
    assert found == {"a.csv", "sub/b.csv", "k=1/c.csv", "f.txt"}
    only_csv = list_files(fs, str(tmp_path), None, "*.csv", recursive=True)
    assert {Path(f.path).name for f in only_csv} == {"a.csv", "b.csv", "c.csv"}
    globbed = list_files(fs, str(tmp_path), f"{tmp_path}/{{sub,k=1}}")
    assert {Path(f.path).name for f in globbed} == {"b.csv", "c.csv"}


def test_seen_files_max_age_is_relative_to_the_newest_file() -> None:
    seen = SeenFiles(max_age_ms=1000, file_name_only=False)
    assert seen.is_new("/a", 0)  # the first batch accepts everything
    seen.add("/a", 5000)
    seen.purge()
    assert not seen.is_new("/a", 5000)
    assert seen.is_new("/late-but-young", 4500)
    assert not seen.is_new("/too-old", 3999)
    seen.add("/b", 10_000)
    assert seen.purge() == 1  # /a aged out of the map
    assert len(seen) == 1


def test_file_name_only() -> None:
    seen = SeenFiles(None, file_name_only=True)
    seen.add("/x/a.csv", 1)
    assert not seen.is_new("abfs://c/other/a.csv", 1)


def test_admission_max_files_caches_the_rest_and_max_bytes_takes_a_prefix() -> None:
    listed = files(("/c", 3, 10), ("/a", 1, 10), ("/b", 2, 10), ("/d", 4, 10), ("/e", 5, 10))
    calls = []

    def lister() -> list[FileEntry]:
        calls.append(1)
        return listed

    adm = admission(SeenFiles(None, file_name_only=False))
    assert [f.path for f in adm.select(ReadMaxFiles(2), lister)] == ["/a", "/b"]
    assert [f.path for f in adm.select(ReadMaxFiles(2), lister)] == ["/c", "/d"]
    assert len(calls) == 1  # the second batch came from the unread cache
    assert take_by_bytes(files(("/a", 1, 100), ("/b", 1, 1)), 10) == 1  # first file always
    assert take_by_bytes(files(("/a", 1, 4), ("/b", 1, 4), ("/c", 1, 4)), 9) == 2
    adm = admission(SeenFiles(None, file_name_only=False), latest_first=True)
    assert [f.path for f in adm.select(ReadMaxBytes(15), lambda: listed)] == ["/e"]
    assert adm.select(ReadAllAvailable(), lambda: listed)[0].path == "/e"


def test_log_compacts_every_ten_batches_and_restores(tmp_path: Path) -> None:
    # cleanup delay 0: superseded files go at the compaction (test_source_log_options.py has
    # the delay itself).
    log = SourceLog(resolve(str(tmp_path / "log")), cleanup_delay_ms=0)
    log.acquire(60)
    history: list[LogEntry] = []
    for batch in range(12):
        entries = [LogEntry(f"/f{batch}", batch, batch, 7)]
        log.add(batch, entries, history)
        history.extend(entries)
    names = sorted(os.listdir(tmp_path / "log"))
    assert names == ["10", "11", "9.compact", "lease.json"]
    fresh = SourceLog(resolve(str(tmp_path / "log")))
    assert [e.path for e in fresh.restore()] == [f"/f{i}" for i in range(12)]
    assert fresh.get(3) == [LogEntry("/f3", 3, 3, 7)]
    assert fresh.latest_batch_id() == 11
    with pytest.raises(SourceLogInUseError, match=r"^pyfile: source log batch .* already exists"):
        log.add(11, [], history)
    log.release()


def test_a_second_live_query_is_refused_and_a_dead_owner_is_taken_over(tmp_path: Path) -> None:
    location = resolve(str(tmp_path / "log"))
    first = SourceLog(location)
    first.acquire(60)
    with pytest.raises(SourceLogInUseError, match="in use by another running query"):
        SourceLog(location).acquire(60)
    first.release()
    SourceLog(location).acquire(60)  # released: free to take
    # A lease left by a process that no longer exists on this host is stale at once.
    lease = tmp_path / "log" / "lease.json"
    text = lease.read_text().replace(f'"pid": {os.getpid()}', '"pid": 999999999')
    lease.write_text(text.replace('"owner": "', '"owner": "dead'))
    SourceLog(location).acquire(60)


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="zombies are read from /proc")
def test_a_killed_owner_not_yet_reaped_is_taken_over(tmp_path: Path) -> None:
    """A SIGKILLed query's runner is a zombie until reaped; kill(pid, 0) still succeeds on it."""
    location = resolve(str(tmp_path / "log"))
    SourceLog(location).acquire(60)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    lease = tmp_path / "log" / "lease.json"
    text = lease.read_text().replace(f'"pid": {os.getpid()}', f'"pid": {child.pid}')
    lease.write_text(text.replace('"owner": "', '"owner": "killed'))
    try:
        with pytest.raises(SourceLogInUseError, match="in use by another running query"):
            SourceLog(location).acquire(60)  # alive: refused
        child.kill()
        deadline = time.monotonic() + 10
        while process_state(child.pid) != "Z":
            assert time.monotonic() < deadline, "the killed child never became a zombie"
            time.sleep(0.01)
        SourceLog(location).acquire(60)  # killed, not reaped: taken over
    finally:
        child.kill()
        child.wait()


def test_planning_packs_by_size_and_splits_big_parquet() -> None:
    import pyarrow as pa

    context = ReadContext(resolve("/data"), pa.schema([]), DEFAULTS.reader)
    mb = 1 << 20
    parts = plan_partitions(
        [("/data/big", 300 * mb), *((f"/data/s{i}", mb) for i in range(8))],
        "/data",
        context,
        max_partition_bytes=128 * mb,
        open_cost=4 * mb,
        cores=2,
    )
    big = [s for p in parts for s in p.splits if s.path == "/data/big"]
    assert len(big) == 3 and sum(s.length or 0 for s in big) == 300 * mb
    assert sum(len(p.splits) for p in parts) == 11


def test_damaged_log_and_manifest_files_are_checkpoint_errors(tmp_path: Path) -> None:
    from pysparksources.errors import CheckpointError
    from pysparksources.files.sink.manifest import parse_manifest

    location = resolve(str(tmp_path / "log"))
    log = SourceLog(location)
    log.acquire(60)
    log.add(0, [LogEntry("/a", 1, 0, 1)], [])
    log.create_identity()
    log.release()
    (tmp_path / "log" / "0").write_text('v1\n{"path": "/a"\n')
    with pytest.raises(CheckpointError, match=r"^pyfile: source log file .*/0, line 2, is not an"):
        SourceLog(location).restore()
    (tmp_path / "log" / "identity.json").write_text("[]")
    with pytest.raises(CheckpointError, match=r"identity\.json is not a JSON object;"):
        SourceLog(location).identity()
    with pytest.raises(CheckpointError, match=r"^pyfile: x/0 is not a v1 file sink log"):
        parse_manifest(b"v2\n", "x/0")


def test_unreadable_and_vanished_files_name_themselves(tmp_path: Path) -> None:
    import pyarrow as pa

    from pysparksources.errors import CorruptFileError, DataLossError
    from pysparksources.files.formats._read_split import FileSplit, read_split

    (tmp_path / "bad.parquet").write_text("not parquet")
    schema = pa.schema([("id", pa.int64())])

    def read(name: str) -> list[pa.RecordBatch]:
        split = FileSplit(str(tmp_path / name), 11)
        return list(read_split(resolve(str(tmp_path)), split, schema, DEFAULTS.reader))

    with pytest.raises(CorruptFileError, match=r"^pyfile: cannot read parquet file file://.*bad"):
        read("bad.parquet")
    with pytest.raises(DataLossError, match=r"^pyfile: file file://.*gone.parquet was deleted"):
        read("gone.parquet")
