"""The ``pyeventhub`` data source: one name for reading from and writing to Event Hubs.

Readers and writers load lazily (see :class:`~pysparksources._core.datasource.SourceDataSource`):
this module imports only PySpark and the standard library, for the ``pyspark_pyeventhub``
auto-registration shim; the Azure SDK loads with the reader or writer.
"""

from __future__ import annotations

from pysparksources import eventhubs
from pysparksources._core.datasource import SourceDataSource

__all__ = ["EventHubDataSource"]


class EventHubDataSource(SourceDataSource):
    """Azure Event Hubs through the official azure-eventhub SDK."""

    NAME = eventhubs.NAME
    STREAM_READER = "pysparksources.eventhubs.reader:EventHubStreamReader"
    BATCH_READER = "pysparksources.eventhubs.reader:EventHubBatchReader"
    STREAM_WRITER = "pysparksources.eventhubs.writer:EventHubStreamWriter"
    BATCH_WRITER = "pysparksources.eventhubs.writer:EventHubBatchWriter"
    READ_SCHEMA = "pysparksources.eventhubs.options:read_schema"
