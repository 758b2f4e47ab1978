"""pyeventhub sink on real Spark against the package's emulator, read back with the SDK."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql.pandas.types import from_arrow_schema

from pysparksources._core.option_table import Use
from pysparksources.eventhubs._send import send_record_batches
from pysparksources.eventhubs.options import parse_options
from pysparksources_emulator import EventHubsEmulator, Fault, partition_for_key
from support.eventhubs import received
from support.pyeventhub import stream_to_hub
from support.streams import rate

pytestmark = pytest.mark.spark


@pytest.mark.slow
def test_round_trip_bodies_partition_ids_and_properties(
    session: Any, eventhubs_emulator: EventHubsEmulator, tmp_path: Path
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    df = rate(session, 300, 100, capped=False).selectExpr(
        "CAST(value AS STRING) AS body",
        "CAST(value % 2 AS INT) AS partitionId",
        "map('n', CAST(value AS STRING), 'kind', 'rate') AS properties",
    )
    query = stream_to_hub(df, conn, tmp_path)
    events = received(conn, 300)
    bodies = sorted(int(e.body_as_str()) for _, e in events)
    assert bodies == list(range(300))  # every row once
    for partition, event in events:
        value = int(event.body_as_str())
        assert partition == str(value % 2)
        props = {k.decode(): v.decode() for k, v in event.properties.items()}
        assert props == {"n": str(value), "kind": "rate"}
    description = json.dumps([json.loads(p.json) for p in query.recentProgress])
    assert "SharedAccessKey=" not in description


@pytest.mark.slow
def test_binary_bodies_by_partition_key_with_a_batch_write(
    spark: Any, eventhubs_emulator_factory: Any
) -> None:
    emulator = eventhubs_emulator_factory({"keyed": 4})
    conn = emulator.connection_string("keyed")
    df = spark.range(200).selectExpr(
        "CAST(CAST(id AS STRING) AS BINARY) AS body", "concat('user-', id % 7) AS partitionKey"
    )
    df.write.format("pyeventhub").mode("append").option("connectionString", conn).save()
    events = received(conn, 200)
    assert sorted(int(e.body_as_str()) for _, e in events) == list(range(200))
    for partition, event in events:
        key = f"user-{int(event.body_as_str()) % 7}"
        got = event.partition_key
        assert (got.decode() if isinstance(got, bytes) else got) == key
        assert int(partition) == partition_for_key(key, 4)  # where Azure puts the key


@pytest.mark.slow
def test_stamps_name_batch_task_and_row(
    spark: Any, eventhubs_emulator: EventHubsEmulator, tmp_path: Path
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    df = rate(spark, 200, 100, capped=False).selectExpr("CAST(value AS STRING) AS body")
    stream_to_hub(df, conn, tmp_path, stampBatchId="true")
    stamps = set()
    for _, event in received(conn, 200):
        props = {k.decode(): v for k, v in event.properties.items()}
        assert props["spark.batchId"] in (0, 1)
        stamps.add((props["spark.batchId"], props["spark.partition"], props["spark.row"]))
    assert len(stamps) == 200  # (batch, task, row) identifies each event


@pytest.mark.slow
def test_server_busy_mid_stream_is_retried_and_nothing_is_lost(
    spark: Any, eventhubs_emulator: EventHubsEmulator, tmp_path: Path
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    busy = eventhubs_emulator.add_fault(
        Fault("reject", "com.microsoft:server-busy", "busy", link="sender", after_events=40,
              times=None)
    )  # fmt: skip

    def recover() -> None:
        busy.wait(120)
        time.sleep(1.0)
        eventhubs_emulator.clear_faults()

    helper = threading.Thread(target=recover, daemon=True)
    helper.start()
    df = rate(spark, 300, 100, capped=False).selectExpr("CAST(value AS STRING) AS body")
    stream_to_hub(df, conn, tmp_path, retryBackoff="200ms", maxRetries=10)
    helper.join(5)
    assert busy.fired >= 1
    bodies = [int(e.body_as_str()) for _, e in received(conn, 300)]
    assert sorted(set(bodies)) == list(range(300))  # at least once: nothing lost
    assert len(bodies) == 300  # rejected sends are not stored, so no duplicates either


def test_rows_are_sent_in_batches_up_to_max_batch_bytes(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    rows = pa.RecordBatch.from_pydict(
        {"body": [b"x" * 1000] * 300, "partitionId": ["0"] * 150 + ["1"] * 150}
    )
    schema = from_arrow_schema(rows.schema)
    default = parse_options({"connectionString": conn}, Use.BATCH_WRITE, schema)
    small = parse_options(
        {"connectionString": conn, "maxBatchBytes": "4096"}, Use.BATCH_WRITE, schema
    )
    full = send_record_batches(default, iter([rows]))
    tiny = send_record_batches(small, iter([rows]))
    assert full.events == tiny.events == 300
    assert full.batches == 2  # one full batch per partition: 150 KB fits in 1 MB
    assert tiny.batches >= 300 // 4  # about three 1 KB events fit in 4 KB
    assert len(received(conn, 600)) == 600
