"""Spark's FileStreamSinkSuite (and FileStreamSinkUnitSuite, FileStreamStressSuite) as a
checklist: each scenario that applies to pyfile's sink, run through pyfile and, on the classic
session, through Spark's own file sink on the same input, read back with Spark's readers and
compared. docs/spark-file-stream-tests.md maps each Spark test name to its counterpart."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pysparksources.files.sink.manifest import ManifestLog, committed_files
from support.spark_parity import compares_with_spark
from support.streams import progress
from support.variants import CLASSIC_ONLY

pytestmark = pytest.mark.spark


def numbers(session: Any, total: int, per_batch: int, partitions: int = 2) -> Any:
    return (
        session.readStream.format("pyrate")
        .option("rowsPerBatch", per_batch)
        .option("maxRowsPerTrigger", per_batch)
        .option("totalRows", total)
        .option("numPartitions", partitions)
        .load()
    )


def start(
    df: Any, fmt: str, out: Path | str, ck: Path, partition_by: tuple[str, ...] = (), **options: str
) -> Any:
    writer = df.writeStream.format(fmt).option("checkpointLocation", str(ck))
    if partition_by and fmt != "pyfile":
        writer = writer.partitionBy(*partition_by)
    elif partition_by:
        writer = writer.option("partitionBy", ",".join(partition_by))
    for key, value in options.items():
        writer = writer.option(key, value)
    return writer.trigger(availableNow=True).start(str(out))


def finish(query: Any) -> list[dict[str, Any]]:
    query.awaitTermination(300)
    assert query.exception() is None, query.exception()
    return progress(query)


def manifest_files(out: Path) -> list[Path]:
    files = committed_files(str(out))
    assert files is not None
    return [Path(f.removeprefix("file://")) for f in files]


def data_files(out: Path) -> list[Path]:
    return sorted(
        p
        for p in out.rglob("part-*")
        if p.is_file() and not any(part.startswith(("_", ".")) for part in p.relative_to(out).parts)
    )


@CLASSIC_ONLY
@pytest.mark.slow
def test_partitioned_output_matches_sparks_file_sink(session: Any, tmp_path: Path) -> None:
    """partitioned writing and batch reading (also with 'basePath'); SPARK-21167 (partition
    values with a space); special characters in output path; Handle FileStreamSink metadata
    correctly for empty partition; SPARK-23288's subject: the rows each batch wrote."""
    df = (
        numbers(session, 12, 6)
        .selectExpr(
            "value AS id",
            "value * 1000 AS v",
            "CASE value % 3 WHEN 0 THEN 'hello world' WHEN 1 THEN 'a%b' ELSE 'x=y' END AS p",
            "CAST(-(value % 2) AS INT) AS id2",
        )
        .repartition(8)  # 6 rows a batch over 8 tasks: some tasks write nothing
    )
    ours, theirs = tmp_path / "output @#output", tmp_path / "native @#output"
    batches = finish(start(df, "pyfile", ours, tmp_path / "ck1", ("p", "id2")))
    assert [b["sink"]["numOutputRows"] for b in batches if b["numInputRows"]] == [6, 6]
    compare = compares_with_spark(session)
    if compare:
        # Spark's sink resolves a relative path against the driver's working directory.
        relative = os.path.relpath(theirs, Path.cwd())
        finish(start(df, "parquet", relative, tmp_path / "ck2", ("p", "id2")))

    def read(folder: Path, base: bool = False) -> tuple[str, list[tuple[Any, ...]]]:
        reader = session.read
        if base:
            reader = reader.option("basePath", str(folder))
        found = reader.parquet(f"{folder}/*/*" if base else str(folder))
        rows = found.select("id", "v", "p", "id2").collect()
        return found.schema.simpleString(), sorted(tuple(r) for r in rows)

    expected = sorted(
        (i, i * 1000, ("hello world", "a%b", "x=y")[i % 3], -(i % 2)) for i in range(12)
    )
    schema, rows = read(ours)
    assert rows == expected
    assert read(ours, base=True)[1] == expected
    assert schema == "struct<id:bigint,v:bigint,p:string,id2:int>"
    if compare:
        assert read(theirs) == (schema, rows)
        assert read(theirs, base=True)[1] == expected
    assert "_spark_metadata" in os.listdir(ours)
    listed = manifest_files(ours)
    assert sorted(listed) == data_files(ours)  # no stray file, none missing
    assert all(pq.ParquetFile(f).metadata.num_rows > 0 for f in listed)  # no empty file
    assert any("p=hello world" in str(f) for f in listed)


