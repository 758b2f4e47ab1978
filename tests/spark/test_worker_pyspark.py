"""Spark's Python workers in the test session import the installed PySpark, not pyspark.zip.

The zip-free SPARK_HOME (tests/support/spark_home.py) halves the CPU of every new Python worker;
if it silently stopped applying, the suite would only get slower, so this says so.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from support.spark_home import KEEP_ZIP_VARIABLE


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
