"""The ``pyrate`` data source.

This module imports only PySpark and the standard library so the ``pyspark_pyrate``
auto-registration shim stays import-light; the parser and readers (NumPy, Arrow) load on demand.
"""

from __future__ import annotations

from pysparksources._core.datasource import SourceDataSource
from pysparksources.rate import NAME

__all__ = ["RateDataSource"]


class RateDataSource(SourceDataSource):
    """Spark's ``rate`` (time mode) and ``rate-micro-batch`` (``rowsPerBatch``) in one source.

    Adds admission control (``maxRowsPerTrigger``), Trigger.AvailableNow in several batches,
    finite streams (``totalRows``) and batch reads. It has no sink.
    """

    NAME = NAME
    PARSE = "pysparksources.rate.options:parse_options"
    READ_SCHEMA = "pysparksources.rate.options:read_schema"
    STREAM_READER = "pysparksources.rate.reader:RateStreamReader"
    BATCH_READER = "pysparksources.rate.reader:RateBatchReader"
