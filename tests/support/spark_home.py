"""A SPARK_HOME for the test processes whose Python workers import the installed PySpark.

Spark puts ``$SPARK_HOME/python/lib/pyspark.zip`` first on every Python worker's path, and
Python never caches bytecode for modules it imports from a zip. So every new worker process (a
daemon per worker module, a streaming source runner per query) compiles PySpark's source again:
about 1 s of CPU each on the 2-core CI machine, roughly a third of the fast tier's CPU time. The
mirror built here links everything in the installed ``pyspark`` package except ``python/lib``,
so the workers import the same files from site-packages, compiled once into ``__pycache__``.

It is used only when every module the zips hold is byte-identical to the installed one. The
cluster and wheel tests keep Spark's own layout (``users_worker_env``): a packed venv without
PySpark relies on the zip; the cluster's copy of the zips holds bytecode
(support/compiled_zips.py). ``PYSPARKSOURCES_TEST_PYSPARK_ZIP=1`` keeps Spark's layout, as
installed, everywhere.

The JVMs of a run compile with C1 only and collect with the serial collector: the test JVMs
live for minutes and run small jobs, and that took 10 s of JVM CPU for a session that ran one
stream and a parquet round trip, where the default JIT and collector took 20-24 s. They also map
a class-data-sharing archive of Spark's classes (support/jvm_archive.py). Both reach drivers and
Connect servers through SPARK_SUBMIT_OPTS, because the archive needs SPARK_CONF_DIR (which Spark
puts on the class path) to be an empty folder; the standalone cluster's daemons and executors
get the lean options from a ``java-opts`` file instead (``lean_jvm_conf``). Results do not
change; ``./dev bench`` never runs with any of it.

``run_layout`` builds all of it once per virtual environment and Spark version, in
``<venv>/pysparksources-tests`` (a temporary folder outside a virtual environment).
"""

from __future__ import annotations

import atexit
import fcntl
import os
import shutil
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from support.jvm_archive import archive_options, fingerprint, start_build

KEEP_ZIP_VARIABLE = "PYSPARKSOURCES_TEST_PYSPARK_ZIP"
LEAN_CONF_NAME = "lean-jvm-conf"
EMPTY_CONF_NAME = "empty-conf"
LEAN_CONF_VARIABLE = "PYSPARKSOURCES_TEST_LEAN_CONF"  # the cluster daemons' SPARK_CONF_DIR
LEAN_JAVA_OPTS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
LAYOUT_VARIABLE = "PYSPARKSOURCES_TEST_LAYOUT"  # the folder run_layout built


def start_archive_build() -> None:
    """Start building the run's class archive (support/jvm_archive.py) if it is missing."""
    folder = os.environ.get(LAYOUT_VARIABLE)
    if folder is not None:
        conf = Path(os.environ["SPARK_CONF_DIR"])
        home = Path(os.environ.get("SPARK_HOME") or _installed_spark_home())
        start_build(Path(folder), home, conf, LEAN_JAVA_OPTS)


def _installed_spark_home() -> Path:
    from benchmarks.cluster import spark_home

    return spark_home()


def run_layout(installed: Path) -> dict[str, str]:
    """The environment of this run's Spark processes (SPARK_HOME, SPARK_CONF_DIR, options)."""
    keep_zip = os.environ.get(KEEP_ZIP_VARIABLE) == "1"
    key = fingerprint(installed, (*LEAN_JAVA_OPTS, f"zip={keep_zip}"))
    base = _layouts_folder()
    folder = base / key
    folder.mkdir(parents=True, exist_ok=True)
    with locked(folder / ".lock"):
        mirror: Path | None = folder / "spark-home"
        if keep_zip:
            mirror = None
        elif not mirror.is_dir():
            mirror = zip_free_spark_home(installed, folder)
        conf = folder / EMPTY_CONF_NAME
        conf.mkdir(exist_ok=True)
        lean = lean_jvm_conf(folder)
    for old in base.iterdir():  # layouts of an earlier Spark or JDK
        if old.is_dir() and old.name != key:
            shutil.rmtree(old, ignore_errors=True)
    env = {
        "SPARK_CONF_DIR": str(conf),
        "SPARK_SUBMIT_OPTS": " ".join([*LEAN_JAVA_OPTS, *archive_options(folder)]),
        LEAN_CONF_VARIABLE: str(lean),
        LAYOUT_VARIABLE: str(folder),
    }
    return env | ({"SPARK_HOME": str(mirror)} if mirror is not None else {})


def _layouts_folder() -> Path:
    if sys.prefix != sys.base_prefix and os.access(sys.prefix, os.W_OK):
        return Path(sys.prefix) / "pysparksources-tests"
    root = Path(tempfile.mkdtemp(prefix="pysparksources-tests-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Serialise the processes of a run (and concurrent runs) that build one layout."""
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def runs_lean(args: list[str]) -> bool:
    """Whether a JVM's command line carries LEAN_JAVA_OPTS."""
    return all(option in args for option in LEAN_JAVA_OPTS)


def lean_jvm_conf(root: Path) -> Path:
    """A Spark conf folder under ``root`` holding only ``java-opts`` with LEAN_JAVA_OPTS."""
    conf = root / LEAN_CONF_NAME
    conf.mkdir(exist_ok=True)
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
    link_all_but_python_lib(installed, mirror)
    return mirror


def link_all_but_python_lib(installed: Path, mirror: Path) -> None:
    """Make ``mirror`` a SPARK_HOME of links to ``installed``, without ``python/lib``."""
    (mirror / "python").mkdir(parents=True)
    for entry in installed.iterdir():
        if entry.name != "python":
            (mirror / entry.name).symlink_to(entry)
    for entry in (installed / "python").iterdir():
        if entry.name != "lib":
            (mirror / "python" / entry.name).symlink_to(entry)


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
