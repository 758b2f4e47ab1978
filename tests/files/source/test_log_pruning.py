"""Compaction drops entries that can never matter again (no JVM): exactly-once still holds and
start-up work stays flat however many files the stream has seen."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from pyspark.sql.types import LongType, StringType, StructField, StructType

from pysparksources._core.compat import ReadMaxFiles
from pysparksources.files.planning import FilePartition
from pysparksources.files.reader import FileStreamReader
from pysparksources.files.source.source_log import LogEntry, SourceLog, prune
from pysparksources.files.storage.filesystem import resolve
from support.pyfile_source import stream_reader

SCHEMA = StructType([StructField("id", LongType()), StructField("name", StringType())])
BASE = 1_700_000_000.0


def land(src: Path, name: str, mtime: float) -> str:
    path = src / name
    path.write_text("1,a\n")
    os.utime(path, (mtime, mtime))
    return str(path)


def reader(src: Path, log: Path, **extra: str) -> FileStreamReader:
    options = {"path": str(src), "format": "csv", "sourceLogLocation": str(log), **extra}
    return stream_reader({"maxFileAge": "10s", **options}, SCHEMA)


def files_of(r: FileStreamReader, start: dict[str, Any], end: dict[str, Any]) -> list[str]:
    parts = r.partitions(start, end)
    return sorted(s.path for p in parts if isinstance(p, FilePartition) for s in p.splits)


def compact_entries(log: Path) -> int:
    newest = max(int(p.name.split(".")[0]) for p in log.glob("*.compact"))
    return len((log / f"{newest}.compact").read_text().splitlines()) - 1


def test_pruned_log_keeps_exactly_once_and_replays(tmp_path: Path) -> None:
    src, log = tmp_path / "in", tmp_path / "log"
    src.mkdir()
    landed = [land(src, f"f{i:02d}.csv", BASE + 5 * i) for i in range(40)]
    taken: list[str] = []
    offset: dict[str, Any] = {"logOffset": -1}
    r = reader(src, log)
    for step in range(25):
        if step == 8:
            # Crash after batch 8 is in the source log but before Spark's WAL holds its offset:
            # the next offset (batch 9, a compaction batch) covers batches 8 and 9.
            r.latestOffset(offset, ReadMaxFiles(1))
            r.stop()
            r = reader(src, log)
            continue
        # Batch 9 spans 15 s, more than maxFileAge, so compacting drops batch 8's file unless
        # uncommitted batches are kept.
        limit = ReadMaxFiles(4 if step == 9 else 1)
        end = r.latestOffset(offset, limit)
        batch = files_of(r, offset, end)
        if step in (9, 19):
            # Crash after the offset is durable, before the batch commits: a new run replays it.
            r.stop()
            r = reader(src, log)
            assert files_of(r, offset, end) == batch
        taken += batch
        r.commit(end)
        offset = end
        if step == 13:
            # A late file, older than the newest but within maxFileAge, is read once; one older
            # than maxFileAge never is (Spark's rule). A restart follows, so a fresh listing
            # sees them (within a run, files already listed are served from the cache first).
            landed.append(land(src, "late.csv", BASE + 5 * 15))
            land(src, "ancient.csv", BASE)
        if step % 7 == 6:
            r.stop()
            r = reader(src, log)
    while True:
        end = r.latestOffset(offset, ReadMaxFiles(5))
        if end == offset:
            break
        taken += files_of(r, offset, end)
        r.commit(end)
        offset = end
    r.stop()
    assert sorted(taken) == sorted(landed)  # every file once, across restarts and replays
    assert compact_entries(log) <= 8  # maxFileAge covers ~3 files, plus protected batches


def test_latest_first_with_a_limit_keeps_everything(tmp_path: Path) -> None:
    src, log = tmp_path / "in", tmp_path / "log"
    src.mkdir()
    for i in range(12):
        land(src, f"f{i:02d}.csv", BASE + 5 * i)
    r = reader(src, log, latestFirst="true", maxFilesPerTrigger="1")
    offset: dict[str, Any] = {"logOffset": -1}
    for _ in range(12):
        end = r.latestOffset(offset, ReadMaxFiles(1))
        r.commit(end)
        offset = end
    r.stop()
    assert compact_entries(log) == 10  # maxFileAge does not apply: nothing is dropped


def write_history(log: Path, files: int, per_batch: int = 100) -> None:
    """A stream that took ``files`` files, one per ms, compacted with maxFileAge = 1 s."""
    source_log = SourceLog(resolve(str(log)))
    source_log.acquire(60)
    history: list[LogEntry] = []
    for batch in range(files // per_batch):
        entries = [
            LogEntry(f"/in/f{batch}-{i}", batch * per_batch + i, batch, 1) for i in range(per_batch)
        ]
        if source_log.is_compaction_batch(batch):
            history = prune(history, entries[-1].timestamp - 1000, batch - 1)
        source_log.add(batch, entries, history)
        history.extend(entries)
    source_log.release()


def test_start_up_work_stays_flat_with_history(tmp_path: Path) -> None:
    figures = {}
    for files in (1_000, 100_000):
        log = tmp_path / f"log{files}"
        write_history(log, files)
        (tmp_path / "in").mkdir(exist_ok=True)
        r = stream_reader(
            {
                "path": str(tmp_path / "in"),
                "format": "csv",
                "sourceLogLocation": str(log),
                "maxFileAge": "1s",
            },
            SCHEMA,
        )
        t0 = time.perf_counter()
        state = r._driver()
        figures[files] = (len(state.history), len(state.seen), time.perf_counter() - t0)
        r.stop()
    small, large = figures[1_000], figures[100_000]
    assert large[0] <= small[0] + 100 and large[1] <= small[1] + 100, figures
    assert large[0] < 2_000, figures  # not 100,000
