"""The ``pyeventhub`` data source: one name for reading from and writing to Event Hubs.

Readers and writers load lazily (see :class:`~pysparksources._datasource.LazyDataSource`):
this module imports only PySpark and the standard library, for the ``pyspark_pyeventhub``
auto-registration shim; the Azure SDK loads with the reader or writer.
"""

from __future__ import annotations

from pysparksources._datasource import LazyDataSource

__all__ = ["EventHubDataSource"]


class EventHubDataSource(LazyDataSource):
    """Azure Event Hubs through the official azure-eventhub SDK."""

    STREAM_READER = "pysparksources.eventhubs.reader:EventHubStreamReader"
    BATCH_READER = "pysparksources.eventhubs.reader:EventHubBatchReader"
    STREAM_WRITER = "pysparksources.eventhubs.writer:EventHubStreamWriter"
    BATCH_WRITER = "pysparksources.eventhubs.writer:EventHubBatchWriter"

    @classmethod
    def name(cls) -> str:
        return "pyeventhub"

    def schema(self) -> str:
        # Called at load() when no .schema() is given (not for writes): the body options are
        # checked here, and with bodyFormat=avro the body column takes avroSchema's type.
        from pysparksources._options import OptionError
        from pysparksources.eventhubs._body_format import body_format_from_raw, read_schema_ddl

        try:
            return read_schema_ddl(body_format_from_raw(dict(self.options)))
        except OptionError as error:
            raise error.with_traceback(None) from None
