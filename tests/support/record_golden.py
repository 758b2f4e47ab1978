"""Record Spark's answers to the golden cases: ``./dev golden [SLUG...] [--out DIR]``.

Starts a local Spark session (no setting pinned: cases that need a zone set it for their reads
and record it), asks Spark's own readers each case of support.golden_cases and writes
tests/files/golden/<slug>.json. Without slugs every case is recorded; ``--list`` names them.
A case whose input files differ from one writing to the next (Spark's own parquet files) keeps
the committed inputs unless ``--fresh-inputs``, so re-recording changes only what Spark answers.
Commit the changed files with the Spark version they name.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from support.golden import GOLDEN_DIR, golden_path, load, record
from support.golden_cases import GOLDEN


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="./dev golden", description=__doc__.splitlines()[0])
    parser.add_argument("slugs", nargs="*", help="cases to record (default: all)")
    parser.add_argument("--out", type=Path, default=GOLDEN_DIR, help="folder of golden files")
    parser.add_argument("--list", action="store_true", help="list the cases and stop")
    parser.add_argument(
        "--fresh-inputs", action="store_true", help="write every case's inputs anew"
    )
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(case.slug for case in GOLDEN))
        return 0
    known = {case.slug: case for case in GOLDEN}
    unknown = [slug for slug in args.slugs if slug not in known]
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; --list names them")
    chosen = [known[slug] for slug in args.slugs] or list(GOLDEN)

    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("pysparksources-golden")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("FATAL")  # FAILFAST reads fail by design
    try:
        for case in chosen:
            inputs = None
            if case.inputs_vary and not args.fresh_inputs and golden_path(case, args.out).exists():
                inputs = load(case, args.out)["files"]
            print(record(spark, case, args.out, inputs))
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
