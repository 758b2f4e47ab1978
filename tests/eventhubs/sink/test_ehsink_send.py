"""Sending rows without Spark: what a task holds in memory while it batches per target."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

import pyarrow as pa
import pytest
from pyspark.sql.pandas.types import from_arrow_schema

from pysparksources._core.option_table import Use
from pysparksources.eventhubs._send import send_record_batches
from pysparksources.eventhubs.options import parse_options
from pysparksources_emulator import EventHubsEmulator
from support.eventhubs import received

pytestmark = pytest.mark.emulator
SCHEMA = pa.schema([("body", pa.binary()), ("partitionKey", pa.string())])


def _stored(emulator: EventHubsEmulator) -> int:
    return sum(emulator.partition_info("test", p)["retained"] for p in (0, 1))


def test_many_partition_keys_are_sent_within_a_memory_bound_and_in_order_per_key(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    # One open batch per partition key: with 200 keys and 5 rows each, the open batches used
    # to hold every row until the task's input ended. Past the bound the fullest are sent.
    conn = eventhubs_emulator.connection_string("test")
    config = parse_options({"connectionString": conn}, Use.STREAM_WRITE, from_arrow_schema(SCHEMA))
    keys, rounds = 200, 5
    stored_before_the_last_rows: list[int] = []

    def rows() -> Iterator[pa.RecordBatch]:
        for r in range(rounds):
            if r == rounds - 1:
                stored_before_the_last_rows.append(_stored(eventhubs_emulator))
            bodies = [f"{k}:{r}:".encode().ljust(1000, b".") for k in range(keys)]
            yield pa.record_batch([bodies, [f"key-{k}" for k in range(keys)]], schema=SCHEMA)

    stats = send_record_batches(config, rows(), open_batches_bytes=256_000)
    assert stats.events == keys * rounds
    assert stored_before_the_last_rows[0] > 0, "nothing was sent before the input ended"
    per_key: dict[str, list[int]] = defaultdict(list)
    for _, event in received(conn, keys * rounds):
        key, r, _ = event.body_as_str().split(":", 2)
        assert event.partition_key in (f"key-{key}", f"key-{key}".encode())
        per_key[key].append(int(r))
    assert per_key == {str(k): list(range(rounds)) for k in range(keys)}