@CLASSIC_ONLY
@pytest.mark.slow
def test_aggregation_with_watermark_in_append_mode(session: Any, tmp_path: Path) -> None:
    """writing with aggregation: windows are written once the watermark passes them (the
    no-data batch emits them), each exactly once."""
    from pyspark.sql import functions as F

    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    counter = [0]

    def land(*seconds: int) -> None:
        counter[0] += 1
        staged = tmp_path / f".staged{counter[0]}"
        staged.write_text("".join(json.dumps({"time": s}) + "\n" for s in seconds))
        os.replace(staged, src / f"f{counter[0]}.json")

    windows = (
        session.readStream.format("pyfile")
        .option("format", "json")
        .option("sourceLogLocation", str(tmp_path / "log"))
        .schema("time BIGINT")
        .load(str(src))
        .selectExpr("timestamp_seconds(time) AS timestamp")
        .withWatermark("timestamp", "10 seconds")
        .groupBy(F.window("timestamp", "5 seconds").alias("w"))
        .count()
        .selectExpr("CAST(w.start AS BIGINT) AS start", "CAST(w.end AS BIGINT) AS end", "count")
    )
    query = (
        windows.writeStream.format("pyfile")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(processingTime="200 milliseconds")
        .start(str(out))
    )

    def written() -> list[tuple[int, int, int]]:
        found = session.read.schema("start BIGINT, end BIGINT, count BIGINT").parquet(str(out))
        return sorted(tuple(r) for r in found.collect())

    try:
        land(100, 104, 123)  # watermark 113 after this batch: only window 100-105 is complete
        query.processAllAvailable()
        assert written() == [(100, 105, 2)]
        land(140)  # watermark 130: window 120-125 is complete
        query.processAllAvailable()
        assert written() == [(100, 105, 2), (120, 125, 1)]
    finally:
        query.stop()
    assert query.exception() is None, query.exception()


def _fails(writer: Any, out: Path) -> str:
    with pytest.raises(Exception) as caught:
        writer.trigger(availableNow=True).start(str(out)).awaitTermination(120)
    return str(caught.value)


def test_update_mode_and_orc_are_refused_at_start(session: Any, tmp_path: Path) -> None:
    """Update and Complete output mode not supported (complete: test_sink_errors_spark.py);
    orc: pyfile's sink writes parquet, csv, json and text only, and says so."""
    if compares_with_spark(session):  # Spark refuses it before pyfile is asked
        counts = numbers(session, 10, 10).groupBy().count()
        update = counts.writeStream.format("pyfile").outputMode("update")
        update = update.option("checkpointLocation", str(tmp_path / "ck1"))
        assert "Update mode" in _fails(update, tmp_path / "o1")
    orc = numbers(session, 10, 10).writeStream.format("pyfile").option("format", "orc")
    message = _fails(orc.option("checkpointLocation", str(tmp_path / "ck2")), tmp_path / "o2")
    assert "'format'" in message and "parquet, csv, json, text" in message


