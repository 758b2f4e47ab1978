"""Arrow helpers shared by the sources and sinks.

Spark checks only the first RecordBatch a reader yields, and it must equal Spark's own Arrow
schema exactly: timestamps are ``timestamp[us, tz=UTC]``. Writers receive batches in that
same schema.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
    from pyspark.sql.types import StructType

__all__ = ["json_batches", "spark_arrow_schema", "timestamp_us_array"]


def spark_arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema Spark uses for ``schema`` between the JVM and Python data sources."""
    from pysparksources._core.compat import to_arrow_schema_utc

    return to_arrow_schema_utc(schema)


def timestamp_us_array(micros: np.ndarray) -> pa.Array:
    """Wrap int64 microseconds since the epoch as a UTC timestamp array without copying."""
    import pyarrow as pa

    return pa.array(micros, type=pa.int64()).view(pa.timestamp("us", tz="UTC"))


def json_batches(source: Any, read_options: Any, parse_options: Any) -> Iterator[pa.RecordBatch]:
    """Record batches of JSON Lines read from ``source`` (a file object).

    pyarrow 20 added a streaming reader, which holds one block at a time. Older pyarrow (the
    package supports 15 and newer, as Spark 4.1 does) parses the whole source at once, so a
    file then costs memory in proportion to its size. Errors surface while iterating, both ways.
    """
    import pyarrow.json as pj

    if hasattr(pj, "open_json"):
        yield from pj.open_json(source, read_options=read_options, parse_options=parse_options)
    else:
        table = pj.read_json(source, read_options=read_options, parse_options=parse_options)
        yield from table.to_batches()
