"""pyrate against Spark's rate-micro-batch, the Python-path ceiling and a tuple-yielding source.

Everything runs in one session, in interleaved rounds (every source once per round), so a
change in background load hits all sources alike and the ratios stay comparable: ``noop`` sink,
steady-state batches after warm-up ones, rows/s from the query progress; then the fixed time
of a 1-row batch.
"""

from __future__ import annotations

import argparse
from typing import Any

from benchmarks._harness import Measurement, bench_session, measure_stream

__all__ = ["HELP", "SPARK", "add_arguments", "run"]

HELP = "pyrate vs Spark's rate-micro-batch"
SPARK = True

# label -> (format, extra options). The ceiling yields cached batches: its shape is the variable.
_CANDIDATES: dict[str, tuple[str, dict[str, str]]] = {
    "rate-micro-batch": ("rate-micro-batch", {}),
    "ceiling, 1M-row batches": ("pybench_cached", {"chunkRows": str(1 << 20)}),
    "ceiling, 64k-row batches": ("pybench_cached", {"chunkRows": "65536"}),
    "ceiling, 1 batch per task": ("pybench_cached", {"chunkRows": "0"}),
    "pyrate": ("pyrate", {}),
    "tuple-yielding source": ("pybench_tuples", {}),
}
_SAME_SHAPE_CEILING = "ceiling, 1M-row batches"  # pyrate's own batch shape


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rows", type=int, nargs="+", default=[1_000_000, 5_000_000], help="rows per batch"
    )
    parser.add_argument("--batches", type=int, default=5, help="steady-state batches per query")
    parser.add_argument("--partitions", type=int, default=2, help="numPartitions (default 2)")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds (default 2)")
    parser.add_argument("--no-tuples", action="store_true", help="skip the tuple-yielding source")


def _measure_size(
    spark: Any, rows: int, partitions: int, batches: int, rounds: int, tuples: bool
) -> dict[str, Measurement]:
    base = {"rowsPerBatch": str(rows), "numPartitions": str(partitions)}
    merged = {label: Measurement(label) for label in _CANDIDATES}
    if not tuples:
        del merged["tuple-yielding source"]
    for _ in range(rounds):
        for label in merged:
            fmt, extra = _CANDIDATES[label]
            slow = label == "tuple-yielding source"
            m = measure_stream(spark, label, fmt, base | extra, 2 if slow else batches, 1)
            merged[label].rows_per_second += m.rows_per_second
            merged[label].batch_ms += m.batch_ms
    return merged


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Measure each source at each batch size; print a table and return the figures."""
    from benchmarks._reference import CachedBatchDataSource, TupleDataSource

    spark = bench_session(args)
    spark.dataSource.register(CachedBatchDataSource)
    spark.dataSource.register(TupleDataSource)
    partitions, tuples = args.partitions, not args.no_tuples
    results: dict[str, Any] = {"partitions": partitions, "rounds": args.rounds, "sizes": {}}
    for rows in args.rows:
        measured = _measure_size(spark, rows, partitions, args.batches, args.rounds, tuples)
        native = measured["rate-micro-batch"].median_rows_per_second
        print(f"\n{rows:,} rows per batch, {partitions} partitions, noop sink (median rows/s)")
        figures: dict[str, float] = {}
        for label, m in measured.items():
            figures[label] = m.median_rows_per_second
            print(
                f"  {label:<28} {m.median_rows_per_second / 1e6:7.2f} M rows/s"
                f"   {m.median_rows_per_second / native:5.2f}x rate-micro-batch"
                f"   ({len(m.rows_per_second)} batches)"
            )
        pyrate = figures["pyrate"]
        best = max(v for k, v in figures.items() if k.startswith("ceiling"))
        figures["pyrate / same-shape ceiling"] = pyrate / figures[_SAME_SHAPE_CEILING]
        figures["pyrate / best ceiling"] = pyrate / best
        line = (
            f"  pyrate / same-shape ceiling {figures['pyrate / same-shape ceiling']:.2f}x,"
            f" / best ceiling {figures['pyrate / best ceiling']:.2f}x"
        )
        if tuples:
            figures["pyrate / tuples"] = pyrate / figures["tuple-yielding source"]
            line += f", / tuples {figures['pyrate / tuples']:.2f}x"
        print(line)
        results["sizes"][str(rows)] = figures
    one = {"rowsPerBatch": "1", "numPartitions": str(partitions)}
    fixed = {
        label: measure_stream(spark, label, fmt, one, args.batches).median_batch_ms
        for label, fmt in (("rate-micro-batch", "rate-micro-batch"), ("pyrate", "pyrate"))
    }
    print("\nfixed cost of a 1-row batch (median trigger time)")
    for label, ms in fixed.items():
        print(f"  {label:<18} {ms:6.0f} ms")
    results["one_row_batch_ms"] = fixed
    spark.stop()
    return results
