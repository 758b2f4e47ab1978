"""The test setup's two CPU savings still apply: Spark's Python workers import the installed
PySpark, not pyspark.zip, and the session's JVM runs the lean options of support/spark_home.py
and is given the class archive of support/jvm_archive.py, which maps on its class path.

The zip-free SPARK_HOME (tests/support/spark_home.py) halves the CPU of every new Python worker,
C1 with the serial collector roughly halves a short-lived JVM's; if either silently stopped
applying, the suite would only get slower, so these say so.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from support.processes import command_line, java_descendants
from support.spark_home import EMPTY_CONF_NAME, KEEP_ZIP_VARIABLE, LEAN_JAVA_OPTS, runs_lean


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
def test_the_session_jvm_is_lean_and_its_class_path_maps_the_class_archive(spark: Any) -> None:
    jvms = {pid: command_line(pid) for pid in java_descendants()}
    assert jvms, "no JVM below this pytest process although its session is running"
    # Not the JVM that builds the archive, which this process may have started.
    sessions = [args for args in jvms.values() if "pyspark-shell" in args]
    lean = [args for args in sessions if runs_lean(args)]
    assert lean, f"no JVM runs with {LEAN_JAVA_OPTS}: SPARK_SUBMIT_OPTS did not reach it"
    given = [arg for arg in lean[0] if arg.startswith("-XX:SharedArchiveFile=")]
    assert given, "the session's JVM was not given the class archive (support/jvm_archive.py)"
    archive = Path(given[0].split("=", 1)[1])
    # The archive is built in the background by the run's first process; the session's JVM
    # may have started before it was there. So check that it maps on the session's class path
    # (-Xshare:on makes a mismatch fatal) once it exists.
    deadline = time.monotonic() + 300
    while not archive.is_file() and time.monotonic() < deadline:
        time.sleep(2)
    assert archive.is_file(), f"no archive after 5 minutes: see {archive.parent}/archive-build.log"
    class_path = lean[0][lean[0].index("-cp") + 1]
    probe = ["java", "-Xshare:on", f"-XX:SharedArchiveFile={archive}", "-cp", class_path]
    result = subprocess.run([*probe, "-version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "sharing" in result.stderr, result.stderr
