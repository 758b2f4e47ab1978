"""pyfile as a streaming source in real Spark queries, on a classic session and over Connect."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from pysparksources.files.offsets import LogOffset
from support.pyfile_source import ids_in, stream, write_parquet, write_rows
from support.streams import checkpoint_offsets, progress, run_available_now

pytestmark = pytest.mark.spark


@pytest.mark.slow
def test_available_now_in_batches_then_restart_reads_only_new_files(
    session: Any, tmp_path: Path
) -> None:
    src, log, out, ck = (tmp_path / n for n in ("in", "log", "out", "ck"))
    base = time.time() - 100
    # Three files at two per batch: a full batch, then the rest.
    for i in range(3):
        write_parquet(src / f"f{i}.parquet", range(i * 10, i * 10 + 10), base + i)
    write_parquet(src / "_hidden.parquet", range(900, 901), base)
    write_parquet(src / ".hidden" / "x.parquet", range(901, 902), base)

    batches = progress(run_available_now(stream(session, src, log, maxFilesPerTrigger=2), out, ck))
    rows = [b["numInputRows"] for b in batches if b["numInputRows"]]
    assert rows == [20, 10]
    ends = [b["sources"][0]["endOffset"] for b in batches if b["numInputRows"]]
    log_id = ends[0]["logId"]  # the log's identity, the same in every offset
    assert ends == [{"logId": log_id, "logOffset": n} for n in range(2)]
    assert ids_in(session, out) == list(range(30))

    # A restart from the checkpoint reads only what landed since.
    write_parquet(src / "late.parquet", range(30, 33), base + 10)
    batches = progress(run_available_now(stream(session, src, log, maxFilesPerTrigger=2), out, ck))
    assert [b["numInputRows"] for b in batches if b["numInputRows"]] == [3]
    assert ids_in(session, out) == list(range(33))


@pytest.mark.parametrize("fmt", ["csv", "json", "orc"])
def test_formats_stream_in_order(spark: Any, tmp_path: Path, fmt: str) -> None:
    src, log, out, ck = (tmp_path / n for n in ("in", "log", "out", "ck"))
    base = time.time() - 100
    for i in range(3):
        write_rows(src / f"f{i}.{fmt}", fmt, range(i * 4, i * 4 + 4), base + i)
    batches = progress(
        run_available_now(stream(spark, src, log, fmt, maxFilesPerTrigger=1), out, ck)
    )
    assert [b["numInputRows"] for b in batches if b["numInputRows"]] == [4, 4, 4]
    rows = sorted((r.id, r.name) for r in spark.read.parquet(str(out)).collect())
    assert rows == [(i, f"n{i}") for i in range(12)]
    # What Spark stored decodes to the typed offset and encodes back to the same bytes.
    stored = checkpoint_offsets(ck)
    assert [LogOffset.from_json(line).batch_id for line in stored] == [0, 1, 2]
    assert [LogOffset.from_json(line).to_json() for line in stored] == stored


def test_text_needs_no_schema_and_keeps_lines(session: Any, tmp_path: Path) -> None:
    src, log, out, ck = (tmp_path / n for n in ("in", "log", "out", "ck"))
    (src).mkdir()
    (src / "a.txt").write_text("one\ntwo\r\nthree")
    df = (
        session.readStream.format("pyfile")
        .option("format", "text")
        .option("sourceLogLocation", str(log))
        .load(str(src))
    )
    assert df.schema.simpleString() == "struct<value:string>"
    query = (
        df.writeStream.format("parquet")
        .option("path", str(out))
        .option("checkpointLocation", str(ck))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(240)
    values = sorted(r.value for r in session.read.parquet(str(out)).collect())
    assert values == ["one", "three", "two"]


def test_partition_folders_and_timestamps(spark: Any, tmp_path: Path) -> None:
    src, log, out, ck = (tmp_path / n for n in ("in", "log", "out", "ck"))
    src.mkdir()
    for day in ("2024-01-01", "2024-01-02"):
        folder = src / f"day={day}" / "hour=7"
        folder.mkdir(parents=True)
        (folder / "x.csv").write_text("1,2024-01-02 03:04:05\n2,2024-01-02T03:04:05+01:00\n")
    schema = "id INT, ts TIMESTAMP, day DATE, hour INT"
    df = (
        spark.readStream.format("pyfile")
        .option("format", "csv")
        .option("sourceLogLocation", str(log))
        .schema(schema)
        .load(str(src))
    )
    run_available_now(df, out, ck)
    rows = spark.read.parquet(str(out)).collect()
    assert sorted((str(r.day), r.id, str(r.ts), r.hour) for r in rows) == [
        ("2024-01-01", 1, "2024-01-02 03:04:05", 7),
        ("2024-01-01", 2, "2024-01-02 02:04:05", 7),
        ("2024-01-02", 1, "2024-01-02 03:04:05", 7),
        ("2024-01-02", 2, "2024-01-02 02:04:05", 7),
    ]


def test_batch_read(session: Any, tmp_path: Path) -> None:
    src = tmp_path / "in"
    for i in range(3):
        write_parquet(src / f"f{i}.parquet", range(i * 5, i * 5 + 5))
    df = session.read.format("pyfile").schema("id BIGINT, name STRING").load(str(src))
    assert sorted(r.id for r in df.collect()) == list(range(15))
