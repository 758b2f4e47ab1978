"""pyfile sink end to end on real Spark (classic and Connect), read back by Spark's readers."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from support.pyfile_sink import EXPRS, data_files, manifest_names, read_with_spark, run, sink
from support.streams import rate
from support.variants import CLASSIC_ONLY

pytestmark = pytest.mark.spark


def _expected(session: Any, total: int) -> Any:
    return session.range(total).withColumnRenamed("id", "value").selectExpr(*EXPRS)


def _same_rows(got: Any, expected: Any) -> None:
    """The same multiset of rows with the same column types: what count() and exceptAll() both
    ways showed, from one collect a side (the exceptAll shuffles cost ~1.7 CPU-s a call)."""
    assert [f.dataType for f in got.schema] == [f.dataType for f in expected.schema]
    assert Counter(map(tuple, got.collect())) == Counter(map(tuple, expected.collect()))


@pytest.mark.slow
def test_round_trip_parquet_classic_and_connect(session: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(rate(session, 3000, 1000).selectExpr(*EXPRS), out, tmp_path / "ck")
    assert manifest_names(out) == ["0", "1", "2"]
    _same_rows(read_with_spark(session, "parquet", out), _expected(session, 3000))


@pytest.mark.parametrize(
    ("fmt", "compression", "suffix"),
    [("json", "none", ".json"), ("csv", "gzip", ".csv.gz"), ("parquet", "zstd", ".zstd.parquet")],
)
@pytest.mark.slow
def test_round_trip_formats(
    spark: Any, tmp_path: Path, fmt: str, compression: str, suffix: str
) -> None:
    out = tmp_path / "out"
    df = rate(spark, 2000, 1000).selectExpr(*EXPRS)
    run(df, out, tmp_path / "ck", format=fmt, compression=compression)
    assert data_files(out) and all(f.endswith(suffix) for f in data_files(out))
    _same_rows(read_with_spark(spark, fmt, out), _expected(spark, 2000))


def test_text_and_compression(spark: Any, tmp_path: Path) -> None:
    session = spark
    out = tmp_path / "out"
    df = rate(session, 2000, 1000).selectExpr("CAST(value AS STRING) AS value")
    run(df, out, tmp_path / "ck", format="text", compression="gzip")
    assert all(f.endswith(".txt.gz") for f in data_files(out))
    got = sorted(int(r[0]) for r in session.read.text(str(out)).collect())
    assert got == list(range(2000))


@CLASSIC_ONLY
@pytest.mark.slow
def test_partition_by_hive_folders(session: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    df = rate(session, 2000, 1000).selectExpr(
        "value AS id", "value % 3 AS k", "IF(value % 5 = 0, NULL, concat('a:/ %', value % 2)) AS p"
    )
    run(df, out, tmp_path / "ck", format="json", partitionBy="k, p")
    folders = {Path(f).parent.relative_to(out).as_posix() for f in data_files(out)}
    assert "k=0/p=a%3A%2F %250" in folders
    assert "k=2/p=__HIVE_DEFAULT_PARTITION__" in folders
    rows = session.read.schema("id BIGINT").json(str(out)).collect()
    assert sorted(r.id for r in rows) == list(range(2000))
    for r in rows:  # partition discovery restores the values, escapes undone
        assert r.k == r.id % 3
        assert r.p == (None if r.id % 5 == 0 else f"a:/ %{r.id % 2}")


def test_manifest_lines_match_spark_file_sink(spark: Any, tmp_path: Path) -> None:
    native, ours = tmp_path / "native dir", tmp_path / "pyfile dir"
    df = rate(spark, 1000, 1000).selectExpr("value AS id")
    (
        df.writeStream.format("parquet")
        .option("path", str(native))
        .option("checkpointLocation", str(tmp_path / "ck1"))
        .trigger(availableNow=True)
        .start()
        .awaitTermination(120)
    )
    run(df, ours, tmp_path / "ck2")
    theirs = (native / "_spark_metadata" / "0").read_text().split("\n")
    mine = (ours / "_spark_metadata" / "0").read_text().split("\n")
    assert mine[0] == theirs[0] == "v1"
    a, b = json.loads(theirs[1]), json.loads(mine[1])
    assert list(a) == list(b)
    assert {k: type(v) for k, v in a.items()} == {k: type(v) for k, v in b.items()}
    assert (a["isDir"], a["action"], a["blockReplication"]) == (b["isDir"], b["action"], 1)
    assert a["path"].startswith(f"file://{tmp_path}/native%20dir/part-")
    assert b["path"].startswith(f"file://{tmp_path}/pyfile%20dir/part-")
    assert b["size"] == Path(data_files(ours)[0]).stat().st_size


def test_spark_readers_honour_the_manifest(spark: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(rate(spark, 2000, 1000).selectExpr("value AS id"), out, tmp_path / "ck")
    # A file no batch committed (a crashed task's leftover) must stay invisible.
    shutil.copy(data_files(out)[0], out / "part-99999-stray.snappy.parquet")
    assert sorted(r.id for r in spark.read.parquet(str(out)).collect()) == list(range(2000))
    # Spark's own file stream source reads the same manifest.
    copy = tmp_path / "copy"
    (
        spark.readStream.schema("id BIGINT")
        .parquet(str(out))
        .writeStream.format("parquet")
        .option("path", str(copy))
        .option("checkpointLocation", str(tmp_path / "ck2"))
        .trigger(availableNow=True)
        .start()
        .awaitTermination(120)
    )
    assert sorted(r.id for r in spark.read.parquet(str(copy)).collect()) == list(range(2000))


def test_compaction_every_ten_batches(spark: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    # 11 batches: batch 9 compacts, batch 10 shows plain deltas resume after it.
    run(rate(spark, 1100, 100, partitions=1).selectExpr("value AS id"), out, tmp_path / "ck")
    names = manifest_names(out)
    assert names == sorted([*map(str, range(9)), "9.compact", "10"])
    compact = (out / "_spark_metadata" / "9.compact").read_text().split("\n")
    assert compact[0] == "v1" and len(compact) == 11  # every file of batches 0..9
    assert sorted(r.id for r in spark.read.parquet(str(out)).collect()) == list(range(1100))


def test_replayed_batch_writes_nothing_twice(spark: Any, tmp_path: Path) -> None:
    out, ck = tmp_path / "out", tmp_path / "ck"
    run(rate(spark, 2000, 1000).selectExpr("value AS id"), out, ck)
    before = (manifest_names(out), data_files(out))
    assert before[0] == ["0", "1"]
    # Forget that batch 1 was committed: Spark replays it on restart, as after a crash
    # between the sink's commit and the checkpoint's commit log.
    for name in ("1", ".1.crc"):
        (ck / "commits" / name).unlink()
    query = run(rate(spark, 2000, 1000).selectExpr("value AS id"), out, ck)
    assert json.loads(query.recentProgress[0].json)["batchId"] == 1
    assert (manifest_names(out), data_files(out)) == before
    assert sorted(r.id for r in spark.read.parquet(str(out)).collect()) == list(range(2000))


def test_failed_batch_is_aborted_and_invisible(spark: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    # Row 2900 (partition 0) sleeps 3 s, then fails: partition 1 has reported its file by then,
    # so abort() gets a message to act on. (A task that finishes after the failure is covered
    # in test_inprocess.py: abort finds its file by the batch tag.)
    late_failure = (
        "value = 2900 AND length(coalesce(reflect('java.lang.Thread', 'sleep', "
        "CAST(3000 AS BIGINT)), '')) >= 0"
    )
    df = rate(spark, 3000, 1000).selectExpr(f"IF({late_failure}, raise_error('boom'), value) AS id")
    query = sink(df, out, tmp_path / "ck")
    with pytest.raises(Exception, match="boom"):
        query.awaitTermination(120)
    assert manifest_names(out) == ["0", "1"]
    assert not [f for f in data_files(out) if "-b2-" in f], "batch 2's files were left behind"
    assert sorted(r.id for r in spark.read.parquet(str(out)).collect()) == list(range(2000))


def test_batch_write_appends_and_refuses_a_stream_folder(spark: Any, tmp_path: Path) -> None:
    out = tmp_path / "batch"
    for _ in range(2):
        writer = spark.range(100).write.format("pyfile").mode("append")
        writer.option("format", "json").save(str(out))
    assert not (out / "_temporary").exists()
    ids = sorted(r.id for r in spark.read.schema("id BIGINT").json(str(out)).collect())
    assert ids == sorted([*range(100), *range(100)])
    stream_out = tmp_path / "stream"
    run(rate(spark, 10, 10).selectExpr("value AS id"), stream_out, tmp_path / "ck")
    with pytest.raises(Exception, match="streaming sink's output"):
        spark.range(3).write.format("pyfile").mode("append").save(str(stream_out))


@pytest.mark.slow
def test_superseded_manifest_files_go_as_in_spark_file_sink(spark: Any, tmp_path: Path) -> None:
    """Spark's sink and pyfile, same retention settings, same stream: the same files remain."""
    native, ours = tmp_path / "native", tmp_path / "ours"
    # Spark's sink reads its settings from the session; a separate session keeps the shared
    # one untouched. pyfile takes the same settings as options (Python sinks see no conf).
    settings = {
        "spark.sql.streaming.minBatchesToRetain": "2",
        "spark.sql.streaming.fileSink.log.cleanupDelay": "0",
    }
    isolated = spark.newSession()
    for key, value in settings.items():
        isolated.conf.set(key, value)
    # 12 batches: files go after batch b once b + 1 - minBatchesToRetain reaches the compact
    # interval (10), so batch 11 is the first that deletes; a later one would change nothing.
    (
        rate(isolated, 1200, 100, partitions=1)
        .selectExpr("value AS id")
        .writeStream.format("parquet")
        .option("path", str(native))
        .option("checkpointLocation", str(tmp_path / "ck1"))
        .trigger(availableNow=True)
        .start()
        .awaitTermination(180)
    )
    df = rate(spark, 1200, 100, partitions=1).selectExpr("value AS id")
    run(df, ours, tmp_path / "ck2", minBatchesToRetain=2, logCleanupDelay="0s")
    assert manifest_names(native) == ["10", "11", "9.compact"]
    assert manifest_names(ours) == manifest_names(native)
    # Every reader still sees every row: Spark's batch reader and pyfile's source.
    assert sorted(r.id for r in spark.read.parquet(str(ours)).collect()) == list(range(1200))
    back = spark.read.format("pyfile").schema("id BIGINT").load(str(ours))
    assert sorted(r.id for r in back.collect()) == list(range(1200))
