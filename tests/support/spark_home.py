"""A SPARK_HOME for the test processes whose Python workers import the installed PySpark.

Spark puts ``$SPARK_HOME/python/lib/pyspark.zip`` first on every Python worker's path, and
Python never caches bytecode for modules it imports from a zip. So every new worker process (a
daemon per worker module, a streaming source runner per query) compiles PySpark's source again:
about 1 s of CPU each on the 2-core CI machine, roughly a third of the fast tier's CPU time. The
mirror built here links everything in the installed ``pyspark`` package except ``python/lib``,
so the workers import the same files from site-packages, compiled once into ``__pycache__``.

It is used only when every module the zips hold is byte-identical to the installed one. The
cluster and wheel tests keep Spark's own layout (``users_worker_env``): a packed venv without
PySpark relies on the zip. ``PYSPARKSOURCES_TEST_PYSPARK_ZIP=1`` keeps Spark's layout
everywhere.

``lean_jvm_conf`` is the run's SPARK_CONF_DIR: its ``java-opts``, which Spark's launcher adds to
every JVM it builds (drivers, Connect servers, the cluster's master, workers and executors;
SPARK_SUBMIT_OPTS reaches drivers only), has them compile with C1 only and collect with the
serial collector. The test JVMs live for minutes and run small jobs: that took 10 s of JVM CPU
for a session that ran one stream and a parquet round trip, where the default JIT and collector
took 20-24 s, leaving the cores to Spark's Python workers (and their 10 s connect-back
deadline) when several pytest processes share 2 cores. Results do not change; ``pysparksources
bench`` never runs with it.
"""

from __future__ import annotations

import os
import zipfile
import zlib
from pathlib import Path

KEEP_ZIP_VARIABLE = "PYSPARKSOURCES_TEST_PYSPARK_ZIP"
LEAN_CONF_NAME = "lean-jvm-conf"
LEAN_JAVA_OPTS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")


def lean_jvm_conf(root: Path) -> Path:
    """A Spark conf folder under ``root`` holding only ``java-opts`` with LEAN_JAVA_OPTS."""
    conf = root / LEAN_CONF_NAME
    conf.mkdir()
    (conf / "java-opts").write_text(" ".join(LEAN_JAVA_OPTS) + "\n")
    return conf


def zip_free_spark_home(installed: Path, root: Path) -> Path | None:
    """Build the mirror under ``root``; None when Spark's own layout must stay."""
    archives = sorted((installed / "python" / "lib").glob("*.zip"))
    if os.environ.get(KEEP_ZIP_VARIABLE) == "1" or not archives:
        return None
    if not all(_modules_match(archive, installed.parent) for archive in archives):
        return None
    mirror = root / "spark-home"
    (mirror / "python").mkdir(parents=True)
    for entry in installed.iterdir():
        if entry.name != "python":
            (mirror / entry.name).symlink_to(entry)
    for entry in (installed / "python").iterdir():
        if entry.name != "lib":
            (mirror / "python" / entry.name).symlink_to(entry)
    return mirror


def _modules_match(archive: Path, site_packages: Path) -> bool:
    """Whether each module a worker could import from ``archive`` is installed, byte for byte.

    PySpark's zip also carries its own test suites and benchmarks, which the wheel leaves out.
    """
    with zipfile.ZipFile(archive) as zipped:
        for info in zipped.infolist():
            parts = info.filename.split("/")
            if info.is_dir() or not info.filename.endswith(".py"):
                continue
            if "tests" in parts or "benchmark" in parts:
                continue
            installed = site_packages / info.filename
            if not installed.is_file() or zlib.crc32(installed.read_bytes()) != info.CRC:
                return False
    return True
