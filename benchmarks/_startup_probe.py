"""One pipeline's start-up, measured in a process of its own: ``python -m
benchmarks._startup_probe PIPELINE ROUNDS MASTER [KEY=VALUE ...]``.

The first query of a fresh session pays for everything Spark starts lazily (the JVM's first
jobs, the Python daemons of each worker module); the queries after it show what a new query
costs in a running session. Prints one JSON line: both figures, with the first batch's phases.
A restart pipeline first runs to a checkpoint, then times only the restarted query.
The connection string arrives in the environment (``CONNECTION_ENV``), never in argv.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmarks._children import executor_path_conf
from benchmarks._latency_pieces import CONNECTION_ENV

__all__ = ["PIPELINES", "first_batch"]

# name -> (source, sink); "restart" pipelines restart from a checkpoint before the timing.
PIPELINES: dict[str, tuple[str, str]] = {
    "rate-micro-batch -> noop": ("rate-micro-batch", "noop"),
    "rate-micro-batch -> parquet": ("rate-micro-batch", "parquet"),
    "python reference -> noop": ("pybench_cached", "noop"),
    "python reference -> pyfile": ("pybench_cached", "pyfile"),
    "rate-micro-batch -> python discard": ("rate-micro-batch", "pybench_discard"),
    "pyrate -> noop": ("pyrate", "noop"),
    "rate-micro-batch -> pyfile": ("rate-micro-batch", "pyfile"),
    "rate-micro-batch -> pyeventhub": ("rate-micro-batch", "pyeventhub"),
    "pyeventhub -> noop": ("pyeventhub", "noop"),
    "pyeventhub -> pyfile": ("pyeventhub", "pyfile"),
    "pyeventhub -> pyfile, restart": ("pyeventhub", "pyfile"),
}
ROWS = 1500


def _source(spark: Any, name: str, conn: str) -> Any:
    if name == "pyeventhub":
        return (
            spark.readStream.format("pyeventhub")
            .option("connectionString", conn)
            .option("startingPosition", "start")
            .load()
        )
    return spark.readStream.format(name).option("rowsPerBatch", ROWS).load()


def _writer(frame: Any, sink: str, work: Path, conn: str) -> Any:
    if sink == "pyeventhub":
        frame = frame.selectExpr("CAST(value AS STRING) AS body")
    elif "body" in frame.columns:
        frame = frame.selectExpr("sequenceNumber AS value", "body")
    writer = frame.writeStream.option("checkpointLocation", str(work / "checkpoint"))
    if sink in ("parquet", "pyfile"):
        writer = writer.format(sink).option("path", str(work / "out"))
        return writer.option("format", "parquet") if sink == "pyfile" else writer
    if sink == "pyeventhub":
        return writer.format(sink).option("connectionString", conn)
    return writer.format(sink)


def _utc_epoch(stamp: str) -> float:
    moment = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    return moment.timestamp()


def first_batch(start: Callable[[], Any], timeout: float = 300) -> dict[str, Any]:
    """Seconds from ``start()`` to the end of its first batch with rows, when that batch's
    trigger began, and the batch's phases (Spark's ``durationMs``)."""
    began = time.time()
    query = start()
    try:
        while True:
            done = [p for p in query.recentProgress if p["numInputRows"] > 0]
            if done:
                break
            if query.exception() is not None:
                raise RuntimeError(f"the query failed: {query.exception()}")
            if time.time() - began > timeout:
                raise TimeoutError(f"no rows {timeout:g} s after the query started")
            time.sleep(0.01)
        ended = time.time()
    finally:
        query.stop()
    return {
        "first_rows_s": ended - began,
        "trigger_at_s": _utc_epoch(done[0]["timestamp"]) - began,
        "phases_ms": dict(done[0]["durationMs"]),
    }


def _run_once(spark: Any, pipeline: str, conn: str) -> dict[str, Any]:
    source, sink = PIPELINES[pipeline]
    work = Path(tempfile.mkdtemp(prefix="pysparksources-startup-"))
    try:

        def start() -> Any:
            return _writer(_source(spark, source, conn), sink, work, conn).start()

        if pipeline.endswith("restart"):
            first = _writer(_source(spark, source, conn), sink, work, conn)
            first.trigger(availableNow=True).start().awaitTermination()
            _top_up(conn)
        return first_batch(start)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _top_up(conn: str) -> None:
    """New events for a restarted reader to find (the first run read the backlog)."""
    from azure.eventhub import EventData, EventHubProducerClient

    with EventHubProducerClient.from_connection_string(conn) as producer:
        for pid in producer.get_partition_ids():
            batch = producer.create_batch(partition_id=pid)
            for n in range(ROWS // 2):
                batch.add(EventData(str(n)))
            producer.send_batch(batch)


def main(argv: list[str]) -> int:
    pipeline, rounds, master, *conf = argv
    from benchmarks._reference import CachedBatchDataSource, DiscardDataSource
    from pysparksources._commands.local_session import local_session

    conn = os.environ.get(CONNECTION_ENV, "")
    settings = {**executor_path_conf(), **dict(item.split("=", 1) for item in conf)}
    spark = local_session("pysparksources-bench-startup", master=master, conf=settings)
    spark.dataSource.register(CachedBatchDataSource)
    spark.dataSource.register(DiscardDataSource)
    try:
        # A restart's first run already warms the session: it has no cold figure.
        cold = None if pipeline.endswith("restart") else _run_once(spark, pipeline, conn)
        warm = [_run_once(spark, pipeline, conn) for _ in range(int(rounds))]
    finally:
        spark.stop()
    ordered = sorted(warm, key=lambda r: r["first_rows_s"])
    middle = ordered[(len(ordered) - 1) // 2]  # the lower median: a real run, not a mean
    print(json.dumps({"pipeline": pipeline, "cold": cold, "warm": middle}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
