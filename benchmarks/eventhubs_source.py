"""pyeventhub's read speed against one plain azure-eventhub consumer: same backlog, same emulator.

The emulator runs in its own process with a hub of ``--partitions`` partitions holding
``--events`` events of ``--size`` bytes. Each round (interleaved, so both see the same machine
load) times one SDK consumer client reading the whole backlog from the start, then pyeventhub
AvailableNow queries reading it into Spark's ``noop`` sink -- once in one batch (no limit) and
once under ``--max-per-trigger`` (0 skips it) -- timed from ``start()`` to the end (query
start-up included, as the consumer's connect is). Prints each round, the medians and ratios.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from benchmarks._eventhubs import add_event_arguments
from benchmarks._harness import bench_session

__all__ = ["HELP", "SPARK", "add_arguments", "pyeventhub_rate", "run"]

HELP = "pyeventhub source vs a plain azure-eventhub consumer, on the emulator"
SPARK = True


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_event_arguments(parser)
    parser.add_argument("--max-per-trigger", type=int, default=50_000)


def pyeventhub_rate(spark: Any, conn: str, events: int, per_trigger: int) -> tuple[float, float]:
    """(events/s over the whole query, events/s over its batches' trigger time)."""
    reader = (
        spark.readStream.format("pyeventhub")
        .option("connectionString", conn)
        .option("startingPosition", json.dumps({"offset": "-1"}))
    )
    if per_trigger:
        reader = reader.option("maxEventsPerTrigger", str(per_trigger))
    df = reader.load()
    started = time.perf_counter()
    query = df.writeStream.format("noop").trigger(availableNow=True).start()
    query.awaitTermination()
    elapsed = time.perf_counter() - started
    progress = [json.loads(p.json) for p in query.recentProgress]
    rows = sum(int(p["numInputRows"]) for p in progress)
    if rows != events:
        raise RuntimeError(f"pyeventhub read {rows} events, expected {events}")
    busy_ms = sum(p["durationMs"]["triggerExecution"] for p in progress if p["numInputRows"])
    return events / elapsed, events / (busy_ms / 1000)


def run(args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks._eventhubs import emulator_process, fill_backlog, plain_consumer_rate

    spark = bench_session(args)
    variants = {"no limit (one batch)": 0}
    if args.max_per_trigger:
        variants[f"maxEventsPerTrigger={args.max_per_trigger:,}"] = args.max_per_trigger
    plain: list[float] = []
    whole: dict[str, list[float]] = {name: [] for name in variants}
    batches: dict[str, list[float]] = {name: [] for name in variants}
    with emulator_process("bench", args.partitions) as conn:
        fill_backlog(conn, args.partitions, args.events, args.size)
        # Warm-up, not measured: Spark's Python workers import the SDK and pyarrow once, and
        # the plain consumer's process has imported them already.
        spark.read.format("pyeventhub").option("connectionString", conn).option(
            "endingPosition", json.dumps({"seqNo": 2000})
        ).load().write.format("noop").mode("overwrite").save()
        for round_no in range(1, args.rounds + 1):
            plain.append(plain_consumer_rate(conn, args.events))
            print(f"round {round_no}: plain consumer {plain[-1]:,.0f} ev/s", flush=True)
            for name, limit in variants.items():
                w, b = pyeventhub_rate(spark, conn, args.events, limit)
                whole[name].append(w)
                batches[name].append(b)
                print(
                    f"round {round_no}: pyeventhub {name}: {w:,.0f} ev/s whole query "
                    f"({b:,.0f} ev/s over its batches)",
                    flush=True,
                )
    spark.stop()
    p = statistics.median(plain)
    print(
        f"{args.events:,} events of {args.size} B on {args.partitions} partitions, "
        f"{args.master}, medians of {args.rounds} rounds:"
    )
    print(f"  plain SDK consumer (one client, all partitions): {p:,.0f} events/s")
    summary: dict[str, Any] = {"plain": round(p)}
    for key, name in zip(("", "_limited"), variants, strict=False):
        w, b = statistics.median(whole[name]), statistics.median(batches[name])
        print(f"  pyeventhub, {name}:")
        print(f"    whole query incl. start-up: {w:,.0f} events/s ({w / p:.2f}x)")
        print(f"    over its batches:           {b:,.0f} events/s ({b / p:.2f}x)")
        summary[f"pyeventhub{key}"] = round(w)
        summary[f"ratio{key}"] = round(w / p, 2)
        summary[f"ratio{key}_batches"] = round(b / p, 2)
    return summary
