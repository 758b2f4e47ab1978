"""pyrate against Spark's ``rate-micro-batch``, the Python-path ceiling and a tuple source.

Everything is measured in one run on one session, so ratios are comparable on a noisy machine.
"""

from __future__ import annotations

import json
from typing import Any

from pysparksources.benchmarking.harness import Measurement, measure_stream

__all__ = ["run_rate_benchmark"]


def _row_line(m: Measurement, reference: Measurement) -> str:
    ratio = m.median_rows_per_second / reference.median_rows_per_second
    return (
        f"  {m.label:<28} {m.median_rows_per_second / 1e6:8.2f} M rows/s"
        f"   {ratio:5.2f}x rate-micro-batch"
    )


def run_rate_benchmark(
    spark: Any, sizes: list[int], batches: int = 5, partitions: int = 2, tuples: bool = True
) -> dict[str, Any]:
    """Measure each source at each batch size; print a table and return the figures."""
    from pysparksources.benchmarking.sources import CachedBatchDataSource, TupleDataSource

    spark.dataSource.register(CachedBatchDataSource)
    spark.dataSource.register(TupleDataSource)
    results: dict[str, Any] = {"partitions": partitions, "batches": batches, "sizes": {}}
    for rows in sizes:
        base = {"rowsPerBatch": str(rows), "numPartitions": str(partitions)}
        native = measure_stream(spark, "rate-micro-batch", "rate-micro-batch", base, batches)
        ceiling = measure_stream(spark, "python ceiling (cached)", "pybench_cached", base, batches)
        ours = measure_stream(spark, "pyrate", "pyrate", base, batches)
        measured = [native, ceiling, ours]
        if tuples:
            measured.append(
                measure_stream(spark, "tuple-yielding source", "pybench_tuples", base, 3, 1)
            )
        print(f"\n{rows:,} rows per batch, {partitions} partitions, noop sink (medians)")
        for m in measured:
            print(_row_line(m, native))
        figures = {m.label: m.median_rows_per_second for m in measured}
        figures["pyrate / ceiling"] = ours.median_rows_per_second / ceiling.median_rows_per_second
        if tuples:
            figures["pyrate / tuples"] = (
                ours.median_rows_per_second / measured[-1].median_rows_per_second
            )
        print(f"  pyrate / python ceiling: {figures['pyrate / ceiling']:.2f}x", end="")
        print(f"   pyrate / tuples: {figures['pyrate / tuples']:.2f}x" if tuples else "")
        results["sizes"][str(rows)] = figures
    one = {"rowsPerBatch": "1", "numPartitions": str(partitions)}
    fixed_native = measure_stream(spark, "rate-micro-batch", "rate-micro-batch", one, batches)
    fixed_ours = measure_stream(spark, "pyrate", "pyrate", one, batches)
    print("\nfixed cost of a 1-row batch (median trigger time)")
    print(f"  rate-micro-batch {fixed_native.median_batch_ms:7.0f} ms")
    print(f"  pyrate           {fixed_ours.median_batch_ms:7.0f} ms")
    results["one_row_batch_ms"] = {
        "rate-micro-batch": fixed_native.median_batch_ms,
        "pyrate": fixed_ours.median_batch_ms,
    }
    print("\n" + json.dumps(results))
    return results
