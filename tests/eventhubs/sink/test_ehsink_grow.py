"""The sink after partitions were added to its hub (Event Hubs Premium/Dedicated): keys spread
over the new count, and a partitionId of a new partition is sent, by the pooled producers."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql.pandas.types import from_arrow_schema

from pysparksources._core.option_table import Use
from pysparksources.eventhubs._send import send_record_batches
from pysparksources.eventhubs.options import parse_options
from pysparksources_emulator import partition_for_key
from support.eventhubs import received
from support.pyeventhub import stream_to_hub
from support.streams import rate


def test_keys_spread_over_partitions_added_to_the_hub(
    spark: Any, eventhubs_emulator_factory: Any, tmp_path: Path
) -> None:
    if os.environ.get("PYSPARKSOURCES_EVENTHUBS_CONNECTION_STRING"):
        pytest.skip("a test cannot add partitions to a real namespace: emulator only")
    emulator = eventhubs_emulator_factory(hubs={"out": 2})
    conn = emulator.connection_string("out")

    def write(run: str, rows: int, columns: str) -> None:
        frame = rate(spark, rows, rows, capped=False).selectExpr(
            f"concat('{run}-', CAST(value AS STRING)) AS body", columns
        )
        stream_to_hub(frame, conn, tmp_path / run)

    write("before", 100, "concat('key-', CAST(value AS STRING)) AS partitionKey")
    assert emulator.add_partitions("out", 4) == 4
    # The same Python workers, whose pooled producers read the hub's ids before it grew.
    write("keyed", 200, "concat('key-', CAST(value AS STRING)) AS partitionKey")
    write("pinned", 10, "'3' AS partitionId")

    events = received(conn, 310)
    where = {e.body_as_str(): pid for pid, e in events}
    assert len(events) == len(where) == 310  # every row once
    for body, pid in where.items():
        run, value = body.split("-")
        if run == "pinned":
            assert pid == "3", body
        else:  # the service hashes a key over the count at the time of the send
            assert pid == str(partition_for_key(f"key-{value}", 2 if run == "before" else 4))
    keyed = Counter(pid for body, pid in where.items() if body.startswith("keyed-"))
    assert keyed["2"] > 0 and keyed["3"] > 0, keyed


def test_a_pooled_producer_sends_to_a_partition_added_after_it_opened(
    eventhubs_emulator_factory: Any,
) -> None:
    """The SDK's producer reads the partition ids once and refuses any other id ("Invalid
    partition"); the sink replaces it once and sends, without spending a retry."""
    emulator = eventhubs_emulator_factory(hubs={"pooled": 2})
    conn = emulator.connection_string("pooled")

    def rows(pid: str) -> pa.RecordBatch:
        return pa.RecordBatch.from_pydict({"body": [f"to-{pid}"], "partitionId": [pid]})

    config = parse_options(
        {"connectionString": conn}, Use.BATCH_WRITE, from_arrow_schema(rows("0").schema)
    )
    # The first send in a process ends its first contact, and the next pools a producer.
    for _ in range(2):
        assert send_record_batches(config, iter([rows("1")])).events == 1
    emulator.add_partitions("pooled", 3)
    stats = send_record_batches(config, iter([rows("2")]))
    assert (stats.events, stats.retries) == (1, 0)
    assert sorted((pid, e.body_as_str()) for pid, e in received(conn, 3)) == [
        ("1", "to-1"),
        ("1", "to-1"),
        ("2", "to-2"),
    ]
