"""Driver programs run as their own process against the cluster (a process can hold only one
classic SparkContext, and the test process already has a local one).

Each prints one JSON line starting with ``RESULT``.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def pyrate_on_cluster(spark: Any, out: str) -> dict[str, Any]:
    """pyrate AvailableNow into Spark's parquet sink, tagging rows with their executor."""
    from pyspark.sql.functions import udf

    def executor_of_task() -> str:
        # Executors run in <work-dir>/<app-id>/<executor-id>. Defined here so it is pickled by
        # value: this test module is not importable on the executors.
        import os

        return os.path.basename(os.getcwd())

    where = udf(executor_of_task, "string")
    stream = (
        spark.readStream.format("pyrate")
        .options(rowsPerBatch="1000", totalRows="4000", maxRowsPerTrigger="1000", numPartitions="4")
        .load()
        .withColumn("executor", where())
    )
    query = (
        stream.writeStream.format("parquet")
        .option("path", out)
        .option("checkpointLocation", out + "-ckpt")
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    rows = spark.read.parquet(out).select("value", "executor").collect()
    return {
        "values": sorted(r.value for r in rows),
        "executors": sorted({r.executor for r in rows}),
    }


if __name__ == "__main__":
    from pyspark.sql import SparkSession

    master, scenario, out = sys.argv[1:4]
    session = SparkSession.builder.master(master).appName(scenario).getOrCreate()
    result = {"pyrate": pyrate_on_cluster}[scenario](session, out)
    print("RESULT " + json.dumps(result))
    session.stop()
