"""The test setup's two CPU savings still apply: Spark's Python workers import the installed
PySpark, not pyspark.zip, and the session's JVM runs the lean options of support/spark_home.py.

The zip-free SPARK_HOME (tests/support/spark_home.py) halves the CPU of every new Python worker,
C1 with the serial collector roughly halves a short-lived JVM's; if either silently stopped
applying, the suite would only get slower, so these say so.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from support.processes import command_line, java_descendants
from support.spark_home import KEEP_ZIP_VARIABLE, LEAN_CONF_NAME, LEAN_JAVA_OPTS


@pytest.mark.skipif(os.environ.get(KEEP_ZIP_VARIABLE) == "1", reason="Spark's layout was asked for")
def test_python_workers_import_the_installed_pyspark(spark: Any) -> None:
    import pyspark

    # A lambda travels by value; a module-level function would need this module on the worker.
    seen = spark.sparkContext.parallelize([0], 1).map(lambda _: __import__("pyspark").__file__)
    seen = seen.collect()
    assert seen == [pyspark.__file__], (
        f"workers import {seen[0]}: tests/conftest.py did not build the zip-free SPARK_HOME "
        "(pyspark.zip's modules differ from the installed package?)"
    )


@pytest.mark.skipif(
    Path(os.environ.get("SPARK_CONF_DIR", "")).name != LEAN_CONF_NAME,
    reason="your own SPARK_CONF_DIR is used as it is",
)
def test_the_session_jvm_reads_the_lean_java_opts(spark: Any) -> None:
    jvms = [command_line(pid) for pid in java_descendants()]
    assert jvms, "no JVM below this pytest process although its session is running"
    assert any(all(option in jvm for option in LEAN_JAVA_OPTS) for jvm in jvms), (
        f"no JVM runs with {LEAN_JAVA_OPTS}: Spark's launcher did not read "
        "$SPARK_CONF_DIR/java-opts"
    )
