"""``pysparksources doctor``: is this machine (and cluster) ready to run the sources?

Each check prints ``ok`` or ``FAIL`` with the fix. Checks that need a working earlier step are
skipped rather than failing with a confusing secondary error.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pysparksources._core import worker_python
from pysparksources._core.install_hint import pip_install

__all__ = ["run_doctor"]

_IMPORT_SHIMS = (
    "import pkgutil, pysparksources; "
    "names = sorted(__import__(m.name).DefaultSource.name() for m in pkgutil.iter_modules() "
    "if m.name.startswith('pyspark_')); print(pysparksources.__version__, ' '.join(names))"
)


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def _java() -> Check:
    java = shutil.which("java", path=os.path.join(os.environ.get("JAVA_HOME", ""), "bin"))
    java = java or shutil.which("java")
    fix = (
        "install a Java 17+ runtime (e.g. apt-get install openjdk-17-jre-headless) or set JAVA_HOME"
    )
    if java is None:
        return Check("Java", False, "no java on PATH or in JAVA_HOME", fix)
    out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60).stderr
    match = re.search(r'version "(\d+)', out)
    major = int(match.group(1)) if match else 0
    return Check("Java", major >= 17, f"{java}: {out.splitlines()[0] if out else '?'}", fix)


def _spark_line() -> Check:
    """The Spark line found, and what the engine does for the sources on it."""
    from pysparksources.errors import UnsupportedSparkError

    try:
        from pysparksources._core import compat
    except UnsupportedSparkError as exc:
        return Check("Spark", False, exc.detail, "pip install 'pyspark[connect]>=4.0,<5'")
    except ImportError as exc:
        return Check("Spark", False, f"cannot import PySpark ({exc})", pip_install(extra="spark"))
    features = "".join(
        f"\n         {what}: {how}" for what, how in compat.engine_features().items()
    )
    return Check("Spark", True, f"PySpark {compat.SPARK_VERSION}{features}")


def _worker_python() -> Check:
    chosen = os.environ.get("PYSPARK_PYTHON")
    python = chosen or shutil.which("python3") or "python3"
    how = "PYSPARK_PYTHON" if chosen else "python3 from PATH (PYSPARK_PYTHON is unset)"
    fix = f"{worker_python.fix()}   (or install pysparksources into {python}: {pip_install()})"
    try:
        result = subprocess.run(
            [python, "-c", _IMPORT_SHIMS], capture_output=True, text=True, timeout=120
        )
    except OSError as exc:
        return Check("worker Python", False, f"{how} = {python}: cannot run it ({exc})", fix)
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["?"])[-1]
        return Check("worker Python", False, f"{how} = {python}: {last}", fix)
    version, _, names = result.stdout.strip().partition(" ")
    detail = f"{how} = {python}: pysparksources {version}, auto-registers: {names or 'nothing'}"
    if not names:
        fix = (
            "the pyspark_* modules are not on that Python's sys.path: reinstall the package "
            f"({pip_install()}; or pip install -e ./packages/pysparksources); an editable "
            "install with --config-settings editable_mode=strict hides them"
        )
    return Check("worker Python", bool(names), detail, fix)


def _executors_import(spark: Any) -> Check:
    from pyspark.sql.functions import udf

    def package_version() -> str:
        import pysparksources

        return str(pysparksources.__version__)

    try:
        rows = spark.range(0, 4, 1, 4).select(udf(package_version, "string")().alias("v"))
        versions = {r.v for r in rows.collect()}
    except Exception as exc:
        first = str(exc).strip().splitlines()[0][:300]
        return Check(
            "executors import the package",
            False,
            first,
            "install pysparksources on every node, or ship it: --py-files / "
            "spark.submit.pyFiles with the wheel, or --archives with a packed venv",
        )
    return Check("executors import the package", True, f"versions seen: {sorted(versions)}")


def _sources_register(spark: Any) -> Check:
    try:
        count = spark.read.format("pyrate").option("totalRows", 3).load().count()
    except Exception as exc:
        return Check(
            "sources auto-register in the session",
            False,
            str(exc).strip().splitlines()[0][:300],
            "install the package in the driver's (or Connect server's) Python, or call "
            "pysparksources.register(spark)",
        )
    return Check("sources auto-register in the session", count == 3, "pyrate read 3 rows")


def _session_checks(builder: Callable[[], Any], label: str) -> list[Check]:
    try:
        spark = builder()
        spark.range(1).count()
    except Exception as exc:
        detail = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else repr(exc)
        return [Check(label, False, detail, "see the message; check Java and the master URL")]
    checks = [Check(label, True, f"Spark {spark.version}")]
    checks += [_sources_register(spark), _executors_import(spark)]
    spark.stop()
    return checks


def run_doctor(master: str = "local[1]", connect_url: str | None = None) -> int:
    """Run every check, print them, and return 0 when all passed."""
    checks = [_spark_line(), _java(), _worker_python()]
    if all(c.ok for c in checks):
        from pysparksources._commands.local_session import local_session

        checks += _session_checks(lambda: local_session("pysparksources-doctor", master), master)
    else:
        checks.append(Check("session", False, "skipped: fix the checks above first"))
    if connect_url:
        from pyspark.sql import SparkSession

        checks += _session_checks(
            lambda: SparkSession.builder.remote(connect_url).create(),
            f"Spark Connect server at {connect_url}",
        )
    for check in checks:
        print(f"[{'ok' if check.ok else 'FAIL'}] {check.name}: {check.detail}")
        if not check.ok and check.fix:
            print(f"       fix: {check.fix}")
    return 0 if all(c.ok for c in checks) else 1
