"""Streaming sources and sinks for Apache Spark 4, written as PySpark Python Data Sources.

After ``pip install pysparksources`` every source is registered automatically on the driver
(Spark imports the top-level ``pyspark_*`` shim modules). :func:`register` does the same
explicitly, for sessions where automatic lookup has already run or was skipped.

Importing this package starts no JVM and imports no optional dependency.
"""

from __future__ import annotations

from typing import Any

from pysparksources._options import OptionError
from pysparksources._registry import SOURCES, load_source

__all__ = ["OptionError", "__version__", "register", "source_names"]
__version__ = "0.1.0"


def source_names() -> list[str]:
    """Short names of every source this package provides."""
    return sorted(SOURCES)


def register(spark: Any, *names: str) -> list[str]:
    """Register sources on ``spark`` (classic or Spark Connect) and return their names.

    Parameters
    ----------
    spark:
        A ``pyspark.sql.SparkSession``; Spark Connect sessions work the same way.
    names:
        Short names (``"pyrate"``); all sources when empty.
    """
    chosen = list(names) or source_names()
    for name in chosen:
        spark.dataSource.register(load_source(name))
    return chosen
