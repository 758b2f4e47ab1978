"""What the installed PySpark's Python data source API offers: the one place that knows.

pysparksources runs on every Spark 4 line. The Python data source API exists since 4.0; later
lines added to it what the sources use where it is there:

- 4.1: ``DataSourceStreamArrowWriter`` (stream writers handed Arrow batches by that name);
- 4.2: engine admission control for Python stream readers (``latestOffset(start, limit)``,
  ``getDefaultReadLimit``, ``reportLatestOffset``, the ``ReadLimit`` types) and
  ``Trigger.AvailableNow`` support (``SupportsTriggerAvailableNow``), in
  ``pyspark.sql.streaming.datasource``.

Where the installed line lacks one, this module gives a stand-in under the same name and with
the same fields, so each source is written once, against the newest API:

- the read limits are plain dataclasses that the sources build and read themselves (the
  engine never sees them: on 4.0 and 4.1 it calls ``latestOffset()`` without one, and
  :class:`pysparksources._core.engine_calls.EngineCalls` supplies the reader's own);
- ``SupportsTriggerAvailableNow`` is an empty mixin (nothing calls it);
- ``DataSourceStreamArrowWriter`` is, on 4.0, a stream writer that is a
  ``DataSourceArrowWriter``: 4.0's write worker hands any ``DataSourceArrowWriter`` Arrow
  batches, streaming or not, and its commit runner calls ``commit(messages, batchId)``.

On Spark 3.x, or a PySpark without the data source API, importing this module raises
:class:`pysparksources.errors.UnsupportedSparkError`, one line naming both versions: every
user's path (the auto-registration shims, ``register()``, ``doctor``) goes through here first.
No other module compares versions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import import_module
from inspect import signature
from typing import Any

from pysparksources.errors import UnsupportedSparkError

__all__ = [
    "ENGINE_ADMISSION_CONTROL",
    "MINIMUM_SPARK",
    "SPARK_VERSION",
    "DataSource",
    "DataSourceStreamArrowWriter",
    "DataSourceStreamReader",
    "InputPartition",
    "ReadAllAvailable",
    "ReadLimit",
    "ReadMaxBytes",
    "ReadMaxFiles",
    "ReadMaxRows",
    "ReadMinRows",
    "SupportsTriggerAvailableNow",
    "engine_features",
    "spark_refusal",
    "spark_schema_of",
    "spark_type_of",
    "to_arrow_schema_utc",
]

MINIMUM_SPARK = (4, 0)
_MAJOR_MINOR = re.compile(r"^(\d+)\.(\d+)")


def spark_refusal(version: str, has_data_source_api: bool) -> str | None:
    """Why this package cannot run on PySpark ``version`` (None when it can): one sentence."""
    match = _MAJOR_MINOR.match(version)
    line = (int(match.group(1)), int(match.group(2))) if match else (0, 0)
    if line >= MINIMUM_SPARK and has_data_source_api:
        return None
    missing = "" if line < MINIMUM_SPARK else ", which lacks the Python data source API"
    return (
        f"this Python has PySpark {version}{missing}; pysparksources needs PySpark 4.0 or "
        "newer (any 4.x line): pip install 'pyspark[connect]>=4.0,<5', or run on a Spark 4 "
        "cluster"
    )


def _installed() -> tuple[str, bool]:
    import pyspark  # ImportError when PySpark is missing: the 'spark' extra installs it

    try:
        import_module("pyspark.sql.datasource")
    except ImportError:
        return str(pyspark.__version__), False
    return str(pyspark.__version__), True


SPARK_VERSION, _HAS_API = _installed()
_REFUSAL = spark_refusal(SPARK_VERSION, _HAS_API)
if _REFUSAL is not None:
    raise UnsupportedSparkError("pysparksources", _REFUSAL)

from pyspark.sql import datasource as _datasource  # noqa: E402  (after the version check)

# What every line has, re-exported so that a module importing this one first (the data source
# base, which the shims import) meets the version check before any missing PySpark module.
DataSource = _datasource.DataSource
DataSourceStreamReader = _datasource.DataSourceStreamReader
InputPartition = _datasource.InputPartition

DataSourceStreamArrowWriter: Any
if hasattr(_datasource, "DataSourceStreamArrowWriter"):
    DataSourceStreamArrowWriter = _datasource.DataSourceStreamArrowWriter
else:

    class _StreamArrowWriter(_datasource.DataSourceArrowWriter):  # type: ignore[misc,name-defined]
        """Spark 4.0's stand-in: its write worker feeds any DataSourceArrowWriter Arrow
        batches, and its commit runner calls the sink's ``commit(messages, batchId)``."""

    DataSourceStreamArrowWriter = _StreamArrowWriter

