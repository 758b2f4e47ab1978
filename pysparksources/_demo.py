"""``pysparksources demo``: the full pipeline on embedded defaults, nothing to set up.

Two streaming queries on a local Spark, with the package's Event Hubs emulator standing in
for Azure: pyrate → pyeventhub sink, and pyeventhub source → pyfile sink (parquet). Each
batch's rows, latency and lag are printed as it completes; at the end Spark's own parquet
reader checks that every generated row arrived exactly once.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from pysparksources._local_spark import local_session

__all__ = ["run_demo"]

HUB = "demo"


def _offset(value: Any) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(value) if isinstance(value, str) else value
    return parsed


def _events(offset: dict[str, Any]) -> int:
    """Total next-sequence-number of a pyeventhub offset ``{hub: {partition: n}}``."""
    return sum(int(n) for n in offset[HUB].values())


def _line(name: str, progress: dict[str, Any], lag: int, unit: str) -> str:
    rows = sum(int(s.get("numInputRows") or 0) for s in progress["sources"])
    latency = progress["durationMs"].get("triggerExecution", 0)
    return (
        f"{name} batch {progress['batchId']:>3}: {rows:>6} rows  latency {latency:>5} ms  "
        f"lag {lag:>6} {unit}"
    )


def _rate_lag(source: dict[str, Any]) -> int:
    end = _offset(source["endOffset"])
    latest = _offset(source.get("latestOffset") or source["endOffset"])
    return int(latest.get("value", 0)) - int(end.get("value", 0))


def _hub_lag(source: dict[str, Any]) -> int:
    end = _offset(source["endOffset"])
    latest = _offset(source.get("latestOffset") or source["endOffset"])
    return _events(latest) - _events(end)


class _Printer:
    """Prints each new batch of a query once."""

    def __init__(self, name: str, query: Any, lag: Any, unit: str) -> None:
        self.name, self.query, self.lag, self.unit = name, query, lag, unit
        self.printed = -1
        self.rows = 0

    def poll(self) -> None:
        if self.query.exception() is not None:
            raise RuntimeError(f"{self.name} failed: {self.query.exception()}")
        for entry in self.query.recentProgress:
            progress = json.loads(entry.json)
            if progress["batchId"] <= self.printed or not progress["sources"]:
                continue
            self.printed = progress["batchId"]
            self.rows += sum(int(s.get("numInputRows") or 0) for s in progress["sources"])
            lag = self.lag(progress["sources"][0])
            print(_line(self.name, progress, lag, self.unit), flush=True)


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
            .option("format", "parquet")
            .option("path", str(out))
            .option("checkpointLocation", f"{tmp}/ck-consume")
            .trigger(processingTime="500 milliseconds")
            .start()
        )
        printers = [
            _Printer("pyrate -> pyeventhub   ", produce, _rate_lag, "rows"),
            _Printer("pyeventhub -> pyfile   ", consume, _hub_lag, "events"),
        ]
        deadline = time.monotonic() + timeout
        try:
            while printers[1].rows < total:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the demo did not finish within {timeout:.0f}s")
                for printer in printers:
                    printer.poll()
                time.sleep(0.2)
        finally:
            for query in (produce, consume):
                query.stop()
        row = spark.read.parquet(str(out)).selectExpr(
            "count(*) AS n", "count(DISTINCT value) AS distinct_values", "min(value) AS lo",
            "max(value) AS hi",
        ).collect()[0]  # fmt: skip
    exact = row.n == row.distinct_values == total and row.lo == 0 and row.hi == total - 1
    verdict = "each exactly once" if exact else "NOT exactly once"
    print(f"pyfile output holds {row.n} rows, values {row.lo}..{row.hi}, {verdict}")
    spark.stop()
    return 0 if exact else 1
