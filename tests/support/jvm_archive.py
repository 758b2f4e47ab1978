"""A class-data-sharing (CDS) archive of Spark's classes for the test JVMs.

A Spark JVM spends most of a short life loading and verifying Spark's classes: a session that
ran one parquet round trip and a 3 s stream took 22-24 CPU-seconds, and 14 when its JVM mapped
an archive of the classes an earlier JVM had loaded (2026-11-26, same hour, three runs each).
The suite starts dozens of drivers (each process's session, the Connect server, every
subprocess driver), so one archive per environment pays for itself many times.

The archive is a dynamic one (JDK 13+): a JVM run with ``-XX:ArchiveClassesAtExit`` writes it
when it exits after a representative job (support/jvm_archive_job.py), and later JVMs map it
with ``-XX:SharedArchiveFile``. It lives beside the zip-free SPARK_HOME in the virtual
environment (support/spark_home.py), so it is built once per environment and Spark version,
about a minute of one core. The build runs in the background, started by the first test
process of a run that selected a test with a Spark marker, and leaves the run going: JVMs
started before it is done run without an archive, later ones map it. A JVM whose class path or
jars do not match the archive (the wheel tests' fresh environment) also runs without one;
``-Xlog`` keeps both silent. Results do not change; only class loading gets cheaper.

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
import time
from pathlib import Path

ARCHIVE_NAME = "spark-classes.jsa"
JOB = Path(__file__).with_name("jvm_archive_job.py")
QUIET = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")  # a mismatched archive is skipped silently


def fingerprint(spark_home: Path, java_options: tuple[str, ...]) -> str:
    """What the archive depends on: the JVM binary, Spark's jars, the options it was built with."""
    java = Path(os.path.realpath(shutil.which("java") or "java"))
    parts = [str(java), *java_options]
    for path in [java, *sorted((spark_home / "jars").glob("*.jar"))]:
        stat = path.stat()
        parts.append(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def archive_options(folder: Path) -> list[str]:
    """JVM options that map ``folder``'s archive once it exists (none if its path has blanks)."""
    archive = folder / ARCHIVE_NAME
    if any(c.isspace() or c in "\"'" for c in str(archive)):
        return []  # Spark's launcher splits SPARK_SUBMIT_OPTS on blanks
    return [f"-XX:SharedArchiveFile={archive}", *QUIET]


def start_build(folder: Path, spark_home: Path, conf: Path, java_options: tuple[str, ...]) -> None:
    """Build ``folder``'s archive in a detached process unless it exists or is being built."""
    if (folder / ARCHIVE_NAME).is_file() or not archive_options(folder):
        return
    guard = folder / "archive.building"
    try:
        descriptor = os.open(guard, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        if _builder_alive(guard):
            return
        guard.unlink(missing_ok=True)  # an earlier build died: start again
        return start_build(folder, spark_home, conf, java_options)
    command = [sys.executable, __file__, str(folder), str(spark_home), str(conf), *java_options]
    with (folder / "archive-build.log").open("w") as log:
        builder = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    os.write(descriptor, str(builder.pid).encode())
    os.close(descriptor)


def _builder_alive(guard: Path) -> bool:
    try:
        pid = int(guard.read_text() or "0")
    except (OSError, ValueError):
        return True  # being written by the process that just created it
    if pid == 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _build(archive: Path, spark_home: Path, conf: Path, java_options: tuple[str, ...]) -> bool:
    partial = archive.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    from benchmarks.cluster import worker_env

    env = worker_env() | {"SPARK_HOME": str(spark_home), "SPARK_CONF_DIR": str(conf)}
    env.pop("SPARK_SUBMIT_OPTS", None)
    options = " ".join([*java_options, f"-XX:ArchiveClassesAtExit={partial}", *QUIET])
    started = time.monotonic()
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
        print(f"no archive (exit {result.returncode}):\n{result.stderr[-4000:]}")
        partial.unlink(missing_ok=True)
        return False
    partial.replace(archive)
    print(f"built {archive} in {time.monotonic() - started:.0f} s")
    return True


if __name__ == "__main__":  # the detached build of start_build
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: benchmarks
    target, home, conf_dir, *options = sys.argv[1:]
    try:
        _build(Path(target) / ARCHIVE_NAME, Path(home), Path(conf_dir), tuple(options))
    finally:
        (Path(target) / "archive.building").unlink(missing_ok=True)
