"""``pysparksources demo``: the full pipeline on embedded defaults, nothing to set up.

Two streaming queries on a local Spark, with the Event Hubs emulator (the
``pysparksources-emulator`` distribution, which the ``demo`` extra installs) standing in
for Azure: pyrate → pyeventhub sink, and pyeventhub source → pyfile sink (parquet). Each
batch's rows, latency and lag (from :class:`pysparksources.monitoring.LagListener`) are
printed as it completes, and a summary at the end says how
many rows went in and came out, the batch latencies, the lag left and whether Spark's own
parquet reader finds every generated row exactly once.

The parquet output goes to ``--output DIR`` when given (a new or empty folder, kept), else to
a temporary folder deleted at the end, whose path is not printed.

Every printed batch carries rows: pyrate runs in batch mode (``rowsPerBatch``: a logical batch
per trigger, the first one included; a new time-mode stream has no rows due at its first
trigger), and the reading query starts once the first batch is in the hub.
"""

from __future__ import annotations

import logging
import math
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pysparksources._commands.demo_requirements import DEMO, check_requirements
from pysparksources._commands.local_session import local_session
from pysparksources.errors import ArgumentError, OperationTimeoutError, PySparkSourcesError
from pysparksources.monitoring import LagListener

__all__ = ["run_demo"]

HUB = "demo"
TRIGGER = "500 milliseconds"


def percentile(values: list[int], fraction: float) -> int:
    """Nearest-rank percentile: the smallest value with ``fraction`` of them at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


@dataclass
class Batch:
    batch_id: int
    rows: int
    latency_ms: int
    lag: str  # as LagListener computed it: rows (pyrate) or events and seconds (pyeventhub)
    behind: int  # rows or events not yet read


@dataclass
class QueryLog:
    """The batches one query has run, printed once each as they complete."""

    name: str
    batches: list[Batch] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return sum(b.rows for b in self.batches)

    def add(self, progress: dict[str, Any], lag: dict[str, Any]) -> None:
        batch = Batch(
            batch_id=int(progress["batchId"]),
            rows=int(progress["sources"][0].get("numInputRows") or 0),
            latency_ms=int(progress["durationMs"]["triggerExecution"]),
            lag=_lag_text(lag),
            behind=int(lag["rowsBehind"] if lag["format"] == "pyrate" else lag["eventsBehind"]),
        )
        self.batches.append(batch)
        print(
            f"{self.name:<22} batch {batch.batch_id:>3}: {batch.rows:>6} rows  "
            f"latency {batch.latency_ms:>5} ms  lag {batch.lag}",
            flush=True,
        )

    def latency_summary(self) -> str:
        latencies = [b.latency_ms for b in self.batches]
        return (
            f"{self.name}: p50 {percentile(latencies, 0.5)} ms, "
            f"p95 {percentile(latencies, 0.95)} ms"
        )


# Printed once above the batches: what the lag column says.
LAG_LEGEND = (
    "lag: rows or events not read yet. 'x-y s behind': the first unread event was enqueued x to\n"
    "y seconds before the newest one. 'time behind not known yet': the reader is still on events\n"
    "that were in the hub before it started, which LagListener did not see arrive."
)


def _lag_text(lag: dict[str, Any]) -> str:
    if lag["format"] == "pyrate":
        return f"{lag['rowsBehind']:>6} rows"
    events, low, high = lag["eventsBehind"], lag["secondsBehind"], lag["secondsBehindMax"]
    if events == 0:
        behind = "caught up"
    elif low is None or high is None:
        behind = "time behind not known yet"
    elif f"{low:.1f}" == f"{high:.1f}":
        behind = f"{low:.1f} s behind"
    else:
        behind = f"{low:.1f}-{high:.1f} s behind"
    return f"{events:>6} events, {behind}"


def check_arguments(batches: int, output: str | None) -> Path | None:
    """Raise :class:`ArgumentError` for a bad ``--batches`` or ``--output``; return the output
    folder (resolved), if any. ``--output`` must be a new or empty folder: one that already
    holds a sink's output would make pyfile skip the batches it has seen."""
    if batches < 1:
        raise ArgumentError(DEMO, f"--batches must be at least 1, got {batches}")
    if output is None:
        return None
    folder = Path(output).expanduser().resolve()
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise ArgumentError(
            DEMO, f"--output {output}: give a new or empty folder ({folder} is not empty)"
        )
    return folder


def output_line(folder: Path | None) -> str:
    """Where the parquet output goes, for the lines printed before the queries start."""
    if folder is None:
        return "parquet output in a temporary folder, deleted at the end (--output DIR keeps it)"
    return f"parquet output in {folder} (kept)"


