"""``pysparksources demo``: a small streaming pipeline on embedded defaults.

pyrate (time mode, with admission control) streams into an in-process memory sink; each
batch's rows, latency and lag (rows generated but not yet read) are printed as it completes.
"""

from __future__ import annotations

import json
import time
from typing import Any

from pysparksources.local_spark import local_session

__all__ = ["run_demo"]


def _rows_read(progress: dict[str, Any]) -> int:
    end = progress["sources"][0]["endOffset"]
    return int((json.loads(end) if isinstance(end, str) else end)["value"])


def _describe(progress: dict[str, Any]) -> str:
    source = progress["sources"][0]
    end, latest = source["endOffset"], source.get("latestOffset") or source["endOffset"]
    end = json.loads(end) if isinstance(end, str) else end
    latest = json.loads(latest) if isinstance(latest, str) else latest
    rows = sum(s.get("numInputRows") or 0 for s in progress["sources"])
    lag = int(latest["value"]) - int(end["value"])
    return (
        f"batch {progress['batchId']:>3}: {rows:>6} rows  "
        f"latency {progress['durationMs'].get('triggerExecution', 0):>5} ms  "
        f"lag {lag:>6} rows  (rows read so far: {end['value']})"
    )


def run_demo(batches: int = 8, rows_per_second: int = 2000, max_rows: int = 1500) -> int:
    """Run the pipeline for ``batches`` micro-batches and print each one."""
    spark = local_session("pysparksources-demo")
    # A finite stream, so the query is stopped between batches rather than in the middle of one.
    total = batches * max_rows
    print(f"Spark {spark.version}: pyrate at {rows_per_second} rows/s, <= {max_rows} per batch")
    stream = (
        spark.readStream.format("pyrate")
        .option("rowsPerSecond", rows_per_second)
        .option("maxRowsPerTrigger", max_rows)
        .option("numPartitions", 2)
        .option("totalRows", total)
        .load()
    )
    query = (
        stream.writeStream.format("memory")
        .queryName("pyrate_demo")
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    printed, rows_read = -1, 0
    try:
        while rows_read < total:
            if query.exception() is not None:
                raise RuntimeError(str(query.exception()))
            for entry in query.recentProgress:
                progress = json.loads(entry.json)
                if progress["batchId"] > printed and progress["sources"]:
                    print(_describe(progress), flush=True)
                    printed = progress["batchId"]
                    rows_read = _rows_read(progress)
            time.sleep(0.2)
    finally:
        query.stop()
    summary = spark.sql("SELECT count(*) AS n, min(value) AS lo, max(value) AS hi FROM pyrate_demo")
    row = summary.collect()[0]
    print(f"memory sink holds {row.n} rows, values {row.lo}..{row.hi}, each exactly once")
    spark.stop()
    return 0 if row.n == (row.hi - row.lo + 1 if row.n else 0) else 1
