"""Spark FileStreamSource semantics through real queries (classic session)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from support.pyfile_source import ids_in, stream, write_parquet
from support.streams import progress, run_available_now

pytestmark = pytest.mark.spark


def rows_per_batch(query: Any) -> list[int]:
    return [b["numInputRows"] for b in progress(query) if b["numInputRows"]]


def logged(log: Path, batch: int) -> list[str]:
    lines = (log / str(batch)).read_text().splitlines()[1:]
    return [Path(json.loads(line)["path"]).name for line in lines]


@pytest.mark.slow
def test_late_file_with_old_mtime_is_read_once_and_too_old_is_not(
    spark: Any, tmp_path: Path
) -> None:
    src, log, out, ck = (tmp_path / n for n in ("in", "log", "out", "ck"))
    now = time.time()
    write_parquet(src / "a.parquet", range(0, 2), now)
    run_available_now(stream(spark, src, log, maxFileAge="1h"), out, ck)
    # Lands after the first batch, with a modification time 30 minutes before the newest file.
    write_parquet(src / "late.parquet", range(2, 4), now - 1800)
    write_parquet(src / "ancient.parquet", range(90, 92), now - 7200)
    query = run_available_now(stream(spark, src, log, maxFileAge="1h"), out, ck)
    assert rows_per_batch(query) == [2]
    assert ids_in(spark, out) == [0, 1, 2, 3]
    query = run_available_now(stream(spark, src, log, maxFileAge="1h"), out, ck)
    assert rows_per_batch(query) == []


@pytest.mark.slow
def test_latest_first_and_max_bytes(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "in"
    now = time.time()
    # Three files: enough to show an order and a byte limit that takes two files, then one.
    for i in range(3):
        write_parquet(src / f"f{i}.parquet", range(i * 3, i * 3 + 3), now - 100 + i)
    log = tmp_path / "log1"
    df = stream(spark, src, log, maxFilesPerTrigger=1, latestFirst="true")
    assert rows_per_batch(run_available_now(df, tmp_path / "o1", tmp_path / "c1")) == [3] * 3
    assert [logged(log, b) for b in range(3)] == [
        ["f2.parquet"],
        ["f1.parquet"],
        ["f0.parquet"],
    ]

    size = (src / "f0.parquet").stat().st_size
    log = tmp_path / "log2"
    df = stream(spark, src, log, maxBytesPerTrigger=str(size * 2 + 10))
    assert rows_per_batch(run_available_now(df, tmp_path / "o2", tmp_path / "c2")) == [6, 3]
    assert logged(log, 0) == ["f0.parquet", "f1.parquet"]
    df = stream(spark, src, tmp_path / "log3", maxBytesPerTrigger="1")
    assert rows_per_batch(run_available_now(df, tmp_path / "o3", tmp_path / "c3")) == [3] * 3


def test_clean_source_archive(spark: Any, tmp_path: Path) -> None:
    src, log, out, ck, archive = (tmp_path / n for n in ("in", "log", "out", "ck", "archive"))
    now = time.time()
    for i in range(3):
        write_parquet(src / "sub" / f"f{i}.parquet", range(i, i + 1), now - 10 + i)
    # Files in a plain subfolder are read with recursiveFileLookup only, as in Spark.
    options = {
        "maxFilesPerTrigger": 1,
        "cleanSource": "archive",
        "sourceArchiveDir": archive,
        "recursiveFileLookup": "true",
    }
    run_available_now(stream(spark, src, log, **options), out, ck)
    # Batches 0 and 1 were committed during the run; the last is cleaned at the next start.
    deadline = time.monotonic() + 30
    while len(list(archive.rglob("*.parquet"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    archived = sorted(p.name for p in archive.rglob("*.parquet"))
    assert archived[:2] == ["f0.parquet", "f1.parquet"]
    assert (archive / str(src).lstrip("/") / "sub" / "f0.parquet").exists()
    assert not (src / "sub" / "f0.parquet").exists()
    assert ids_in(spark, out) == [0, 1, 2]


def test_spark_metadata_input_reads_only_committed_files(spark: Any, tmp_path: Path) -> None:
    # A folder written by Spark's own file sink, plus a stray file no batch committed.
    seed = tmp_path / "seed"
    write_parquet(seed / "s.parquet", range(5))
    sink_out = tmp_path / "sinkout"
    query = (
        spark.readStream.schema("id BIGINT, name STRING")
        .parquet(str(seed))
        .writeStream.format("parquet")
        .option("path", str(sink_out))
        .option("checkpointLocation", str(tmp_path / "sinkck"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    write_parquet(sink_out / "stray-uncommitted.parquet", range(100, 110))
    out, ck = tmp_path / "out", tmp_path / "ck"
    run_available_now(stream(spark, sink_out, tmp_path / "log"), out, ck)
    assert ids_in(spark, out) == [0, 1, 2, 3, 4]
