"""The ``pyfile`` data source: one name for reading and writing files.

The parser, readers and writers load lazily (see
:class:`~pysparksources._core.datasource.SourceDataSource`): this module imports only PySpark
and the standard library, for the ``pyspark_pyfile`` auto-registration shim.
"""

from __future__ import annotations

from typing import Any

from pysparksources._core.datasource import SourceDataSource
from pysparksources.files import NAME

__all__ = ["FileDataSource"]


class FileDataSource(SourceDataSource):
    """Files on any fsspec filesystem: parquet, csv, json (JSON Lines), text and orc."""

    NAME = NAME
    PARSE = "pysparksources.files.options:parse_options"
    READ_SCHEMA = "pysparksources.files.options:read_schema"
    STREAM_READER = "pysparksources.files.reader:FileStreamReader"
    BATCH_READER = "pysparksources.files.reader:FileBatchReader"
    STREAM_WRITER = "pysparksources.files.writer:FileStreamWriter"
    BATCH_WRITER = "pysparksources.files.writer:FileBatchWriter"
    # Spark pickles this object after schema() and builds the reader from the copy, so the
    # reader can tell an inferred schema (schema evolution, hints) from a given one.
    _schema_inferred = False

    def schema(self) -> Any:
        inferred = super().schema()
        self._schema_inferred = True
        return inferred

    def _parse_context(self) -> dict[str, Any]:
        return {"schema_inferred": self._schema_inferred}
