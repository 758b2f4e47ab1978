"""A class-data-sharing (CDS) archive of Spark's classes for the test JVMs.

A Spark JVM spends most of a short life loading and verifying Spark's classes: a session that
ran one parquet round trip and a 3 s stream took 22-24 CPU-seconds, and 14 when its JVM mapped
an archive of the classes an earlier JVM had loaded (2026-11-26, same hour, three runs each).
The suite starts dozens of drivers (each process's session, the Connect server, every
subprocess driver), so one archive per environment pays for itself many times.

The archive is a dynamic one (JDK 13+): a JVM run with ``-XX:ArchiveClassesAtExit`` writes it
when it exits after a representative job (support/jvm_archive_job.py), and later JVMs map it
with ``-XX:SharedArchiveFile``. It lives beside the zip-free SPARK_HOME in the virtual
environment (support/spark_home.py), so it is built once per environment and Spark version:
about 40 s, the first time only. The JVM checks the class path and every jar's size and mtime
and, on any mismatch (the cluster and wheel tests run Spark's own layout), runs without it;
``-Xlog`` keeps that silent. Results do not change; only class loading gets cheaper.

Two limits shape the setup: a directory on the class path must be empty (Spark puts
SPARK_CONF_DIR there), so the run's SPARK_CONF_DIR is an empty folder and the JVM options go
through SPARK_SUBMIT_OPTS, which reaches drivers and Connect servers; the cluster's daemons and
executors keep a ``java-opts`` file of their own (tests/cluster/conftest.py).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ARCHIVE_NAME = "spark-classes.jsa"
JOB = Path(__file__).with_name("jvm_archive_job.py")
QUIET = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")  # a mismatched archive is skipped silently


def fingerprint(spark_home: Path, java_options: tuple[str, ...]) -> str:
    """What the archive depends on: the JVM binary, Spark's jars, the options it was built with."""
    java = shutil.which("java") or "java"
    parts = [os.path.realpath(java), *java_options]
    for path in [Path(os.path.realpath(java)), *sorted((spark_home / "jars").glob("*.jar"))]:
        stat = path.stat()
        parts.append(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def archive_options(
    folder: Path, spark_home: Path, conf: Path, java_options: tuple[str, ...]
) -> list[str]:
    """JVM options that map ``folder``'s archive, building it first if it is missing.

    The caller holds the folder's lock. An empty list (and a note on stderr) when the archive
    cannot be built: the tests then run without it.
    """
    archive = folder / ARCHIVE_NAME
    if any(c.isspace() or c in "\"'" for c in str(archive)):
        return []  # Spark's launcher splits SPARK_SUBMIT_OPTS on blanks
    if not archive.is_file() and not _build(archive, spark_home, conf, java_options):
        return []
    return [f"-XX:SharedArchiveFile={archive}", *QUIET]


def _build(archive: Path, spark_home: Path, conf: Path, java_options: tuple[str, ...]) -> bool:
    partial = archive.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    connect_markers = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE", "SPARK_LOCAL_REMOTE")
    env = {k: v for k, v in os.environ.items() if k not in connect_markers}
    env.pop("SPARK_SUBMIT_OPTS", None)
    env |= {
        "SPARK_HOME": str(spark_home),
        "SPARK_CONF_DIR": str(conf),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    }
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    options = " ".join([*java_options, f"-XX:ArchiveClassesAtExit={partial}", *QUIET])
    with tempfile.TemporaryDirectory(prefix="pysparksources-cds-") as work:
        # spark-submit runs the JVM as the parent of the job's Python process, so it returns
        # after the JVM has exited and written the archive.
        command = [str(spark_home / "bin" / "spark-submit"), "--master", "local[2]"]
        command += ["--conf", "spark.log.level=WARN", "--conf", "spark.ui.enabled=false"]
        command += ["--driver-java-options", options, str(JOB), work]
        result = subprocess.run(
            command, env=env, cwd=work, capture_output=True, text=True, timeout=600, check=False
        )
    if result.returncode != 0 or not partial.is_file():
        print(
            f"pysparksources tests: no class-data-sharing archive (exit {result.returncode}); "
            f"the JVMs load their classes as usual.\n{result.stderr[-2000:]}",
            file=sys.stderr,
        )
        partial.unlink(missing_ok=True)
        return False
    partial.replace(archive)
    return True
