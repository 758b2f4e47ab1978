"""cleanSource=delete and a failing cleanup, through real queries (classic session)."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import pytest

from pysparksources.files.source.clean_source import SourceCleaner
from pysparksources.files.storage.filesystem import resolve
from support.pyfile_source import ids_in, stream, write_parquet
from support.streams import progress, run_available_now

pytestmark = pytest.mark.spark


def _wait_gone(paths: list[Path], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while any(p.exists() for p in paths) and time.monotonic() < deadline:
        time.sleep(0.2)


def test_clean_source_delete_removes_committed_batches(spark: Any, tmp_path: Path) -> None:
    src, log, out, ck = (tmp_path / n for n in ("in", "log", "out", "ck"))
    now = time.time()
    files = [write_parquet(src / f"f{i}.parquet", range(i, i + 1), now - 10 + i) for i in range(3)]
    options: dict[str, Any] = {"maxFilesPerTrigger": 1, "cleanSource": "delete"}
    run_available_now(stream(spark, src, log, **options), out, ck)
    # Batches 0 and 1 were committed during the run; the last one waits for the next run.
    _wait_gone(files[:2])
    assert [p.exists() for p in files] == [False, False, True]
    assert ids_in(spark, out) == [0, 1, 2]
    late = write_parquet(src / "f3.parquet", range(3, 4), now)
    run_available_now(stream(spark, src, log, **options), out, ck)
    _wait_gone(files[2:])
    assert not files[2].exists()
    assert ids_in(spark, out) == [0, 1, 2, 3]  # nothing read twice, nothing lost
    assert late.exists()  # its batch is the last of this run


def test_clean_source_failure_never_fails_the_query(spark: Any, tmp_path: Path) -> None:
    src, log, out, ck = (tmp_path / n for n in ("in", "log", "out", "ck"))
    # The archive folder is a plain file: every move under it fails.
    blocked = tmp_path / "archive"
    blocked.write_text("not a folder")
    now = time.time()
    files = [write_parquet(src / f"f{i}.parquet", range(i, i + 1), now - 10 + i) for i in range(3)]
    options: dict[str, Any] = {
        "maxFilesPerTrigger": 1,
        "cleanSource": "archive",
        "sourceArchiveDir": blocked,
    }
    batches = progress(run_available_now(stream(spark, src, log, **options), out, ck))
    assert sum(b["numInputRows"] for b in batches) == 3
    run_available_now(stream(spark, src, log, **options), out, ck)  # restart cleans again
    assert ids_in(spark, out) == [0, 1, 2]
    assert all(p.exists() for p in files)  # left in place, not lost
    assert blocked.read_text() == "not a folder"


def test_cleaner_logs_each_failure(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The failure is logged with the file's URL (the Spark test above runs in a worker)."""
    blocked = tmp_path / "archive"
    blocked.write_text("x")
    src = write_parquet(tmp_path / "in" / "a.parquet", range(1))
    source = resolve(str(tmp_path / "in"))
    cleaner = SourceCleaner("archive", source, resolve(str(blocked)), source.path)
    with caplog.at_level(logging.WARNING, logger="pysparksources.files.source.clean_source"):
        cleaner.submit([str(src)])
        cleaner.close()
    assert src.exists()
    assert any("cleanSource=archive failed" in r.getMessage() for r in caplog.records)
    assert any(str(src) in r.getMessage() for r in caplog.records)


def _write_batch_then_die(src: Path, log: Path, start: dict[str, Any], **options: Any) -> None:
    """What a run killed between writing a log batch and Spark's WAL leaves behind."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from pysparksources._core.compat import ReadMaxFiles
    from pysparksources.errors import SourceLogInUseError
    from support.pyfile_source import stream_reader

    schema = StructType([StructField("id", LongType()), StructField("name", StringType())])
    raw = {
        "path": str(src),
        "sourceLogLocation": str(log),
        **{k: str(v) for k, v in options.items()},
    }
    deadline = time.monotonic() + 30
    while True:  # the last run's source may release its lease a moment after the query ends
        reader = stream_reader(raw, schema)
        try:
            reader.latestOffset(start, ReadMaxFiles(1))
            break
        except SourceLogInUseError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
        finally:
            reader.stop()


@pytest.mark.slow
def test_clean_source_covers_every_file_of_a_restarted_batch(spark: Any, tmp_path: Path) -> None:
    src, log, out, ck = (tmp_path / n for n in ("in", "log", "out", "ck"))
    now = time.time()
    files = [write_parquet(src / f"f{i}.parquet", range(i, i + 1), now - 10 + i) for i in range(3)]
    options: dict[str, Any] = {"maxFilesPerTrigger": 1, "cleanSource": "delete"}
    batches = progress(run_available_now(stream(spark, src, log, **options), out, ck))
    # A run dies after writing log batch 3 (f3) to the log, before Spark's WAL holds it.
    files.append(write_parquet(src / "f3.parquet", range(3, 4), now - 5))
    _write_batch_then_die(src, log, batches[-1]["sources"][0]["endOffset"], **options)
    # The next run's only batch spans log batches 3 and 4 (f3, f4); it commits at the run after.
    files.append(write_parquet(src / "f4.parquet", range(4, 5), now - 4))
    run_available_now(stream(spark, src, log, **options), out, ck)
    files.append(write_parquet(src / "f5.parquet", range(5, 6), now - 3))
    run_available_now(stream(spark, src, log, **options), out, ck)
    _wait_gone(files[:5])
    # Every file of every committed batch is gone; the last run's own batch waits, as in Spark.
    assert [p.name for p in files if p.exists()] == ["f5.parquet"]
    assert ids_in(spark, out) == list(range(6))
