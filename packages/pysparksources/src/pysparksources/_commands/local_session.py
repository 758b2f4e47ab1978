"""A classic local Spark session for the command line (``demo``, ``doctor``) that just works.

Spark starts Python workers with ``PYSPARK_PYTHON`` (``python3`` from PATH by default); from an
unactivated virtual environment that is the wrong interpreter and workers fail to connect back,
so this interpreter is used unless the user chose one.
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any

from pysparksources.errors import PySparkSourcesError

__all__ = ["ensure_worker_python", "local_session"]


def ensure_worker_python() -> str:
    """Point Spark's Python workers at this interpreter unless PYSPARK_PYTHON is set."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    return os.environ["PYSPARK_PYTHON"]


def local_session(
    app_name: str, master: str = "local[2]", conf: dict[str, str] | None = None
) -> Any:
    """Start (or reuse) a classic local session with quiet logs and Spark's default settings."""
    if shutil.which("java") is None and "JAVA_HOME" not in os.environ:
        raise PySparkSourcesError(
            "pysparksources", "Spark needs Java 17 or newer: install it or set JAVA_HOME"
        )
    ensure_worker_python()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
    )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
