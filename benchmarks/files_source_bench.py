"""pyfile vs Spark's file stream source on the same files, and pyfile's planning cost.

Usage: python benchmarks/files_source_bench.py [--files 200] [--rows-per-file 80000]
       [--cache /tmp/pysparksources-bench-files] [--formats parquet csv jsonl] [--rounds 1]
       [--master local[2]]

Data is generated once into the cache folder (outside the repository) and reused. Each format
runs Spark's native source, pyfile and pyfile's ceiling (already-parsed batches) side by side:
AvailableNow, maxFilesPerTrigger=50, noop sink, local[2] or ``--master``. Prints a table and
one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--rows-per-file", type=int, default=80_000)
    parser.add_argument("--cache", default="/tmp/pysparksources-bench-files")
    parser.add_argument("--formats", nargs="+", default=["parquet", "csv", "jsonl"])
    parser.add_argument("--max-files", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--skip-stream", action="store_true", help="planning figures only")
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

    from pysparksources.benchmarking.files import (
        CeilingFileSource,
        generate,
        planning_times,
        run_stream,
    )

    results: dict[str, object] = {"planning": [planning_times(n) for n in (1_000, 100_000)]}
    for p in results["planning"]:  # type: ignore[attr-defined]
        print(
            f"planning with {p['seen']:>7} files seen ({p['kept']} in the log): "
            f"median {p['median_ms']:.1f} ms/batch, "
            f"max {p['max_ms']:.1f} ms, start-up {p['startup_ms']:.0f} ms"
        )
    if args.skip_stream:
        print(json.dumps(results))
        return 0

    folders = generate(Path(args.cache), args.files, args.rows_per_file)
    sizes = {
        fmt: sum(f.stat().st_size for f in folder.iterdir()) / 1e9
        for fmt, folder in folders.items()
    }
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(args.master)
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "4g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.dataSource.register(CeilingFileSource)
    rows_out = []
    for fmt in args.formats:
        folder = folders[fmt]
        native_fmt = "json" if fmt == "jsonl" else fmt
        pyfile_fmt = native_fmt
        for round_no in range(args.rounds):
            figures = {}
            for label, source, options in (
                ("native", native_fmt, {}),
                ("pyfile", "pyfile", {"format": pyfile_fmt}),
                ("ceiling", "pyfile_ceiling", {"format": pyfile_fmt}),
            ):
                if label != "native":
                    options["sourceLogLocation"] = tempfile.mkdtemp(prefix="pyfile-bench-log-")
                figures[label] = run_stream(spark, source, folder, options, args.max_files)
            row = {
                "format": fmt,
                "round": round_no,
                "gb": round(sizes[fmt], 2),
                **{f"{k}_rps": round(v["rps"]) for k, v in figures.items()},
                "rows": figures["native"]["rows"],
                "pyfile_vs_native": round(figures["pyfile"]["rps"] / figures["native"]["rps"], 2),
                "pyfile_vs_ceiling": round(figures["pyfile"]["rps"] / figures["ceiling"]["rps"], 2),
            }
            assert figures["pyfile"]["rows"] == figures["native"]["rows"], figures
            rows_out.append(row)
            print(
                f"{fmt:8} {row['gb']:.2f} GB  native {row['native_rps'] / 1e6:5.2f} M rows/s  "
                f"pyfile {row['pyfile_rps'] / 1e6:5.2f}  ceiling {row['ceiling_rps'] / 1e6:5.2f}  "
                f"pyfile/native {row['pyfile_vs_native']:.2f}  "
                f"pyfile/ceiling {row['pyfile_vs_ceiling']:.2f}",
                flush=True,
            )
    results["streams"] = rows_out
    results["master"] = args.master
    print(json.dumps(results))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
