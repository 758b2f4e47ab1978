"""A DataSource whose readers and writers load only when Spark asks for them.

The ``pyspark_*`` auto-registration shims import the data source classes, and one failing shim
import disables automatic registration for all of them, so a data source module may import only
PySpark and the standard library. Subclasses name their reader and writer classes as
``"module:Class"`` strings; each is imported on first use and built with the query's options
and schema, where options are validated (query start).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, ClassVar

from pyspark.sql.datasource import DataSource

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

__all__ = ["LazyDataSource"]


def _load(target: str) -> Any:
    module_name, _, name = target.partition(":")
    return getattr(importlib.import_module(module_name), name)


class LazyDataSource(DataSource):  # type: ignore[misc]
    """One short name for ``readStream``, ``read``, ``writeStream`` and ``write``.

    Spark creates the same object for all four, so which options apply is only known once
    the reader or writer is made; each is called as ``Class(options, schema[, overwrite])``.
    """

    STREAM_READER: ClassVar[str]
    BATCH_READER: ClassVar[str]
    STREAM_WRITER: ClassVar[str]
    BATCH_WRITER: ClassVar[str]

    def streamReader(self, schema: StructType) -> Any:
        return _load(self.STREAM_READER)(dict(self.options), schema)

    def reader(self, schema: StructType) -> Any:
        return _load(self.BATCH_READER)(dict(self.options), schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> Any:
        return _load(self.STREAM_WRITER)(dict(self.options), schema, overwrite)

    def writer(self, schema: StructType, overwrite: bool) -> Any:
        return _load(self.BATCH_WRITER)(dict(self.options), schema, overwrite)
