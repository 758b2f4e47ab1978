"""Rows of one pyrate slice as Arrow record batches, built with NumPy (no per-row Python)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from pysparksources._core.arrow import timestamp_us_array
from pysparksources.rate.planning import RateSlice

__all__ = ["RATE_ARROW_SCHEMA", "generate"]

RATE_ARROW_SCHEMA = pa.schema(
    [pa.field("timestamp", pa.timestamp("us", tz="UTC")), pa.field("value", pa.int64())]
)
# Rows per RecordBatch: bounds a task's memory; larger batches did not raise throughput.
CHUNK_ROWS = 1 << 20


def _timestamps_ms(part: RateSlice, values: np.ndarray) -> np.ndarray:
    if part.rule == "stepped":
        first, last = (int(values[0]) - part.range_start, int(values[-1]) - part.range_start)
        if first // part.rows_per_batch == last // part.rows_per_batch:
            # The common case: a micro-batch inside one logical batch shares one timestamp.
            stamp = part.base_ms + first // part.rows_per_batch * part.advance_ms
            return np.full(len(values), stamp, dtype=np.int64)
        offsets = values - part.range_start
        return part.base_ms + (offsets // part.rows_per_batch) * part.advance_ms
    offsets = values - part.range_start
    # Java Math.round: floor, then up when the fraction is at least one half.
    scaled = offsets.astype(np.float64) * part.ms_per_value
    rounded = np.floor(scaled)
    rounded += (scaled - rounded) >= 0.5
    return part.base_ms + rounded.astype(np.int64)


def generate(part: RateSlice, chunk_rows: int = CHUNK_ROWS) -> Iterator[pa.RecordBatch]:
    """Yield the slice's rows in value order, at most ``chunk_rows`` per batch."""
    span = part.step * chunk_rows
    for chunk_first in range(part.first, part.end, span):
        values = np.arange(
            chunk_first, min(chunk_first + span, part.end), part.step, dtype=np.int64
        )
        if len(values) == 0:
            continue
        micros = _timestamps_ms(part, values) * 1000
        yield pa.RecordBatch.from_arrays(
            [timestamp_us_array(micros), pa.array(values, type=pa.int64())],
            schema=RATE_ARROW_SCHEMA,
        )
