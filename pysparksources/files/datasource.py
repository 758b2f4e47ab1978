"""The ``pyfile`` data source: one name for reading and writing files.

Spark creates the same DataSource object for ``readStream``, ``read``, ``writeStream`` and
``write``, so option validation happens when the reader or writer is made (query start), where
it is known which options apply. Readers and writers load lazily: this module imports only
PySpark and the standard library, for the ``pyspark_pyfile`` auto-registration shim.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSource

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

__all__ = ["FileDataSource"]


class FileDataSource(DataSource):  # type: ignore[misc]
    """Files on any fsspec filesystem: parquet, csv, json (JSON Lines), text and orc."""

    @classmethod
    def name(cls) -> str:
        return "pyfile"

    def schema(self) -> Any:
        from pysparksources.files.reader import default_schema

        return default_schema(dict(self.options))

    def streamReader(self, schema: StructType) -> Any:
        from pysparksources.files.reader import FileStreamReader

        return FileStreamReader(dict(self.options), schema)

    def reader(self, schema: StructType) -> Any:
        from pysparksources.files.reader import FileBatchReader

        return FileBatchReader(dict(self.options), schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> Any:
        from pysparksources.files.writer import FileStreamWriter

        return FileStreamWriter(dict(self.options), schema, overwrite)

    def writer(self, schema: StructType, overwrite: bool) -> Any:
        from pysparksources.files.writer import FileBatchWriter

        return FileBatchWriter(dict(self.options), schema, overwrite)
