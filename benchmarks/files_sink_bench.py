"""pyfile sink vs Spark's native file sink on the same pyrate stream, plus the Arrow-hop cap.

Usage: python benchmarks/files_sink_bench.py [--rows 5000000] [--partitions 2] [--batches 4]
       [--warmup 2] [--formats parquet json] [--rounds 1] [--master local[2]]

Each round runs, per format, Spark's file sink, pyfile, and a Python sink that discards its
Arrow batches (what any Python sink can reach at this batch shape), processingTime 0,
``--rows`` rows per micro-batch. Rows/s are medians of the steady-state batches' progress
(numInputRows / triggerExecution). Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--formats", nargs="+", default=["parquet", "json"])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

    from pyspark.sql import SparkSession

    from pysparksources.benchmarking.sinks import DiscardDataSource, measure_sink

    spark = (
        SparkSession.builder.master(args.master).config("spark.ui.enabled", "false").getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.dataSource.register(DiscardDataSource)
    source = {"rowsPerBatch": str(args.rows), "numPartitions": str(args.partitions)}
    runs = {
        "native": lambda fmt: (fmt, {}),
        "pyfile": lambda fmt: ("pyfile", {"format": fmt}),
    }
    figures: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        cap = measure_sink(
            spark, "discard", "pybench_discard", {}, source, args.batches, args.warmup
        )
        figures.setdefault("discard", []).append(cap.median_rows_per_second)
        print(f"  {'discard':<16} batches {[round(ms) for ms in cap.batch_ms]} ms", flush=True)
        for fmt in args.formats:
            for name, build in runs.items():
                sink, options = build(fmt)
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
    summary: dict[str, object] = {"rows": args.rows, "partitions": args.partitions, **med}
    for fmt in args.formats:
        native, ours = med[f"{fmt} native"], med[f"{fmt} pyfile"]
        print(
            f"{fmt:<8} native {native / 1e6:6.2f}  pyfile {ours / 1e6:6.2f} M rows/s  "
            f"pyfile/native {ours / native:4.2f}x  pyfile/cap {ours / med['discard']:4.2f}x"
        )
        summary[f"{fmt} ratio"] = ours / native
        summary[f"{fmt} of cap"] = ours / med["discard"]
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
