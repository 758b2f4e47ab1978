"""``pysparksources demo``: the full pipeline on embedded defaults, nothing to set up.

Two streaming queries on a local Spark, with the package's Event Hubs emulator standing in
for Azure: pyrate → pyeventhub sink, and pyeventhub source → pyfile sink (parquet). Each
batch's rows, latency and lag (from :class:`pysparksources.monitoring.LagListener`) are printed
as it completes; at the end Spark's own parquet reader checks that every generated row arrived
exactly once.
"""

from __future__ import annotations

import logging
import tempfile
import time
from pathlib import Path
from typing import Any

from pysparksources._local_spark import local_session
from pysparksources.monitoring import LagListener

__all__ = ["run_demo"]

HUB = "demo"


def _lag_text(source: dict[str, Any]) -> str:
    if source["format"] == "pyrate":
        return f"lag {source['rowsBehind']:>6} rows"
    seconds = source["secondsBehind"]
    shown = "?" if seconds is None else f"{seconds:.1f}"
    return f"lag {source['eventsBehind']:>6} events, >= {shown} s behind the newest"


class _Printer(LagListener):
    """Prints each batch of the demo's queries with the lag LagListener computes for it."""

    def __init__(self, labels: dict[str, str]) -> None:
        super().__init__(level=logging.DEBUG)
        self.labels = labels  # query name -> label
        self.rows: dict[str, int] = dict.fromkeys(labels, 0)

    def record(self, progress: dict[str, Any]) -> dict[str, Any] | None:
        entry = super().record(progress)
        name = str(progress.get("name"))
        if name not in self.labels:
            return entry
        rows = sum(int(s.get("numInputRows") or 0) for s in progress["sources"])
        self.rows[name] += rows
        latency = progress["durationMs"].get("triggerExecution", 0)
        lag = "lag ?" if entry is None else _lag_text(entry["sources"][0])
        print(
            f"{self.labels[name]} batch {progress['batchId']:>3}: {rows:>6} rows  "
            f"latency {latency:>5} ms  {lag}",
            flush=True,
        )
        return entry


def _check(*queries: Any) -> None:
    for query in queries:
        if query.exception() is not None:
            raise RuntimeError(f"query {query.name} failed: {query.exception()}")


def run_demo(
    batches: int = 8, rows_per_second: int = 2000, max_rows: int = 1500, timeout: float = 300
) -> int:
    """Run both queries until every generated row is in the parquet output; 0 when exact."""
    from pysparksources.emulator import EventHubsEmulator

    spark = local_session("pysparksources-demo")
    total = batches * max_rows
    emulator = EventHubsEmulator.for_hubs({HUB: 2})
    with tempfile.TemporaryDirectory(prefix="pysparksources-demo-") as tmp, emulator:
        conn = emulator.connection_string(HUB)
        out = Path(tmp) / "out"
        print(
            f"Spark {spark.version}; Event Hubs emulator on {emulator.endpoint}, hub '{HUB}' "
            f"(2 partitions); output {out}"
        )
        print(f"pyrate: {rows_per_second} rows/s, <= {max_rows} per batch, {total} rows in all")
        printer = _Printer(
            {"demo-produce": "pyrate -> pyeventhub   ", "demo-consume": "pyeventhub -> pyfile   "}
        )
        spark.streams.addListener(printer)
        produce = (
            spark.readStream.format("pyrate")
            .option("rowsPerSecond", rows_per_second)
            .option("maxRowsPerTrigger", max_rows)
            .option("numPartitions", 2)
            .option("totalRows", total)
            .load()
            .selectExpr(
                "CAST(value AS STRING) AS body",
                "map('made', CAST(timestamp AS STRING)) AS properties",
            )
            .writeStream.format("pyeventhub")
            .queryName("demo-produce")
            .option("connectionString", conn)
            .option("checkpointLocation", f"{tmp}/ck-produce")
            .trigger(processingTime="500 milliseconds")
            .start()
        )
        consume = (
            spark.readStream.format("pyeventhub")
            .option("connectionString", conn)
            .option("startingPosition", "start")
            .option("maxEventsPerTrigger", max_rows)
            .load()
            .selectExpr(
                "CAST(CAST(body AS STRING) AS BIGINT) AS value",
                "partition",
                "sequenceNumber",
                "enqueuedTime",
            )
            .writeStream.format("pyfile")
            .queryName("demo-consume")
            .option("format", "parquet")
            .option("path", str(out))
            .option("checkpointLocation", f"{tmp}/ck-consume")
            .trigger(processingTime="500 milliseconds")
            .start()
        )
        deadline = time.monotonic() + timeout
        try:
            # Listener events arrive just after each batch: the last one ends the wait.
            while printer.rows["demo-consume"] < total:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the demo did not finish within {timeout:.0f}s")
                _check(produce, consume)
                time.sleep(0.2)
        finally:
            for query in (produce, consume):
                query.stop()
            spark.streams.removeListener(printer)
        row = spark.read.parquet(str(out)).selectExpr(
            "count(*) AS n", "count(DISTINCT value) AS distinct_values", "min(value) AS lo",
            "max(value) AS hi",
        ).collect()[0]  # fmt: skip
    exact = row.n == row.distinct_values == total and row.lo == 0 and row.hi == total - 1
    verdict = "each exactly once" if exact else "NOT exactly once"
    print(f"pyfile output holds {row.n} rows, values {row.lo}..{row.hi}, {verdict}")
    spark.stop()
    return 0 if exact else 1
