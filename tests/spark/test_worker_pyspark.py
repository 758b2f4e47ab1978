"""The test setup's two CPU savings still apply: Spark's Python workers import the installed
PySpark, not pyspark.zip, and the session's JVM runs the lean options of support/spark_home.py
and maps the class archive of support/jvm_archive.py.

The zip-free SPARK_HOME (tests/support/spark_home.py) halves the CPU of every new Python worker,
C1 with the serial collector roughly halves a short-lived JVM's; if either silently stopped
applying, the suite would only get slower, so these say so.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.processes import command_line, java_descendants
from support.spark_home import EMPTY_CONF_NAME, KEEP_ZIP_VARIABLE, LEAN_JAVA_OPTS


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
    Path(os.environ.get("SPARK_CONF_DIR", "")).name != EMPTY_CONF_NAME,
    reason="your own SPARK_CONF_DIR is used as it is",
)
def test_the_session_jvm_is_lean_and_maps_the_class_archive(spark: Any) -> None:
    jvms = {pid: " ".join(command_line(pid)) for pid in java_descendants()}
    assert jvms, "no JVM below this pytest process although its session is running"
    lean = [pid for pid, jvm in jvms.items() if all(option in jvm for option in LEAN_JAVA_OPTS)]
    assert lean, f"no JVM runs with {LEAN_JAVA_OPTS}: SPARK_SUBMIT_OPTS did not reach it"
    archive = re.search(r"-XX:SharedArchiveFile=(\S+)", jvms[lean[0]])
    assert archive, "the session's JVM was not given the class archive (support/jvm_archive.py)"
    # The JVM maps the JDK's own archive and ours on top; on a class path or jar mismatch it
    # would silently map only the JDK's, a few MB.
    info = subprocess.run(["jcmd", str(lean[0]), "VM.info"], capture_output=True, text=True)
    mapped = re.search(r"CDS archive\(s\) mapped at: .*?size (\d+)", info.stdout)
    assert mapped, info.stdout[-2000:] + info.stderr
    assert int(mapped.group(1)) > Path(archive.group(1)).stat().st_size, mapped.group(0)
