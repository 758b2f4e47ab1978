"""What every Spark scenario shares: its session, and per-batch speed from the query progress."""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks._children import executor_path_conf

__all__ = ["Measurement", "bench_session", "measure_sink", "measure_stream"]


def bench_session(args: argparse.Namespace, **conf: str) -> Any:
    """A classic session on ``--master`` with ``--conf`` settings over the scenario's own.

    Its executors' Python workers import the reference sources (``_reference``) from the
    repository, whatever environment the master's workers were started in.
    """
    from pysparksources._commands.local_session import local_session

    given = dict(item.split("=", 1) for item in args.conf)
    settings = {**executor_path_conf(), **conf, **given}
    return local_session("pysparksources-bench", master=args.master, conf=settings)


@dataclass
class Measurement:
    """Per-batch figures of one query; medians skip the warm-up batches."""

    label: str
    rows_per_second: list[float] = field(default_factory=list)
    batch_ms: list[float] = field(default_factory=list)

    @property
    def median_rows_per_second(self) -> float:
        return statistics.median(self.rows_per_second) if self.rows_per_second else 0.0

    @property
    def median_batch_ms(self) -> float:
        return statistics.median(self.batch_ms) if self.batch_ms else 0.0


def _measure(query: Any, label: str, batches: int, warmup: int, timeout: float) -> Measurement:
    """Let ``query`` run ``warmup + batches`` micro-batches, stop it, read its progress."""
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


def measure_stream(
    spark: Any,
    label: str,
    fmt: str,
    options: dict[str, str],
    batches: int,
    warmup: int = 2,
    timeout: float = 600,
) -> Measurement:
    """Source ``fmt`` into the ``noop`` sink, as fast as the engine goes."""
    df = spark.readStream.format(fmt).options(**options).load()
    query = df.writeStream.format("noop").trigger(processingTime="0 seconds").start()
    return _measure(query, label, batches, warmup, timeout)


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
    """pyrate into ``sink`` (given a fresh output folder unless it is the discard sink)."""
    work = Path(tempfile.mkdtemp(prefix="pysparksources-sink-bench-"))
    try:
        df = spark.readStream.format("pyrate").options(**source_options).load()
        writer = df.writeStream.format(sink).options(**options)
        writer = writer.option("checkpointLocation", str(work / "ck"))
        if sink != "pybench_discard":
            writer = writer.option("path", str(work / "out"))
        query = writer.trigger(processingTime="0 seconds").start()
        return _measure(query, label, batches, warmup, timeout)
    finally:
        shutil.rmtree(work, ignore_errors=True)
