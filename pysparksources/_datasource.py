"""A DataSource whose readers and writers load only when Spark asks for them.

The ``pyspark_*`` auto-registration shims import the data source classes, and one failing shim
import disables automatic registration for all of them, so a data source module may import only
PySpark and the standard library. Subclasses name their reader and writer classes as
``"module:Class"`` strings; each is imported on first use and built with the query's options
and schema, where options are validated.

When Spark lets Python see options (see docs/errors.md for the measured table):

- ``load()`` without ``.schema(...)``: Spark creates the data source and calls ``schema()`` in
  the caller's thread. :meth:`LazyDataSource.schema` validates the read options there, so a
  bad option fails ``load()`` (on Spark Connect: the first call that analyses the DataFrame).
- ``load()`` with ``.schema(...)`` and ``writeStream...start()``: Spark calls no Python until
  the query runs (``PythonDataSourceV2`` defers creating the data source when it is handed a
  schema). The reader or writer then fails the query, in its own thread.
- ``save()`` and batch actions: the writer or reader is built in the caller's thread.

A stream reader whose constructor raises would make PySpark 4.3's source runner end the
error with ``UnboundLocalError: cannot access local variable 'reader'`` (its ``finally:
reader.stop()`` runs with no reader). :meth:`LazyDataSource.streamReader` therefore returns a
:class:`FailedStreamReader` that raises the real error from the first call Spark makes, so
the query's error ends with our one-line :class:`~pysparksources._options.OptionError`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn

from pyspark.sql.datasource import DataSource, DataSourceStreamReader
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

from pysparksources._options import OptionError

if TYPE_CHECKING:
    from pyspark.sql.datasource import InputPartition
    from pyspark.sql.types import StructType

__all__ = ["FailedStreamReader", "LazyDataSource"]


def _load(target: str) -> Any:
    module_name, _, name = target.partition(":")
    return getattr(importlib.import_module(module_name), name)


def _bare(error: Exception) -> Exception:
    return error.bare() if isinstance(error, OptionError) else error


class FailedStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):  # type: ignore[misc]
    """Stands in for a stream reader that could not be built; every call raises its error."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def _fail(self) -> NoReturn:
        raise _bare(self.error) from None

    def initialOffset(self) -> dict[str, Any]:
        self._fail()

    # Two parameters, so Spark's feature check sees the admission-control signature.
    def latestOffset(self, start: dict[str, Any], limit: Any) -> dict[str, Any]:
        self._fail()

    def getDefaultReadLimit(self) -> Any:
        self._fail()

    def prepareForTriggerAvailableNow(self) -> None:
        self._fail()

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        self._fail()

    def read(self, partition: InputPartition) -> Any:
        self._fail()

    def commit(self, end: dict[str, Any]) -> None:
        self._fail()

    def stop(self) -> None:
        """Nothing was started."""


class LazyDataSource(DataSource):  # type: ignore[misc]
    """One short name for ``readStream``, ``read``, ``writeStream`` and ``write``.

    Spark creates the same object for all four, so which options apply is only known once
    ``schema()`` (reads only), a reader or a writer is asked for; each reader and writer is
    called as ``Class(options, schema[, overwrite])``. ``READ_SCHEMA`` names a function
    ``(options) -> schema`` that validates the read options and returns the default schema.
    """

    STREAM_READER: ClassVar[str]
    BATCH_READER: ClassVar[str]
    STREAM_WRITER: ClassVar[str]
    BATCH_WRITER: ClassVar[str]
    READ_SCHEMA: ClassVar[str]

    def schema(self) -> Any:
        # Only reads without a user schema get here, at load(), in the caller's thread.
        try:
            return _load(self.READ_SCHEMA)(dict(self.options))
        except OptionError as error:
            raise error.bare() from None

    def streamReader(self, schema: StructType) -> Any:
        try:
            return _load(self.STREAM_READER)(dict(self.options), schema)
        except Exception as error:  # raised at Spark's first call instead: see the module doc
            return FailedStreamReader(error)

    def reader(self, schema: StructType) -> Any:
        try:
            return _load(self.BATCH_READER)(dict(self.options), schema)
        except OptionError as error:
            raise error.bare() from None

    def streamWriter(self, schema: StructType, overwrite: bool) -> Any:
        try:
            return _load(self.STREAM_WRITER)(dict(self.options), schema, overwrite)
        except OptionError as error:
            raise error.bare() from None

    def writer(self, schema: StructType, overwrite: bool) -> Any:
        try:
            return _load(self.BATCH_WRITER)(dict(self.options), schema, overwrite)
        except OptionError as error:
            raise error.bare() from None
