"""Runs pyeventhub -> pyfile (parquet) in its own process, so a test can SIGKILL it.

Usage: EH_CONN=<connection string> python crash_eh_driver.py OUT CHECKPOINT PER_TRIGGER
(the connection string travels in the environment, not on a command line others can list).
"""

from __future__ import annotations

import os
import sys

os.environ["PYSPARK_PYTHON"] = sys.executable

from pyspark.sql import SparkSession


def main() -> None:
    out, checkpoint, per_trigger = sys.argv[1:4]
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    events = (
        spark.readStream.format("pyeventhub")
        .option("connectionString", os.environ["EH_CONN"])
        .option("startingPosition", "start")
        .option("maxEventsPerTrigger", per_trigger)
        .load()
        .selectExpr("partition", "sequenceNumber", "CAST(body AS STRING) AS body")
    )
    (
        events.writeStream.format("pyfile")
        .option("path", out)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
        .awaitTermination()
    )
    spark.stop()


if __name__ == "__main__":
    main()