@CLASSIC_ONLY
@pytest.mark.slow
def test_a_failed_batch_is_retried_exactly_once_after_restart(
    session: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """fault tolerance stress test - partitioned output (one injected failure, then a restart
    from the checkpoint); cleanup incomplete output for aborted task: nothing of the failed
    attempt stays beside the committed files. parquet/orc/text/json with relativizeOutputPath:
    the output path is relative, resolved against the driver's working directory as Spark's
    sink does (over Connect the server's: pyfile wrote into the Python worker's per-session
    folder, deleted with the session, before it used the driver's)."""
    from pyspark.sql.functions import udf

    marker = tmp_path / "fail-once"
    marker.write_text("")
    flag = str(marker)

    @udf("bigint")  # type: ignore[misc]
    def fail_once(value: int) -> int:
        if value == 15 and os.path.exists(flag):
            os.remove(flag)
            # The other task has written its file by then: abort() removes it (a task still
            # writing after abort() may leave an orphan no reader sees, as in Spark's sink).
            time.sleep(3)
            raise RuntimeError("injected failure")
        return value

    df = (
        numbers(session, 20, 10)  # batch 1 (rows 10-19) fails once, then is retried
        .select(fail_once("value").alias("id"))
        .selectExpr("id", "CAST(id % 3 AS INT) AS k")
    )
    out, ck = tmp_path / "out", tmp_path / "ck"
    classic = compares_with_spark(session)
    cwd = Path.cwd() if classic else request.getfixturevalue("connect_server").log.parent
    relative = os.path.relpath(out, cwd)
    with pytest.raises(Exception, match="injected failure"):
        start(df, "pyfile", relative, ck, ("k",)).awaitTermination(300)
    assert ManifestLog(_location(out)).latest_batch_id() == 0
    finish(start(df, "pyfile", relative, ck, ("k",)))
    found = session.read.parquet(str(out)).collect()
    assert sorted((r.id, r.k) for r in found) == [(i, i % 3) for i in range(20)]
    assert sorted(manifest_files(out)) == data_files(out)


def _location(out: Path) -> Any:
    from pysparksources.files.storage.filesystem import resolve

    return resolve(str(out / "_spark_metadata"))


# -- FileStreamSinkUnitSuite: the sink's calls driven in-process ----------------------------
FRUITS = ["apple", "peach", "citron"]


def _writer(out: Path) -> Any:
    from pyspark.sql.types import StringType, StructField, StructType

    from support.pyfile_sink import stream_writer

    schema = StructType([StructField("value", StringType())])
    return stream_writer({"path": str(out), "format": "text"}, schema)


def _task(writer: Any) -> Any:
    return writer.write(iter([pa.record_batch({"value": pa.array(FRUITS)})]))


def _committed_lines(out: Path) -> list[str]:
    return sorted(line for f in manifest_files(out) for line in f.read_text().splitlines())


def test_adding_a_batch_again_does_not_duplicate(tmp_path: Path) -> None:
    """add batch results in files; add same batch again will not duplicate results; adding
    batch again after job commit failure (the commit never ran) should not duplicate items."""
    out = tmp_path / "out"
    lost = _task(_writer(out))  # a run that dies before its commit: files, no manifest entry
    writer = _writer(out)
    writer.commit([_task(writer)], 1)
    assert _committed_lines(out) == sorted(FRUITS)
    again = _writer(out)
    again.commit([_task(again)], 1)  # a replay of a committed batch adds nothing
    assert _committed_lines(out) == sorted(FRUITS)
    assert all(out / f.relative not in manifest_files(out) for f in lost.files)


def test_adding_a_batch_again_after_a_failing_commit_does_not_duplicate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """adding batch again after job commit throwing exception should not duplicate items."""
    out = tmp_path / "out"
    writer = _writer(out)
    message = _task(writer)
    original = ManifestLog.add

    def failing(self: Any, batch_id: int, entries: Any) -> None:
        raise OSError("simulated failure writing the manifest")

    monkeypatch.setattr(ManifestLog, "add", failing)
    with pytest.raises(OSError, match="simulated"):
        writer.commit([message], 1)
    writer.abort([message], 1)
    monkeypatch.setattr(ManifestLog, "add", original)
    retry = _writer(out)
    retry.commit([_task(retry)], 1)
    assert _committed_lines(out) == sorted(FRUITS)
    assert sorted(manifest_files(out)) == data_files(out)


def test_output_folder_names_are_taken_literally(tmp_path: Path) -> None:
    """SPARK-21996/SPARK-43343 (read from text files generated by file sink -- file name has
    special chars): Spark's sink writes into `text[123]text` or `out*` as named folders; so
    does pyfile's (it used to refuse them as globs). The read back through an escaped path is
    in tests/files_source/test_spark_parity_source.py."""
    for name in ("text[123]text", "a{b,c}", "out*", "out?x", "text text"):
        out = tmp_path / name
        writer = _writer(out)
        writer.commit([_task(writer)], 0)
        assert _committed_lines(out) == sorted(FRUITS), name
        assert sorted(manifest_files(out)) == data_files(out), name
