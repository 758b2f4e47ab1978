"""Run a streaming query into the ``noop`` sink and read its speed from the query progress."""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Measurement", "measure_stream"]


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


def measure_stream(
    spark: Any,
    label: str,
    fmt: str,
    options: dict[str, str],
    batches: int,
    warmup: int = 2,
    timeout: float = 600,
) -> Measurement:
    """Run ``warmup + batches`` micro-batches as fast as the engine goes, then stop."""
    df = spark.readStream.format(fmt).options(**options).load()
    query = df.writeStream.format("noop").trigger(processingTime="0 seconds").start()
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
        if progress["batchId"] < warmup or progress["batchId"] >= warmup + batches:
            continue
        rows = sum(s.get("numInputRows") or 0 for s in progress["sources"])
        duration_ms = progress["durationMs"]["triggerExecution"]
        result.batch_ms.append(duration_ms)
        result.rows_per_second.append(rows * 1000.0 / max(duration_ms, 1))
    return result
