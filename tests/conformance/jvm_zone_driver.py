"""The conformance matrix in a driver whose JVM default zone differs from Python's ``TZ``.

Run by test_jvm_zone.py as its own process: Python (and so every Python worker, which inherits
the environment) has ``TZ=Asia/Tokyo``, the JVM ``-Duser.timezone=America/New_York``, and the
session time zone is left unset, so Spark uses the JVM's zone. Usage:
``python jvm_zone_driver.py <cells.jsonl> <workdir>``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

JVM_ZONE, PYTHON_ZONE = "America/New_York", "Asia/Tokyo"
LABEL = f"JVM {JVM_ZONE}, Python TZ {PYTHON_ZONE}"


def main(out: Path, workdir: Path) -> None:
    from cases import CSV_CASES, ORC_IN_RANGE, PARTITIONS
    from corpus import write_seed
    from documented import DOCUMENTED
    from harness import compare_format, not_applicable, save
    from pyspark.sql import SparkSession
    from zones import KEY

    assert os.environ.get("TZ") == PYTHON_ZONE and time.tzname[0] == "JST", time.tzname
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.extraJavaOptions", f"-Duser.timezone={JVM_ZONE}")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        session_zone = spark.conf.get(KEY)
        assert session_zone == JVM_ZONE, f"the session zone is {session_zone}"
        seed = write_seed(workdir / "corpus")
        cells = []
        # Text holds strings only; ORC is compared below on the instants pyarrow can read. Each
        # of these formats has its own timestamp and date code in pyfile, so each stays; all
        # columns stay too: after the JVM's first job a format costs ~2 CPU-s of fixed job
        # overhead, which fewer columns would barely cut.
        for fmt in ("parquet", "csv", "json"):
            cells += compare_format(spark, seed, fmt, workdir / fmt, LABEL, "classic", DOCUMENTED)
            cells += not_applicable(fmt, LABEL, "classic")
        # Zone-less csv timestamps and timestamp partition folders are read in the JVM's zone;
        # ORC timestamps are stored relative to the writer's zone.
        cases = [("csv", CSV_CASES[0]), ("parquet", PARTITIONS), ("orc", ORC_IN_RANGE)]
        for number, (fmt, case) in enumerate(cases):
            work = workdir / f"case-{number}"
            cells += compare_format(spark, seed, fmt, work, LABEL, "classic", DOCUMENTED, case)
        save(cells, out)
    finally:
        spark.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
