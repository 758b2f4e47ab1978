"""The data source every format shares: one short name, options checked at one moment.

The ``pyspark_*`` auto-registration shims import the data source classes, and one failing shim
import disables automatic registration for all of them, so a data source module may import only
PySpark, the standard library and this module. Subclasses name their reader and writer classes
as ``"module:Class"`` strings; each is imported on first use and built with the query's options
and schema, which is where the options are parsed. No module imports them, so
``tests/core/test_datasource_targets.py`` resolves every such string (and the registry's).

When the options are checked, for every source alike: at the first call Spark makes that says
what they are for (the measured table is in the error reference):

- ``load()`` without ``.schema(...)``: Spark creates the data source and calls ``schema()`` in
  the caller's thread. :meth:`SourceDataSource.schema` parses the read options there
  (``Use.READ``: a stream and a batch read look the same at that point), so a bad option fails
  ``load()`` (on Spark Connect: the first call that analyses the DataFrame).
- Otherwise (``load()`` with ``.schema(...)``, ``writeStream...start()``, ``save()``): Spark
  calls no Python before it asks for the reader or writer, and the options are parsed for that
  use just before it is built. Stream readers and writers are built when the query starts,
  batch readers and writers in the caller's thread.

A stream reader whose constructor raises would make PySpark 4.3's source runner end the error
with ``UnboundLocalError: cannot access local variable 'reader'`` (its ``finally:
reader.stop()`` runs with no reader). :meth:`SourceDataSource.streamReader` therefore returns a
:class:`FailedStreamReader` that raises the real error from the first call Spark makes, so the
query's error ends with our one-line sentence.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn, TypeVar

from pysparksources._core.compat import (
    DataSource,
    DataSourceStreamReader,
    InputPartition,
    SupportsTriggerAvailableNow,
)
from pysparksources._core.option_table import Use
from pysparksources._core.worker_gc import freeze_imports
from pysparksources.errors import PySparkSourcesError, UnsupportedError

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

__all__ = ["FailedStreamReader", "SourceDataSource", "planned_partition", "read_planned"]

P = TypeVar("P", bound=InputPartition)
R = TypeVar("R")


def _load(target: str) -> Any:
    module_name, _, name = target.partition(":")
    return getattr(importlib.import_module(module_name), name)


def _bare(error: BaseException) -> BaseException:
    return error.bare() if isinstance(error, PySparkSourcesError) else error


def planned_partition(partition: InputPartition, kind: type[P]) -> P | None:
    """``partition`` as the source planned it, or None for Spark's empty-plan placeholder.

    A batch read whose ``partitions()`` is empty still runs one task, handed
    ``InputPartition(None)`` (PySpark's ``plan_data_source_read``); it has nothing to read.
    """
    if isinstance(partition, kind):
        return partition
    if type(partition) is InputPartition and partition.value is None:
        return None
    raise TypeError(f"expected a {kind.__name__}, got {type(partition).__name__}")


def read_planned(
    partition: InputPartition, kind: type[P], read: Callable[[P], Iterator[R]]
) -> Iterator[R]:
    """A reader's ``read``: nothing for Spark's empty-plan placeholder, else ``read(partition)``.

    Python workers are reused across tasks, so the task first freezes the worker's imported
    objects out of the garbage collector's way (``worker_gc.freeze_imports``).
    """
    planned = planned_partition(partition, kind)
    if planned is None:
        return iter(())
    freeze_imports()
    return read(planned)


class FailedStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):  # type: ignore[misc]
    """Stands in for a stream reader that could not be built; every call raises its error."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def _fail(self) -> NoReturn:
        raise _bare(self.error) from None

    def initialOffset(self) -> dict[str, Any]:
        self._fail()

    # Two parameters, so Spark 4.2+'s feature check sees the admission-control signature;
    # both optional, as Spark 4.0 and 4.1 pass none.
    def latestOffset(self, start: Any = None, limit: Any = None) -> dict[str, Any]:
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


class SourceDataSource(DataSource):  # type: ignore[misc]
    """One short name for ``readStream``, ``read``, ``writeStream`` and ``write``.

    Spark creates the same object for all four, so which options apply is only known once
    ``schema()`` (reads only), a reader or a writer is asked for. Each subclass names, as
    ``"module:name"`` strings:

    ``PARSE``
        ``(options, use, schema) -> config``: the source's option parser. ``schema`` is the
        query's schema (the input's, for writers), None when Spark asks for a read's schema.
    ``READ_SCHEMA``
        ``(config) -> schema``: the schema of a read without ``.schema(...)``.
    ``STREAM_READER``, ``BATCH_READER``, ``STREAM_WRITER``, ``BATCH_WRITER``
        Built as ``Class(config, schema)`` (readers) or ``Class(config, schema, overwrite)``
        (writers); None where the source does not support that use (``pyrate`` has no writers).

    Only the data source's driver-side code imports the parser: readers and writers get the
    parsed, picklable config, which is all their executor-side code sees.
    """

    NAME: ClassVar[str]
    PARSE: ClassVar[str]
    READ_SCHEMA: ClassVar[str]
    STREAM_READER: ClassVar[str | None] = None
    BATCH_READER: ClassVar[str | None] = None
    STREAM_WRITER: ClassVar[str | None] = None
    BATCH_WRITER: ClassVar[str | None] = None

    @classmethod
    def name(cls) -> str:
        return cls.NAME

    def schema(self) -> Any:
        # Only reads without a user schema get here, at load(), in the caller's thread.
        try:
            return _load(self.READ_SCHEMA)(self._parse(Use.READ, None))
        except PySparkSourcesError as error:
            raise error.bare() from None

    def streamReader(self, schema: StructType) -> Any:
        try:
            return self._build(self.STREAM_READER, Use.STREAM_READ, schema)
        except Exception as error:  # raised at Spark's first call instead: see the module doc
            return FailedStreamReader(error)

    def reader(self, schema: StructType) -> Any:
        return self._build_bare(self.BATCH_READER, Use.BATCH_READ, schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> Any:
        return self._build_bare(self.STREAM_WRITER, Use.STREAM_WRITE, schema, overwrite)

    def writer(self, schema: StructType, overwrite: bool) -> Any:
        return self._build_bare(self.BATCH_WRITER, Use.BATCH_WRITE, schema, overwrite)

    def _parse(self, use: Use, schema: StructType | None) -> Any:
        return _load(self.PARSE)(dict(self.options), use, schema, **self._parse_context())

    def _parse_context(self) -> dict[str, Any]:
        """Keyword arguments for PARSE beyond the options (none unless a source adds some)."""
        return {}

    def _build(self, target: str | None, use: Use, schema: StructType, *args: Any) -> Any:
        if target is None:
            raise UnsupportedError(self.NAME, f"this format does not support {use.describe()}")
        config = self._parse(use, schema)
        return _load(target)(config, schema, *args)

    def _build_bare(self, target: str | None, use: Use, schema: StructType, *args: Any) -> Any:
        try:
            return self._build(target, use, schema, *args)
        except PySparkSourcesError as error:
            raise error.bare() from None
