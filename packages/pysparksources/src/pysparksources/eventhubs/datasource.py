"""The ``pyeventhub`` data source: one name for reading from and writing to Event Hubs.

This module imports only PySpark and the standard library, for the ``pyspark_pyeventhub``
auto-registration shim; the parser loads when Spark first asks for a schema, reader or writer
(see :class:`~pysparksources._core.datasource.SourceDataSource`), and the Azure SDK with the
reader or writer.
"""

from __future__ import annotations

from pysparksources._core.datasource import SourceDataSource
from pysparksources.eventhubs import NAME

__all__ = ["EventHubDataSource"]


class EventHubDataSource(SourceDataSource):
    """Azure Event Hubs through the official azure-eventhub SDK."""

    NAME = NAME
    PARSE = "pysparksources.eventhubs.options:parse_options"
    READ_SCHEMA = "pysparksources.eventhubs.options:read_schema"
    STREAM_READER = "pysparksources.eventhubs.reader:EventHubStreamReader"
    BATCH_READER = "pysparksources.eventhubs.reader:EventHubBatchReader"
    STREAM_WRITER = "pysparksources.eventhubs.writer:EventHubStreamWriter"
    BATCH_WRITER = "pysparksources.eventhubs.writer:EventHubBatchWriter"
