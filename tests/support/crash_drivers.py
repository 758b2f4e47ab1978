"""Runs one pyfile -> parquet query in its own process, so a test can SIGKILL it mid-stream.

Usage: python crash_driver.py SRC LOG OUT CHECKPOINT (continuous|availablenow)
"""

from __future__ import annotations

import os
import sys

os.environ["PYSPARK_PYTHON"] = sys.executable

from pyspark.sql import SparkSession


def main() -> None:
    src, log, out, checkpoint, mode = sys.argv[1:6]
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    df = (
        spark.readStream.format("pyfile")
        .schema("id BIGINT, name STRING")
        .option("sourceLogLocation", log)
        .option("maxFilesPerTrigger", "1")
        .load(src)
    )
    writer = (
        df.writeStream.format("parquet")
        .option("path", out)
        .option("checkpointLocation", checkpoint)
    )
    if mode == "availablenow":
        writer.trigger(availableNow=True).start().awaitTermination()
    else:
        print("STARTED", flush=True)
        writer.trigger(processingTime="0 seconds").start().awaitTermination()
    spark.stop()


if __name__ == "__main__":
    main()
