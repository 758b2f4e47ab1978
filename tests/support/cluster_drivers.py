"""Driver programs for the cluster tests, run over Spark Connect from the test process or as
their own process with :func:`run_driver` (a process can hold only one classic SparkContext,
and the test process already has a local one). Each returns (or prints, as one JSON line
starting with ``RESULT``) what it read and which executors read it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def _executor_tag() -> Any:
    """A column naming the executor that ran each row's task."""
    from pyspark.sql.functions import udf

    def executor_of_task() -> str:
        # Executors run in <work-dir>/<app-id>/<executor-id>. Defined here so it is pickled by
        # value: this test module is not importable on the executors.
        import os

        return os.path.basename(os.getcwd())

    return udf(executor_of_task, "string")()


def land_files(folder: str, fmt: str, first: int, count: int, rows: int) -> None:
    """Write ``count`` files of ``rows`` ids each; renamed into place so no reader sees half."""
    import os

    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    os.makedirs(folder, exist_ok=True)
    for i in range(first, first + count):
        ids = list(range(i * rows, (i + 1) * rows))
        table = pa.table({"id": ids, "name": [f"n{v}" for v in ids]})
        hidden = os.path.join(folder, f".f{i:04d}.{fmt}")
        if fmt == "parquet":
            pq.write_table(table, hidden)
        else:
            pacsv.write_csv(table, hidden)  # with a header line
        os.rename(hidden, os.path.join(folder, f"f{i:04d}.{fmt}"))


def pyfile_stream(spark: Any, root: str, fmt: str, **options: str) -> Any:
    """pyfile over ``root/in-<fmt>``: one file per task, tagged with its executor."""
    reader = spark.readStream.format("pyfile").schema("id BIGINT, name STRING")
    reader = reader.options(format=fmt, sourceLogLocation=f"{root}/log-{fmt}", **options)
    if fmt == "csv":
        reader = reader.option("header", "true")
    # An open cost as large as a task's target gives each (few-kB) file its own task, so both
    # executors read; no file is larger than the target, so none is split.
    reader = reader.options(openCostInBytes="64k", maxPartitionBytes="64k")
    return reader.load(f"{root}/in-{fmt}").withColumn("executor", _executor_tag())


def pyfile_on_cluster(spark: Any, root: str) -> dict[str, Any]:
    """pyfile (parquet, csv) AvailableNow into the pyfile sink; files land between two runs."""
    result: dict[str, Any] = {}
    for fmt in ("parquet", "csv"):
        out, ckpt = f"{root}/out-{fmt}", f"{root}/ckpt-{fmt}"
        batches = []
        for first in (0, 6):  # the second run starts from the checkpoint after 4 more files
            land_files(f"{root}/in-{fmt}", fmt, first, 6 if first == 0 else 4, 250)
            query = (
                pyfile_stream(spark, root, fmt, maxFilesPerTrigger="4")
                .writeStream.format("pyfile")
                .options(format="parquet", path=out, checkpointLocation=ckpt)
                .trigger(availableNow=True)
                .start()
            )
            query.awaitTermination()
            batches.append(
                [
                    sum(s.get("numInputRows") or 0 for s in json.loads(p.json)["sources"])
                    for p in query.recentProgress
                ]
            )
        rows = spark.read.parquet(out).select("id", "executor").collect()
        result[fmt] = {
            "ids": sorted(r.id for r in rows),
            "executors": sorted({r.executor for r in rows}),
            "batches": [[n for n in run if n] for run in batches],
        }
    return result


def pyrate_on_cluster(spark: Any, out: str) -> dict[str, Any]:
    """pyrate AvailableNow into Spark's parquet sink, tagging rows with their executor."""
    stream = (
        spark.readStream.format("pyrate")
        .options(rowsPerBatch="1000", totalRows="4000", maxRowsPerTrigger="1000", numPartitions="4")
        .load()
        .withColumn("executor", _executor_tag())
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


def pyeventhub_on_cluster(spark: Any, root: str, conn: str | None = None) -> dict[str, Any]:
    """pyeventhub AvailableNow, 1000 events per batch, into the pyfile sink; rows tagged."""
    import os

    stream = (
        spark.readStream.format("pyeventhub")
        .option("connectionString", conn or os.environ["EH_CONN"])
        .options(startingPosition="start", maxEventsPerTrigger="1000")
        .load()
        .selectExpr("partition", "sequenceNumber", "CAST(body AS STRING) AS body")
        .withColumn("executor", _executor_tag())
    )
    query = (
        stream.writeStream.format("pyfile")
        .options(format="parquet", path=f"{root}/out", checkpointLocation=f"{root}/ckpt")
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    rows = spark.read.parquet(f"{root}/out").collect()
    return {
        "events": sorted([r.partition, r.sequenceNumber, r.body] for r in rows),
        "executors": sorted({r.executor for r in rows}),
        "batches": len(
            [
                p
                for p in query.recentProgress
                if sum(s.get("numInputRows") or 0 for s in json.loads(p.json)["sources"])
            ]
        ),
    }


def run_driver(cluster: Any, scenario: str, out: Path, **env: str) -> dict[str, Any]:
    """Run one scenario as a classic driver process on ``cluster``; its RESULT line, parsed."""
    from support.spark_processes import worker_env

    result = subprocess.run(
        [sys.executable, __file__, cluster.url, scenario, str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**worker_env(), **env},
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert result.returncode == 0 and lines, result.stdout + result.stderr[-4000:]
    parsed: dict[str, Any] = json.loads(lines[-1][len("RESULT ") :])
    return parsed


if __name__ == "__main__":
    from pyspark.sql import SparkSession

    master, scenario, out = sys.argv[1:4]
    session = SparkSession.builder.master(master).appName(scenario).getOrCreate()
    scenarios = {
        "pyrate": pyrate_on_cluster,
        "pyfile": pyfile_on_cluster,
        "pyeventhub": pyeventhub_on_cluster,
    }
    result = scenarios[scenario](session, out)
    print("RESULT " + json.dumps(result))
    session.stop()
