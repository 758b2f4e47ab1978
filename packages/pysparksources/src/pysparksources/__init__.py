"""Streaming sources and sinks for Apache Spark 4, written as PySpark Python Data Sources.

After ``pip install pysparksources`` every source is registered automatically on the driver
(Spark imports the top-level ``pyspark_*`` shim modules). :func:`register` does the same
explicitly, for sessions where automatic lookup has already run or was skipped.

Importing this package starts no JVM, imports no optional dependency and prints nothing.
"""

from __future__ import annotations

from typing import Any

from pysparksources._core import worker_python as _worker_python
from pysparksources._core.registry import SOURCES, load_source
from pysparksources._version import __version__
from pysparksources.errors import OptionError, PySparkSourcesError, WorkerPythonError

__all__ = [
    "OptionError",
    "PySparkSourcesError",
    "WorkerPythonError",
    "__version__",
    "register",
    "source_names",
]


def source_names() -> list[str]:
    """Short names of every source this package provides."""
    return sorted(SOURCES)


def register(spark: Any, *names: str, check_workers: bool = True) -> list[str]:
    """Register sources on ``spark`` (classic or Spark Connect) and return their names.

    On a classic session, a name the session already resolves to this very class (registered
    automatically, or by an earlier call) is left as it is: registering it again would only
    make Spark log a WARN that it replaced a registered data source. All the names are
    returned either way.

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
        _worker_python.register_source(spark, source)
    return chosen
