"""pyeventhub sink's send speed against a plain azure-eventhub producer: same events, same emulator.

The emulator runs in its own process. Each round (interleaved, so both see the same machine
load) times a plain SDK producer sending ``--events`` events of ``--size`` bytes in full
EventDataBatches, one partition after another, then a Spark batch write of the same events
through pyeventhub (``spark.range`` -> body of ``--size`` bytes, partitionId = id % partitions,
``--partitions`` tasks), timed from the write call to its end (job start-up included, as the
producer's connect is), after one untimed warm-up write. Prints each round, the medians and the
ratio.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from benchmarks._eventhubs import add_event_arguments
from benchmarks._harness import bench_session

__all__ = ["HELP", "SPARK", "add_arguments", "run"]

HELP = "pyeventhub sink vs a plain azure-eventhub producer, on the emulator"
SPARK = True


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_event_arguments(parser)


def run(args: argparse.Namespace) -> dict[str, Any]:
    from azure.eventhub import EventHubProducerClient

    from benchmarks._eventhubs import emulator_process, send_full_batches

    spark = bench_session(args)
    rows = spark.range(0, args.events, 1, args.partitions).selectExpr(
        f"CAST(repeat('x', {args.size}) AS BINARY) AS body",
        f"CAST(id % {args.partitions} AS INT) AS partitionId",
    )
    plain: list[float] = []
    sink: list[float] = []
    with emulator_process("bench", args.partitions) as conn:
        # Warm-up, untimed: starts the executors' Python workers and imports the SDK there, as
        # this process already did for the plain producer.
        warmup = spark.range(0, 1000, 1, args.partitions).selectExpr(
            "CAST('warm-up' AS BINARY) AS body",
            f"CAST(id % {args.partitions} AS INT) AS partitionId",
        )
        warmup.write.format("pyeventhub").mode("append").option("connectionString", conn).save()
        for round_no in range(1, args.rounds + 1):
            started = time.perf_counter()
            with EventHubProducerClient.from_connection_string(conn) as client:
                for partition in range(args.partitions):
                    count = args.events // args.partitions
                    send_full_batches(client, str(partition), count, b"x" * args.size)
            plain.append(args.events / (time.perf_counter() - started))
            started = time.perf_counter()
            rows.write.format("pyeventhub").mode("append").option("connectionString", conn).save()
            sink.append(args.events / (time.perf_counter() - started))
            print(
                f"round {round_no}: plain producer {plain[-1]:,.0f} ev/s, "
                f"pyeventhub sink {sink[-1]:,.0f} ev/s",
                flush=True,
            )
    spark.stop()
    p, s = statistics.median(plain), statistics.median(sink)
    print(
        f"{args.events:,} events of {args.size} B to {args.partitions} partitions, {args.master}, "
        f"medians of {args.rounds} rounds:"
    )
    print(f"  plain SDK producer (EventDataBatches): {p:,.0f} events/s")
    print(f"  pyeventhub sink:                       {s:,.0f} events/s ({s / p:.2f}x)")
    return {"plain": round(p), "pyeventhub": round(s), "ratio": round(s / p, 2)}
