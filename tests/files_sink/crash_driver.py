"""Runs pyrate -> pyfile (with crash hooks) in its own process, so a test can SIGKILL it.

Usage: python crash_driver.py OUT CHECKPOINT TOTAL PER_BATCH
"""

from __future__ import annotations

import os
import sys

os.environ["PYSPARK_PYTHON"] = sys.executable

from pyspark.sql import SparkSession
from support.crash_hooks import HookedSource


def main() -> None:
    out, checkpoint, total, per_batch = sys.argv[1:5]
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.dataSource.register(HookedSource)
    df = (
        spark.readStream.format("pyrate")
        .option("rowsPerBatch", per_batch)
        .option("maxRowsPerTrigger", per_batch)
        .option("totalRows", total)
        .option("numPartitions", 2)
        .load()
        .selectExpr("value AS id")
    )
    (
        df.writeStream.format("pyfile_hooked")
        .option("path", out)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
        .awaitTermination()
    )
    spark.stop()


if __name__ == "__main__":
    main()
