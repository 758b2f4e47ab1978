"""The ``pyfile`` data source: one name for reading and writing files.

Readers and writers load lazily (see :class:`~pysparksources._datasource.LazyDataSource`):
this module imports only PySpark and the standard library, for the ``pyspark_pyfile``
auto-registration shim.
"""

from __future__ import annotations

from pysparksources._datasource import LazyDataSource

__all__ = ["FileDataSource"]


class FileDataSource(LazyDataSource):
    """Files on any fsspec filesystem: parquet, csv, json (JSON Lines), text and orc."""

    STREAM_READER = "pysparksources.files.reader:FileStreamReader"
    BATCH_READER = "pysparksources.files.reader:FileBatchReader"
    STREAM_WRITER = "pysparksources.files.writer:FileStreamWriter"
    BATCH_WRITER = "pysparksources.files.writer:FileBatchWriter"
    READ_SCHEMA = "pysparksources.files.reader:read_schema"

    @classmethod
    def name(cls) -> str:
        return "pyfile"
