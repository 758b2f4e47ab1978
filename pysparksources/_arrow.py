"""Arrow helpers shared by the sources.

Spark checks only the first RecordBatch a reader yields, and it must equal Spark's own Arrow
schema exactly: timestamps are ``timestamp[us, tz=UTC]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

__all__ = ["timestamp_us_array"]


def timestamp_us_array(micros: np.ndarray) -> pa.Array:
    """Wrap int64 microseconds since the epoch as a UTC timestamp array without copying."""
    import pyarrow as pa

    return pa.array(micros, type=pa.int64()).view(pa.timestamp("us", tz="UTC"))