try:
    from pyspark.sql.streaming.datasource import (
        ReadAllAvailable,
        ReadLimit,
        ReadMaxBytes,
        ReadMaxFiles,
        ReadMaxRows,
        ReadMinRows,
        SupportsTriggerAvailableNow,
    )

    ENGINE_ADMISSION_CONTROL = True
except ImportError:  # Spark 4.0 and 4.1
    ENGINE_ADMISSION_CONTROL = False

    class ReadLimit:  # type: ignore[no-redef]
        """Stand-in for Spark 4.2's base of the read limits."""

    @dataclass(frozen=True)
    class ReadAllAvailable(ReadLimit):  # type: ignore[no-redef]
        pass

    @dataclass(frozen=True)
    class ReadMinRows(ReadLimit):  # type: ignore[no-redef]
        min_rows: int

    @dataclass(frozen=True)
    class ReadMaxRows(ReadLimit):  # type: ignore[no-redef]
        max_rows: int

    @dataclass(frozen=True)
    class ReadMaxFiles(ReadLimit):  # type: ignore[no-redef]
        max_files: int

    @dataclass(frozen=True)
    class ReadMaxBytes(ReadLimit):  # type: ignore[no-redef]
        max_bytes: int

    class SupportsTriggerAvailableNow:  # type: ignore[no-redef]
        """Stand-in: Spark 4.0 and 4.1 never call prepareForTriggerAvailableNow on Python
        readers; under Trigger.AvailableNow they run one batch to the offset of a single
        ``latestOffset()`` call."""

        def prepareForTriggerAvailableNow(self) -> None:
            """Never called on these lines."""


def to_arrow_schema_utc(schema: Any) -> Any:
    """Spark's Arrow schema for ``schema``, timestamps in UTC: the schema of the batches a
    reader yields and a writer gets. Spark 4.2 renamed the switch (``timestamp_utc=True`` on
    4.0 and 4.1, ``timezone="UTC"`` since)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    if "timezone" in signature(to_arrow_schema).parameters:
        return to_arrow_schema(schema, timezone="UTC")
    return to_arrow_schema(schema, timestamp_utc=True)  # type: ignore[call-arg]


def spark_schema_of(arrow_schema: Any) -> Any:
    """The Spark schema of an Arrow schema, a timestamp without zone as TIMESTAMP_NTZ on every
    line (the default changed in Spark 4.2)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(arrow_schema, prefer_timestamp_ntz=True)


def spark_type_of(arrow_type: Any) -> Any:
    """:func:`spark_schema_of` for one Arrow type."""
    from pyspark.sql.pandas.types import from_arrow_type

    return from_arrow_type(arrow_type, prefer_timestamp_ntz=True)


def engine_features() -> dict[str, str]:
    """What Spark's engine does for the sources on this line, and what they do themselves
    (``pysparksources doctor`` prints it; docs/compatibility.md has the whole table)."""
    if ENGINE_ADMISSION_CONTROL:
        admission = "native (the engine passes each batch's start and read limit)"
        available_now = "native (admission-sized batches up to the data there at the start)"
        lag = "reported (each progress carries the sources' latest offsets)"
    else:
        admission = "by the sources (each caps its own end offset; Spark 4.2+ does it natively)"
        available_now = (
            "one batch (Spark runs a single batch to the end offset of one latestOffset call, "
            "capped by the admission options)"
        )
        lag = "not reported (Spark asks Python sources for their latest offset from 4.2 on)"
    return {
        "admission control": admission,
        "Trigger.AvailableNow": available_now,
        "latest offset in progress (LagListener)": lag,
        "preferred locations": "none (Spark has none for Python input partitions on any line)",
    }