class _DemoListener(LagListener):
    """Routes each batch of the demo's queries, with the lag LagListener computed for it, to
    the query's log. Spark's progress without addBatch is a "no new data" report: it feeds
    the lag history but is not a batch."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)  # the demo prints; no log line per progress
        self.logs: dict[str, QueryLog] = {}
        self._printing = threading.Lock()

    def record(self, progress: dict[str, Any]) -> dict[str, Any] | None:
        entry = super().record(progress)
        log = self.logs.get(str(progress.get("name")))
        if log is not None and entry is not None and "addBatch" in progress["durationMs"]:
            with self._printing:
                log.add(progress, entry["sources"][0])
        return entry


def _wait(queries: list[Any], until: Any, deadline: float, what: str) -> None:
    while not until():
        if time.monotonic() > deadline:
            raise OperationTimeoutError(DEMO, f"timed out waiting for {what}")
        for query in queries:
            if query.exception() is not None:
                raise PySparkSourcesError(DEMO, f"{query.name} failed: {query.exception()}")
        time.sleep(0.1)


def run_demo(
    batches: int = 8, rows_per_batch: int = 1500, timeout: float = 300, output: str | None = None
) -> int:
    """Run both queries until every generated row is in the parquet output; 0 when exact.

    ``output``: a new or empty folder that keeps the parquet output (else a temporary one)."""
    check_requirements()
    from pysparksources_emulator import EventHubsEmulator

    kept = check_arguments(batches, output)
    started = time.monotonic()
    spark = local_session("pysparksources-demo")
    total = batches * rows_per_batch
    emulator = EventHubsEmulator.for_hubs({HUB: 2})
    with tempfile.TemporaryDirectory(prefix="pysparksources-demo-") as tmp, emulator:
        conn = emulator.connection_string(HUB)
        out = kept or Path(tmp) / "out"
        print(
            f"Spark {spark.version} ({spark.sparkContext.master}); Event Hubs emulator on "
            f"{emulator.endpoint}, hub '{HUB}' (2 partitions); {output_line(kept)}"
        )
        print(
            f"pyrate writes {batches} batches of {rows_per_batch} rows ({total} in all), one "
            f"per {TRIGGER}; the reader starts once the first batch is in the hub"
        )
        print(LAG_LEGEND)
        listener = _DemoListener()
        produced = listener.logs["demo-produce"] = QueryLog("pyrate -> pyeventhub")
        consumed = listener.logs["demo-consume"] = QueryLog("pyeventhub -> pyfile")
        spark.streams.addListener(listener)
        queries_started = time.monotonic()
        produce = (
            spark.readStream.format("pyrate")
            .option("rowsPerBatch", rows_per_batch)
            .option("startTimestamp", int(time.time() * 1000))
            .option("advanceMillisPerBatch", 500)
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
            .trigger(processingTime=TRIGGER)
            .start()
        )
        consume = None
        deadline = time.monotonic() + timeout
        try:
            _wait([produce], lambda: produced.batches, deadline, "pyrate's first batch")
            first_batch_s = time.monotonic() - queries_started
            consume = (
                spark.readStream.format("pyeventhub")
                .option("connectionString", conn)
                .option("startingPosition", "start")
                .option("maxEventsPerTrigger", rows_per_batch)
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
                .trigger(processingTime=TRIGGER)
                .start()
            )
            _wait(
                [produce, consume],
                lambda: produced.rows >= total and consumed.rows >= total,
                deadline,
                "every row in the output",
            )
        finally:
            running = [query for query in (produce, consume) if query is not None]
            for query in running:
                query.stop()
            listener.detach(spark, *running)
        row = spark.read.parquet(str(out)).selectExpr(
            "count(*) AS n", "count(DISTINCT value) AS distinct_values", "min(value) AS lo",
            "max(value) AS hi",
        ).collect()[0]  # fmt: skip
    spark.stop()
    exact = row.n == row.distinct_values == total and row.lo == 0 and row.hi == total - 1
    print()
    print("Summary")
    print(f"  rows in           {produced.rows} (pyrate, {len(produced.batches)} batches)")
    print(
        f"  rows out          {row.n} (Spark's parquet reader; the reader took "
        f"{len(consumed.batches)} batches)"
    )
    print(f"  batch latency     {produced.latency_summary()}")
    print(f"                    {consumed.latency_summary()}")
    print(f"  lag at the end    {consumed.batches[-1].behind} events in the hub not yet read")
    print(
        f"  time              first batch {first_batch_s:.1f} s after the queries started "
        f"(it starts Spark's Python workers); {time.monotonic() - started:.1f} s in all"
    )
    verdict = (
        f"yes: values {row.lo}..{row.hi}, each exactly once"
        if exact
        else f"NO: {row.n} rows, {row.distinct_values} distinct values {row.lo}..{row.hi}"
    )
    print(f"  exactly once      {verdict}")
    if kept is not None:
        print(f"  output            {kept} (parquet; spark.read.parquet reads it)")
    return 0 if exact else 1
