"""Streaming sources and sinks for Apache Spark 4, written as PySpark Python Data Sources.

After ``pip install pysparksources`` every source is registered automatically on the driver
(Spark imports the top-level ``pyspark_*`` shim modules). :func:`register` does the same
explicitly, for sessions where automatic lookup has already run or was skipped.

Importing this package starts no JVM and imports no optional dependency. It does log a warning
(once) when Spark would start its Python workers with another interpreter than this one.
"""

from __future__ import annotations

from typing import Any

from pysparksources._core import worker_python as _worker_python
from pysparksources._core.registry import SOURCES, load_source
from pysparksources.errors import OptionError, PySparkSourcesError, WorkerPythonError

__all__ = [
    "OptionError",
    "PySparkSourcesError",
    "WorkerPythonError",
    "__version__",
    "register",
    "source_names",
]
__version__ = "0.1.0"

_worker_python.warn_at_import()


def source_names() -> list[str]:
    """Short names of every source this package provides."""
    return sorted(SOURCES)


def register(spark: Any, *names: str, check_workers: bool = True) -> list[str]:
    """Register sources on ``spark`` (classic or Spark Connect) and return their names.

    Parameters
    ----------
    spark:
        A ``pyspark.sql.SparkSession``; Spark Connect sessions work the same way.
    names:
        Short names (``"pyrate"``); all sources when empty.
    check_workers:
        First make sure the Python that Spark starts for this session's workers imports
        pysparksources (one probe resolved by Spark, about a second), and raise
        :class:`WorkerPythonError` naming the fix rather than register sources that cannot
        run. Turn it off only when the workers get the package in a way the probe cannot see.
    """
    chosen = list(names) or source_names()
    sources = [load_source(name) for name in chosen]
    if check_workers:
        _worker_python.require_workers_import(spark)
    for source in sources:
        spark.dataSource.register(source)
    return chosen
