"""Arrow helpers shared by the sources and sinks.

Spark checks only the first RecordBatch a reader yields, and it must equal Spark's own Arrow
schema exactly: timestamps are ``timestamp[us, tz=UTC]``. Writers receive batches in that
same schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
    from pyspark.sql.types import StructType

__all__ = ["spark_arrow_schema", "timestamp_us_array"]


def spark_arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema Spark uses for ``schema`` between the JVM and Python data sources."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(schema, timezone="UTC")


def timestamp_us_array(micros: np.ndarray) -> pa.Array:
    """Wrap int64 microseconds since the epoch as a UTC timestamp array without copying."""
    import pyarrow as pa

    return pa.array(micros, type=pa.int64()).view(pa.timestamp("us", tz="UTC"))
