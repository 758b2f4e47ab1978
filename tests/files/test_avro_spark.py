"""pyfile's avro format in real Spark: batch reads, streams on local disk and on S3 (moto),
the sink's Avro files read back, and Event Hubs Capture's files in Capture's folder layout,
exactly once across a SIGKILL. The type mapping and values are checked in process
(test_avro_format.py); here the integration."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import os
import time
from pathlib import Path
from typing import Any

import avro.datafile
import avro.io
import avro.schema
import fastavro
import pytest

from support import crash_drivers
from support.capture_files import CAPTURE_DDL, capture_file, capture_path, hive_capture_path
from support.object_stores import ObjectStore, store_param
from support.streams import run_available_now

pytestmark = pytest.mark.spark

PEOPLE = {
    "type": "record",
    "name": "Person",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": ["null", "string"]},
        {"name": "born", "type": {"type": "int", "logicalType": "date"}},
        {
            "name": "amount",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 6, "scale": 2},
        },
    ],
}
START = dt.datetime(2026, 11, 28, 10, 0, 0, tzinfo=dt.timezone.utc)


def _people(ids: range) -> list[dict[str, Any]]:
    return [
        {
            "id": i,
            "name": f"n{i}",
            "born": dt.date(2000, 1, 1) + dt.timedelta(days=i),
            "amount": decimal.Decimal(i * 25).scaleb(-2),
        }
        for i in ids
    ]


def _fastavro_bytes(ids: range) -> bytes:
    records = _people(ids)
    buffer = io.BytesIO()
    fastavro.writer(buffer, fastavro.parse_schema(PEOPLE), records, codec="snappy")
    return buffer.getvalue()


def _apache_file(path: Path, ids: range) -> None:
    schema = avro.schema.parse(json.dumps(PEOPLE))
    with path.open("wb") as f:
        writer = avro.datafile.DataFileWriter(f, avro.io.DatumWriter(), schema, codec="deflate")
        for r in _people(ids):
            writer.append(r)
        writer.close()


def _avro(spark: Any, **options: str) -> Any:
    return spark.read.format("pyfile").option("format", "avro").options(**options)


def test_batch_read_of_both_writers_then_the_sink_writes_avro_read_back(
    spark: Any, tmp_path: Path
) -> None:
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.avro").write_bytes(_fastavro_bytes(range(0, 10)))
    _apache_file(src / "b.avro", range(10, 20))
    df = _avro(spark).load(str(src))
    assert df.schema.simpleString() == (
        "struct<id:bigint,name:string,born:date,amount:decimal(6,2)>"
    )
    rows = sorted(df.collect(), key=lambda r: r.id)
    assert [r.id for r in rows] == list(range(20))
    assert rows[13].born == dt.date(2000, 1, 14) and str(rows[13].amount) == "3.25"

    out = tmp_path / "out"
    df.write.format("pyfile").mode("append").option("format", "avro").save(str(out))
    parts = sorted(p for p in out.iterdir() if p.suffix == ".avro")
    assert parts, list(out.iterdir())
    with parts[0].open("rb") as f:
        assert fastavro.reader(f).codec == "snappy"  # Spark's default codec for Avro
    back = sorted(_avro(spark).load(str(out)).collect(), key=lambda r: r.id)
    assert back == rows


@pytest.mark.parametrize("object_store", [store_param("s3")], indirect=True)
def test_a_stream_reads_avro_from_an_object_store(
    spark: Any, object_store: ObjectStore, tmp_path: Path
) -> None:
    fs = object_store.bucket("avro")
    for i in range(3):
        fs.pipe_file(f"avro/in/f{i}.avro", _fastavro_bytes(range(i * 10, i * 10 + 10)))
    df = (
        spark.readStream.format("pyfile")
        .option("format", "avro")
        .option("sourceLogLocation", object_store.url("avro/log"))
        .option("maxFilesPerTrigger", "2")
        .options(**object_store.fs_options())
        .load(object_store.url("avro/in"))
    )
    out = tmp_path / "out"
    run_available_now(df, out, tmp_path / "ck")
    ids = sorted(r.id for r in spark.read.parquet(str(out)).select("id").collect())
    assert ids == list(range(30))
    # The same files in a batch read, and written back to the store as Avro by the sink.
    batch = (
        spark.read.format("pyfile")
        .option("format", "avro")
        .options(**object_store.fs_options())
        .load(object_store.url("avro/in"))
    )
    batch.write.format("pyfile").option("format", "avro").options(**object_store.fs_options()).mode(
        "append"
    ).save(object_store.url("avro/copy"))
    assert fs.glob("avro/copy/*.avro")
    copied = (
        spark.read.format("pyfile")
        .option("format", "avro")
        .options(**object_store.fs_options())
        .load(object_store.url("avro/copy"))
    )
    assert sorted(r.id for r in copied.select("id").collect()) == list(range(30))


def _capture(root: Path, partition: int, files: int, events: int) -> None:
    for i in range(files):
        at = START + dt.timedelta(minutes=i)
        path = root / capture_path("ns", "hub", partition, at)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(capture_file(partition, i * events, events, at))


CAPTURE_GLOB = "ns/hub/*/*/*/*/*/*/*.avro"


def test_capture_files_stream_in_their_layout_and_bodies_become_columns(
    spark: Any, tmp_path: Path
) -> None:
    src = tmp_path / "capture"
    _capture(src, 0, 3, 20)
    _capture(src, 1, 2, 20)
    df = (
        spark.readStream.format("pyfile")
        .option("format", "avro")
        .option("sourceLogLocation", str(tmp_path / "log"))
        .load(str(src / CAPTURE_GLOB))
    )
    assert df.schema.simpleString() == CAPTURE_DDL
    # The documented recipe: Body is the event's bytes; JSON bodies become columns.
    events = df.selectExpr(
        "SequenceNumber",
        "Properties['source'].member2 AS source",
        "from_json(cast(Body AS STRING), 'id BIGINT, partition INT, reading DOUBLE') AS e",
    ).select("SequenceNumber", "source", "e.*")
    out = tmp_path / "out"
    run_available_now(events, out, tmp_path / "ck")
    rows = spark.read.parquet(str(out)).collect()
    assert sorted((r.partition, r.id) for r in rows) == sorted(
        [(0, i) for i in range(60)] + [(1, i) for i in range(40)]
    )
    assert all(r.SequenceNumber == r.id and r.source == "sensor" for r in rows)
    assert {r.reading for r in rows if r.id == 6} == {1.5}


def test_capture_files_in_a_hive_style_layout_give_partition_columns(
    spark: Any, tmp_path: Path
) -> None:
    for partition in (0, 1):
        path = tmp_path / hive_capture_path("ns", "hub", partition, START)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(capture_file(partition, 0, 5, START))
    df = _avro(spark).load(str(tmp_path / "ns" / "hub"))
    partitions = "PartitionId:int,Year:int,Month:int,Day:int,Hour:int,Minute:int"
    assert df.schema.simpleString() == f"{CAPTURE_DDL[:-1]},{partitions}>"
    rows = df.select("PartitionId", "Year", "Month", "Hour", "SequenceNumber").collect()
    assert sorted(tuple(r) for r in rows) == [
        (p, 2026, 11, 10, seq) for p in (0, 1) for seq in range(5)
    ]


def _log_batches(log: Path) -> int:
    return sum(1 for p in log.iterdir() if p.name.split(".")[0].isdigit()) if log.exists() else 0


@pytest.mark.slow
def test_capture_stream_sigkill_mid_stream_then_restart_is_exactly_once(
    spark: Any, tmp_path: Path
) -> None:
    files, events = 8, 50  # the kill comes after 4 of the 8 one-file batches
    src, log, out, ck = (tmp_path / n for n in ("capture", "log", "out", "ck"))
    _capture(src, 0, files, events)
    base = time.time() - 1000
    for i, path in enumerate(sorted(src.rglob("*.avro"))):
        os.utime(path, (base + i, base + i))
    # The crash driver reads "id BIGINT, name STRING": by position, SequenceNumber and Offset.
    env = {"PYFILE_OPTIONS": json.dumps({"format": "avro", "positionalFieldMatching": "true"})}
    args = [src / CAPTURE_GLOB, log, out, ck]
    proc = crash_drivers.start("pyfile-source", *args, "continuous", env=env)
    crash_drivers.kill_when(proc, lambda: _log_batches(log) >= 4, "4 batches in the log")
    assert _log_batches(log) < files, "the kill came after the stream had finished"

    crash_drivers.restart_here(spark, "pyfile-source", *args, "availablenow", env=env)
    rows = spark.read.parquet(str(out)).collect()
    assert sorted(r.id for r in rows) == list(range(files * events)), "lost or repeated rows"
    assert all(r.name == str(r.id * 512) for r in rows)  # Offset, read by position


def test_rescue_keeps_what_the_schema_lacks_by_the_files_own_columns(
    spark: Any, tmp_path: Path
) -> None:
    def write(name: str, fields: list[tuple[str, Any]], records: list[dict[str, Any]]) -> None:
        schema = {
            "type": "record",
            "name": "r",
            "fields": [{"name": n, "type": t} for n, t in fields],
        }
        with (tmp_path / name).open("wb") as f:
            fastavro.writer(f, fastavro.parse_schema(schema), records)

    write("1.avro", [("id", "long"), ("v", "string")], [{"id": 1, "v": "a"}])
    write(
        "2.avro",
        [("id", "string"), ("v", "string"), ("w", "double")],
        [{"id": "x", "v": "b", "w": 2.5}],
    )
    df = _avro(spark, schemaSampleFiles="1", schemaEvolutionMode="rescue").load(str(tmp_path))
    assert df.schema.simpleString() == "struct<id:bigint,v:string,_rescued_data:string>"
    rows = sorted(df.collect(), key=lambda r: r.v)
    assert (rows[0].id, rows[0]._rescued_data) == (1, None)
    rescued = json.loads(rows[1]._rescued_data)
    assert rows[1].id is None and rescued["id"] == "x" and rescued["w"] == 2.5
    assert rescued["_file_path"].endswith("2.avro")


@pytest.mark.slow  # the splits themselves are checked in process (test_avro_format.py)
def test_a_large_file_is_read_by_several_tasks_each_record_once(spark: Any, tmp_path: Path) -> None:
    buffer = io.BytesIO()
    fastavro.writer(
        buffer, fastavro.parse_schema(PEOPLE), _people(range(10_000)), sync_interval=4000
    )
    (tmp_path / "big.avro").write_bytes(buffer.getvalue())
    df = _avro(spark, maxPartitionBytes="32k").load(str(tmp_path))
    assert df.rdd.getNumPartitions() > 3  # the file is split at its sync markers
    ids = [r.id for r in df.select("id").collect()]
    assert sorted(ids) == list(range(10_000))
