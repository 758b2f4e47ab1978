"""The ``pyfile`` data source: one name for reading and writing files.

Readers and writers load lazily (see :class:`~pysparksources._core.datasource.SourceDataSource`):
this module imports only PySpark and the standard library, for the ``pyspark_pyfile``
auto-registration shim.
"""

from __future__ import annotations

from pysparksources import files
from pysparksources._core.datasource import SourceDataSource

__all__ = ["FileDataSource"]


class FileDataSource(SourceDataSource):
    """Files on any fsspec filesystem: parquet, csv, json (JSON Lines), text and orc."""

    NAME = files.NAME
    STREAM_READER = "pysparksources.files.reader:FileStreamReader"
    BATCH_READER = "pysparksources.files.reader:FileBatchReader"
    STREAM_WRITER = "pysparksources.files.writer:FileStreamWriter"
    BATCH_WRITER = "pysparksources.files.writer:FileBatchWriter"
    READ_SCHEMA = "pysparksources.files.reader:read_schema"
