"""pyeventhub's bodyFormat=avro read against the plain binary read of the same events.

The emulator runs in its own process with a hub of ``--partitions`` partitions holding
``--events`` Avro-encoded orders (ten fields: longs, strings, a double, a nullable string,
an array, a map, a timestamp-millis and an enum). Each round (interleaved) runs two
AvailableNow queries into Spark's ``noop`` sink: the plain read (``body`` as bytes) and the
decoding read (``body`` as a struct). A third figure times the decoding alone in this process
(fastavro per event, one Arrow conversion per chunk). Prints each round, medians and ratios.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import time
from typing import Any

from benchmarks._harness import bench_session

__all__ = ["HELP", "ORDER_SCHEMA", "SPARK", "add_arguments", "run"]

HELP = "pyeventhub bodyFormat=avro read vs the plain binary read, on the emulator"
SPARK = True
ORDER_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "Order",
    "namespace": "bench",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "customer", "type": "string"},
        {"name": "amount", "type": "double"},
        {"name": "quantity", "type": "int"},
        {"name": "paid", "type": "boolean"},
        {"name": "note", "type": ["null", "string"]},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attributes", "type": {"type": "map", "values": "long"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {
            "name": "status",
            "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SHIPPED"]},
        },
    ],
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)


def _bodies(count: int) -> list[bytes]:
    import fastavro

    schema = fastavro.parse_schema(ORDER_SCHEMA)
    bodies = []
    for i in range(count):
        record = {
            "id": i,
            "customer": f"customer-{i % 997}",
            "amount": i * 0.25,
            "quantity": i % 9,
            "paid": i % 2 == 0,
            "note": None if i % 3 else f"note {i}",
            "tags": ["a", "b"][: i % 3],
            "attributes": {"weight": i % 100, "size": i % 7},
            "at": 1_700_000_000_000 + i,
            "status": ("NEW", "PAID", "SHIPPED")[i % 3],
        }
        stream = io.BytesIO()
        fastavro.schemaless_writer(stream, schema, record)
        bodies.append(stream.getvalue())
    return bodies


def _fill(conn: str, partitions: int, bodies: list[bytes]) -> None:
    from azure.eventhub import EventData, EventHubProducerClient

    with EventHubProducerClient.from_connection_string(conn) as client:
        for partition in range(partitions):
            mine = bodies[partition::partitions]
            sent = 0
            while sent < len(mine):
                batch = client.create_batch(partition_id=str(partition))
                while sent < len(mine):
                    try:
                        batch.add(EventData(mine[sent]))
                    except ValueError:
                        break
                    sent += 1
                client.send_batch(batch)


def _query_rate(spark: Any, conn: str, events: int, avro: bool) -> tuple[float, float]:
    """(events/s over the whole query, events/s over its batches)."""
    reader = (
        spark.readStream.format("pyeventhub")
        .option("connectionString", conn)
        .option("startingPosition", "start")
    )
    if avro:
        reader = reader.option("bodyFormat", "avro").option("avroSchema", json.dumps(ORDER_SCHEMA))
    started = time.perf_counter()
    query = reader.load().writeStream.format("noop").trigger(availableNow=True).start()
    query.awaitTermination()
    elapsed = time.perf_counter() - started
    progress = [json.loads(p.json) for p in query.recentProgress]
    rows = sum(int(p["numInputRows"]) for p in progress)
    if rows != events:
        raise RuntimeError(f"pyeventhub read {rows} events, expected {events}")
    busy_ms = sum(p["durationMs"]["triggerExecution"] for p in progress if p["numInputRows"])
    return events / elapsed, events / (busy_ms / 1000)


def _decode_only_rate(bodies: list[bytes]) -> float:
    """Events/s of decode_batch alone on 8192-event chunks (no Spark, no SDK)."""
    import pyarrow as pa

    from pysparksources._core.option_table import Use
    from pysparksources.eventhubs._schema import ARROW_SCHEMA
    from pysparksources.eventhubs.avro.decode import decode_batch
    from pysparksources.eventhubs.options import parse_options

    conn = "Endpoint=sb://bench/;SharedAccessKeyName=k;SharedAccessKey=v;EntityPath=h"
    config = parse_options(
        {"connectionString": conn, "bodyFormat": "avro", "avroSchema": json.dumps(ORDER_SCHEMA)},
        Use.STREAM_READ,
    )
    chunks = []
    for start in range(0, len(bodies), 8192):
        part = bodies[start : start + 8192]
        n = len(part)
        columns = [pa.array(part, pa.binary())] + [
            pa.nulls(n, field.type) for field in list(ARROW_SCHEMA)[1:]
        ]
        chunks.append(pa.RecordBatch.from_arrays(columns, schema=ARROW_SCHEMA))
    started = time.perf_counter()
    for chunk in chunks:
        decode_batch(config, chunk, [None] * chunk.num_rows)
    return len(bodies) / (time.perf_counter() - started)


def run(args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks._eventhubs import emulator_process

    bodies = _bodies(args.events)
    spark = bench_session(args)
    plain: list[tuple[float, float]] = []
    avro: list[tuple[float, float]] = []
    decode_only: list[float] = []
    with emulator_process("bench", args.partitions) as conn:
        _fill(conn, args.partitions, bodies)
        _query_rate(spark, conn, args.events, avro=True)  # warm-up: workers import fastavro
        for round_no in range(1, args.rounds + 1):
            plain.append(_query_rate(spark, conn, args.events, avro=False))
            avro.append(_query_rate(spark, conn, args.events, avro=True))
            decode_only.append(_decode_only_rate(bodies))
            print(
                f"round {round_no}: binary {plain[-1][1]:,.0f} ev/s, avro {avro[-1][1]:,.0f} "
                f"ev/s over batches; decoding alone {decode_only[-1]:,.0f} ev/s",
                flush=True,
            )
    spark.stop()
    binary_whole = statistics.median(p[0] for p in plain)
    binary_batches = statistics.median(p[1] for p in plain)
    avro_whole = statistics.median(a[0] for a in avro)
    avro_batches = statistics.median(a[1] for a in avro)
    decoding = statistics.median(decode_only)
    print(
        f"{args.events:,} Avro orders (~{sum(map(len, bodies)) // len(bodies)} B) on "
        f"{args.partitions} partitions, {args.master}, medians of {args.rounds} rounds:"
    )
    print(f"  binary read, over its batches: {binary_batches:,.0f} events/s")
    print(
        f"  avro read, over its batches:   {avro_batches:,.0f} events/s "
        f"({avro_batches / binary_batches:.2f}x of binary)"
    )
    print(
        f"  whole queries: binary {binary_whole:,.0f}, avro {avro_whole:,.0f} events/s "
        f"({avro_whole / binary_whole:.2f}x)"
    )
    print(f"  decoding alone (fastavro + Arrow, one core): {decoding:,.0f} events/s")
    return {
        "binary": round(binary_batches),
        "avro": round(avro_batches),
        "ratio": round(avro_batches / binary_batches, 2),
        "binary_whole": round(binary_whole),
        "avro_whole": round(avro_whole),
        "ratio_whole": round(avro_whole / binary_whole, 2),
        "decode_only": round(decoding),
    }
