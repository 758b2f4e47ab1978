"""bodyFormat=avro end to end: rows -> pyeventhub sink -> emulator -> pyeventhub source -> rows."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import fastavro
import pytest

from pysparksources._core.arrow import spark_arrow_schema
from pysparksources.eventhubs.avro.encode import derive_avro_schema
from pysparksources_emulator import EventHubsEmulator
from support.eventhubs import send
from support.pyeventhub import reader, run_to_parquet, stream_to_hub
from support.streams import rate
from support.variants import CLASSIC_ONLY

pytestmark = [pytest.mark.spark, pytest.mark.emulator]

# One struct per row with most Spark types; every value follows from ``value``.
BODY = (
    "struct(value AS id, CAST(value AS STRING) AS name, CAST(value / 4 AS DECIMAL(10,2)) AS price,"
    " TIMESTAMP_MICROS(value * 1000003) AS at, DATE_FROM_UNIX_DATE(CAST(value AS INT)) AS day,"
    " value % 3 = 0 AS flag, array(value, value + 1) AS pair,"
    " map('k', CAST(value AS INT)) AS attrs, IF(value % 2 = 0, NULL, 'odd') AS note,"
    " struct(CAST(value AS DOUBLE) / 8 AS x) AS inner) AS body"
)


def _by_id(pairs: Any) -> list[Any]:
    return sorted(pairs, key=lambda pair: pair[0]["id"])


@pytest.mark.slow
def test_rows_round_trip_through_the_avro_sink_and_source(
    session: Any, eventhubs_emulator: EventHubsEmulator, tmp_path: Path
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    rows = rate(session, 300, 100, capped=False).selectExpr(
        BODY, "CAST(value % 2 AS INT) AS partitionId"
    )
    stream_to_hub(rows, conn, tmp_path / "write", bodyFormat="avro")  # schema derived
    # The reader needs the writer's schema: the one the sink derived, as to_avro would.
    derived = derive_avro_schema(spark_arrow_schema(rows.schema).field("body").type)
    assert json.loads(derived)["name"] == "topLevelRecord"

    events = reader(session, conn, startingPosition="start", bodyFormat="avro", avroSchema=derived)
    run_to_parquet(events.select("body", "partition"), tmp_path)
    back = session.read.parquet(str(tmp_path / "q-out"))
    got = _by_id((r.body.asDict(recursive=True), r.partition) for r in back.collect())
    expected = session.range(300).selectExpr(BODY.replace("value", "id"), "id % 2 AS partition")
    want = _by_id((r.body.asDict(recursive=True), str(r.partition)) for r in expected.collect())
    assert len(got) == 300
    assert got == want
    # The read schema is the Event Hubs columns with body as avroSchema's struct.
    body_type = events.schema["body"].dataType.simpleString()
    assert body_type == expected.schema["body"].dataType.simpleString()
    assert events.columns[1:] == [
        "partition",
        "offset",
        "sequenceNumber",
        "enqueuedTime",
        "publisher",
        "partitionKey",
        "properties",
        "systemProperties",
    ]


ITEM = {
    "type": "record",
    "name": "Item",
    "fields": [{"name": "n", "type": "int"}, {"name": "label", "type": "string"}],
}


def _item(n: int) -> bytes:
    stream = io.BytesIO()
    fastavro.schemaless_writer(stream, fastavro.parse_schema(ITEM), {"n": n, "label": f"l{n}"})
    return stream.getvalue()


def _avro_reader(session: Any, conn: str, **options: Any) -> Any:
    return reader(
        session,
        conn,
        startingPosition="start",
        bodyFormat="avro",
        avroSchema=json.dumps(ITEM),
        **options,
    )


@CLASSIC_ONLY
@pytest.mark.slow
def test_bad_events_fail_the_query_or_go_to_a_column_or_a_folder(
    session: Any, eventhubs_emulator: EventHubsEmulator, tmp_path: Path
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    send(conn, [_item(0), _item(1), b"\x02", _item(3)], partition_id="0")
    send(conn, [_item(10), b"not avro at all", _item(12)], partition_id="1")

    # FAILFAST (default): the query stops naming hub, partition and sequence number.
    with pytest.raises(Exception) as failed:  # classic and Connect raise different types
        run_to_parquet(_avro_reader(session, conn), tmp_path, "failfast")
    message = str(failed.value)
    assert "does not decode as Avro" in message
    assert (
        "sequenceNumber 2 in partition 0 of sb://" in message
        or "sequenceNumber 1 in partition 1 of sb://" in message
    )

    # PERMISSIVE: every event, bad ones with a null body and the raw bytes and the error.
    permissive = _avro_reader(session, conn, mode="PERMISSIVE")
    run_to_parquet(permissive, tmp_path, "permissive")
    rows = sorted(
        session.read.parquet(str(tmp_path / "permissive-out")).collect(),
        key=lambda r: (r.partition, r.sequenceNumber),
    )
    assert [(r.partition, r.sequenceNumber) for r in rows] == [
        *[("0", i) for i in range(4)],
        *[("1", i) for i in range(3)],
    ]
    good = {(r.partition, r.sequenceNumber): r.body.n for r in rows if r.body is not None}
    assert good == {("0", 0): 0, ("0", 1): 1, ("0", 3): 3, ("1", 0): 10, ("1", 2): 12}
    corrupt = {
        (r.partition, r.sequenceNumber): r._corrupt_record.body
        for r in rows
        if r._corrupt_record is not None
    }
    assert corrupt == {("0", 2): b"\x02", ("1", 1): b"not avro at all"}

    # badRecordsPath: good events only; the bad ones as JSON lines in the folder.
    bad_folder = tmp_path / "bad-records"
    kept = _avro_reader(session, conn, badRecordsPath=str(bad_folder))
    run_to_parquet(kept.select("body.n", "partition"), tmp_path, "kept")
    values = sorted(r.n for r in session.read.parquet(str(tmp_path / "kept-out")).collect())
    assert values == [0, 1, 3, 10, 12]
    lines = [json.loads(line) for f in bad_folder.iterdir() for line in f.read_text().splitlines()]
    assert sorted((line["partition"], line["sequenceNumber"]) for line in lines) == [
        ("0", 2),
        ("1", 1),
    ]
    assert all(line["eventHub"] == "test" and line["error"] for line in lines)


def test_avro_options_are_checked_when_the_query_starts(
    session: Any, eventhubs_emulator: EventHubsEmulator, tmp_path: Path
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    with pytest.raises(Exception, match="avroSchema"):
        reader(session, conn, bodyFormat="avro").writeStream.format("noop").option(
            "checkpointLocation", str(tmp_path / "a")
        ).start()
    wrong = (
        session.readStream.format("pyeventhub")
        .schema("body struct<n: bigint>, partition string")
        .option("connectionString", conn)
        .option("bodyFormat", "avro")
        .option("avroSchema", json.dumps(ITEM))
        .load()
    )
    with pytest.raises(Exception, match="avroSchema reads as struct<body:struct<n:int,label"):
        query = (
            wrong.writeStream.format("noop")
            .option("checkpointLocation", str(tmp_path / "b"))
            .start()
        )
        query.awaitTermination(60)
        raise AssertionError(str(query.exception()))
