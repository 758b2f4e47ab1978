"""Driver programs for the cluster tests, run over Spark Connect from the test process or in
one long-lived classic driver process (:class:`ClassicDriver`: a process can hold only one
classic SparkContext, and the test process already has a local one). Each returns what it
read and which executors read it.

One driver process serves every classic scenario of a run because each new application on
the cluster costs about 30 s before its first row: ~15 s to start the session and ~17 s for
the executors' cold Python workers in its first batch.
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

# The hub every pyeventhub cluster scenario reads: 4 partitions of 1000 numbered events.
ORDERS_PARTITIONS, ORDERS_PER_PARTITION = 4, 1000
ORDERS_EXPECTED = sorted(
    [str(pid), i, f"p{pid}-{i}"]
    for pid in range(ORDERS_PARTITIONS)
    for i in range(ORDERS_PER_PARTITION)
)


def send_numbered(conn: str, pid: int, numbers: range) -> None:
    """Events ``p<pid>-<n>`` to one partition, so a row names where it came from."""
    from support.eventhubs import send  # the test process only: the driver runs as a script

    send(conn, [f"p{pid}-{i}" for i in numbers], partition_id=str(pid))


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


def pyeventhub_on_cluster(spark: Any, root: str, conn: str) -> dict[str, Any]:
    """pyeventhub AvailableNow, 1000 events per batch, into the pyfile sink; rows tagged."""
    stream = (
        spark.readStream.format("pyeventhub")
        .option("connectionString", conn)
        .options(startingPosition="start", maxEventsPerTrigger="1000")
        # A task per partition, so every batch has work for both executors (packed tasks on
        # the cluster: test_pyeventhub_to_pyfile_survives_a_killed_worker_exactly_once).
        .option("minEventsPerTask", "1")
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


SCENARIOS = {
    "pyrate": pyrate_on_cluster,
    "pyfile": pyfile_on_cluster,
    "pyeventhub": pyeventhub_on_cluster,
}


class ClassicDriver:
    """One classic driver process on the cluster that runs scenarios on request.

    Requests are JSON lines on its stdin; it answers each with one ``RESULT <json>`` or
    ``ERROR <traceback as json>`` line on stdout. Its stderr (Spark's log) goes to a file.
    """

    def __init__(self, master: str, log: Path) -> None:
        from support.spark_processes import users_worker_env

        self.log = log
        with log.open("wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, __file__, master],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                env=users_worker_env(),
            )
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, name="classic-driver-stdout", daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)  # the process closed its stdout: it ended

    def run(self, scenario: str, out: Path, timeout: float = 300, **params: str) -> dict[str, Any]:
        """Run one scenario writing under ``out``; what it returned, or a failure with its log."""
        assert self.proc.stdin is not None
        request = {"scenario": scenario, "out": str(out), "params": params}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.proc.kill()  # its late answer would reach the next request; free the cores
                silent = f"{scenario}: no answer in {timeout}s; log {self.log}"
                raise AssertionError(silent) from None
            if line is None:
                tail = self.log.read_text(errors="replace")[-4000:]
                raise AssertionError(f"{scenario}: the driver process ended\n{tail}")
            if line.startswith("RESULT "):
                parsed: dict[str, Any] = json.loads(line[len("RESULT ") :])
                return parsed
            if line.startswith("ERROR "):
                raise AssertionError(f"{scenario} failed in the driver:\n{json.loads(line[6:])}")

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        """Close its stdin (it stops its session and exits); kill it if it does not."""
        if self.proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError):  # it may have ended already
                self.proc.stdin.close()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def serve(master: str) -> None:
    """The driver process: one session on ``master``, one scenario per request line."""
    import traceback

    from pyspark.sql import SparkSession

    session = SparkSession.builder.master(master).appName("cluster-tests-classic").getOrCreate()
    try:
        for line in sys.stdin:
            request = json.loads(line)
            try:
                scenario = SCENARIOS[request["scenario"]]
                result = scenario(session, request["out"], **request["params"])
                print("RESULT " + json.dumps(result), flush=True)
            except Exception:
                print("ERROR " + json.dumps(traceback.format_exc()), flush=True)
    finally:
        session.stop()


if __name__ == "__main__":
    serve(sys.argv[1])
