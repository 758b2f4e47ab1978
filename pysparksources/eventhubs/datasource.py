"""The ``pyeventhub`` data source: one name for reading from and writing to Event Hubs.

Spark creates the same DataSource object for ``readStream``, ``read``, ``writeStream`` and
``write``; options are validated when the reader or writer is made (query start), where it is
known which options apply. This module imports only PySpark and the standard library, for the
``pyspark_pyeventhub`` auto-registration shim; the Azure SDK loads with the reader or writer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSource

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

__all__ = ["EventHubDataSource"]


class EventHubDataSource(DataSource):  # type: ignore[misc]
    """Azure Event Hubs through the official azure-eventhub SDK."""

    @classmethod
    def name(cls) -> str:
        return "pyeventhub"

    def schema(self) -> Any:
        from pysparksources.eventhubs._schema import READ_SCHEMA_DDL

        return READ_SCHEMA_DDL

    def streamReader(self, schema: StructType) -> Any:
        from pysparksources.eventhubs.reader import EventHubStreamReader

        return EventHubStreamReader(dict(self.options), schema)

    def reader(self, schema: StructType) -> Any:
        from pysparksources.eventhubs.reader import EventHubBatchReader

        return EventHubBatchReader(dict(self.options), schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> Any:
        from pysparksources.eventhubs.writer import EventHubStreamWriter

        return EventHubStreamWriter(dict(self.options), schema, overwrite)

    def writer(self, schema: StructType, overwrite: bool) -> Any:
        from pysparksources.eventhubs.writer import EventHubBatchWriter

        return EventHubBatchWriter(dict(self.options), schema, overwrite)
