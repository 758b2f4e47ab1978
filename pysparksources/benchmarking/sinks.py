"""Sink benchmarks: the same pyrate stream into Spark's file sink, pyfile, and a discard sink.

``pybench_discard`` consumes its Arrow batches and writes nothing: its throughput is the cost
of the engine's JVM -> Python Arrow hop and task round trip alone, the cap for any Python sink
at that batch shape.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceStreamArrowWriter, WriterCommitMessage

from pysparksources.benchmarking.harness import Measurement

__all__ = ["DiscardDataSource", "measure_sink"]


@dataclass
class _Rows(WriterCommitMessage):  # type: ignore[misc]
    rows: int


class _DiscardWriter(DataSourceStreamArrowWriter):  # type: ignore[misc]
    def write(self, iterator: Iterator[pa.RecordBatch]) -> _Rows:
        return _Rows(sum(batch.num_rows for batch in iterator))

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        return None


class DiscardDataSource(DataSource):  # type: ignore[misc]
    """A Python sink that reads every Arrow batch and keeps nothing."""

    @classmethod
    def name(cls) -> str:
        return "pybench_discard"

    def streamWriter(self, schema: Any, overwrite: bool) -> _DiscardWriter:
        return _DiscardWriter()


def measure_sink(
    spark: Any,
    label: str,
    sink: str,
    options: dict[str, str],
    source_options: dict[str, str],
    batches: int,
    warmup: int = 2,
    timeout: float = 900,
) -> Measurement:
    """Run ``warmup + batches`` micro-batches of pyrate into ``sink``; per-batch rows/s."""
    work = Path(tempfile.mkdtemp(prefix="pysparksources-sink-bench-"))
    try:
        df = spark.readStream.format("pyrate").options(**source_options).load()
        writer = df.writeStream.format(sink).options(**options)
        writer = writer.option("checkpointLocation", str(work / "ck"))
        if sink != "pybench_discard":
            writer = writer.option("path", str(work / "out"))
        query = writer.trigger(processingTime="0 seconds").start()
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                if query.exception() is not None:
                    raise RuntimeError(f"{label} failed: {query.exception()}")
                last = query.lastProgress
                if last is not None and json.loads(last.json)["batchId"] >= warmup + batches - 1:
                    break
                time.sleep(0.2)
            else:
                raise TimeoutError(f"{label}: {warmup + batches} batches took over {timeout}s")
        finally:
            query.stop()
        result = Measurement(label)
        for entry in query.recentProgress:
            progress = json.loads(entry.json)
            if not warmup <= progress["batchId"] < warmup + batches:
                continue
            rows = sum(s.get("numInputRows") or 0 for s in progress["sources"])
            duration_ms = progress["durationMs"]["triggerExecution"]
            result.batch_ms.append(duration_ms)
            result.rows_per_second.append(rows * 1000.0 / max(duration_ms, 1))
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)
