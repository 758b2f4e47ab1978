"""pyfile's sink against Spark's file sink on the same pyrate stream, plus the Arrow-hop cap.

Each round runs Spark's file sink and pyfile per format, and a Python sink that discards its
Arrow batches (``pybench_discard``: what any Python sink can reach at this batch shape),
processingTime 0, ``--rows`` rows per micro-batch. Rows/s are medians of the steady-state
batches' progress (numInputRows / triggerExecution).
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

from benchmarks._harness import bench_session, measure_sink

__all__ = ["HELP", "SPARK", "add_arguments", "run"]

HELP = "pyfile sink vs Spark's file sink (parquet, json) and the Arrow-hop cap"
SPARK = True


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--formats", nargs="+", default=["parquet", "json"])
    parser.add_argument("--rounds", type=int, default=1)


def run(args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks._reference import DiscardDataSource

    spark = bench_session(args)
    spark.dataSource.register(DiscardDataSource)
    source = {"rowsPerBatch": str(args.rows), "numPartitions": str(args.partitions)}
    figures: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        cap = measure_sink(
            spark, "discard", "pybench_discard", {}, source, args.batches, args.warmup
        )
        figures.setdefault("discard", []).append(cap.median_rows_per_second)
        print(f"  {'discard':<16} batches {[round(ms) for ms in cap.batch_ms]} ms", flush=True)
        for fmt in args.formats:
            for name in ("native", "pyfile"):
                sink, options = (fmt, {}) if name == "native" else ("pyfile", {"format": fmt})
                label = f"{fmt} {name}"
                result = measure_sink(
                    spark, label, sink, options, source, args.batches, args.warmup
                )
                figures.setdefault(label, []).append(result.median_rows_per_second)
                shown = [round(ms) for ms in result.batch_ms]
                print(f"  {label:<16} batches {shown} ms", flush=True)
    spark.stop()

    med = {label: statistics.median(values) for label, values in figures.items()}
    print(f"\n{args.rows:,} rows per batch, {args.partitions} partitions, {args.master}")
    print(f"{'discard (cap)':<16} {med['discard'] / 1e6:6.2f} M rows/s")
    summary: dict[str, Any] = {"rows": args.rows, "partitions": args.partitions, **med}
    for fmt in args.formats:
        native, ours = med[f"{fmt} native"], med[f"{fmt} pyfile"]
        print(
            f"{fmt:<8} native {native / 1e6:6.2f}  pyfile {ours / 1e6:6.2f} M rows/s  "
            f"pyfile/native {ours / native:4.2f}x  pyfile/cap {ours / med['discard']:4.2f}x"
        )
        summary[f"{fmt} ratio"] = ours / native
        summary[f"{fmt} of cap"] = ours / med["discard"]
    return summary
