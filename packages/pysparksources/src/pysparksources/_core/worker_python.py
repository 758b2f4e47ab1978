"""Which Python Spark starts for its workers, and whether that Python can import this package.

Spark runs Python data sources in worker processes started with ``PYSPARK_PYTHON``, or
``python3`` from PATH when it is unset -- not with the interpreter that created the session.
Run from a virtual environment that is not activated, that is another Python: explicitly
registered sources then fail inside the workers with ``ModuleNotFoundError``, and automatic
registration silently finds nothing. The checks here turn that into one message with the fix:

- :func:`path_python_problem` (``demo``, which starts Spark): runs PATH's ``python3`` to see;
- :func:`require_workers_import` (``register()``): asks the session's own workers;
- the top-level ``_pysparksources_hint`` (loaded at interpreter start by a .pth file): one
  line after the traceback when Spark fails for this reason in a program that never imported
  pysparksources.

Importing the package says nothing: most of what imports it (the command line's ``--help``,
``eventhubs migrate-checkpoint``) never starts Spark.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from typing import Any

from pysparksources.errors import WorkerPythonError

__all__ = [
    "fix",
    "import_failure",
    "path_python_problem",
    "register_source",
    "require_workers_import",
    "resolves_to",
    "this_python",
]

_log = logging.getLogger("pysparksources")

# Spark sets this in the environment of every Python worker it starts.
_IN_SPARK_WORKER = "PYTHON_WORKER_FACTORY_SECRET"
_DOCTOR = "`pysparksources doctor` checks a setup"


def this_python() -> str:
    """This interpreter, spelled as the README spells it: a virtual environment's ``python3``
    (what some launchers record as ``sys.executable``) becomes its ``python`` beside it."""
    executable = sys.executable
    plain = os.path.join(os.path.dirname(executable), "python")
    if (
        os.path.basename(executable) != "python"
        and os.path.exists(plain)
        and os.path.realpath(plain) == os.path.realpath(executable)
    ):
        return plain
    return executable


def fix() -> str:
    """The one-line fix: make Spark's workers run this interpreter."""
    return f"export PYSPARK_PYTHON={this_python()} before Spark starts"


def _is_script(path: str) -> bool | None:
    try:
        with open(path, "rb") as file:
            return file.read(2) == b"#!"
    except OSError:
        return None


def _runs_this_environment(python: str) -> bool | None:
    """Whether ``python`` sees this interpreter's packages; None when only a run can tell."""
    here = os.path.realpath(os.path.dirname(sys.executable))
    if os.path.realpath(os.path.dirname(python)) == here:
        return True
    if sys.prefix != sys.base_prefix:
        return False  # a virtual environment's packages are seen only through its own bin/
    if _is_script(python) is not False:
        return None  # a launcher (a pyenv shim, say) picks its interpreter when it runs
    return os.path.realpath(python) == os.path.realpath(sys.executable)


def _unset_and_path_python() -> tuple[bool, str | None]:
    """(whether this process decides the workers' Python by PATH, PATH's python3)."""
    decided_by_path = not os.environ.get("PYSPARK_PYTHON") and _IN_SPARK_WORKER not in os.environ
    return decided_by_path, shutil.which("python3")


def _no_python3() -> str:
    return (
        "PYSPARK_PYTHON is unset and there is no python3 on PATH, so Spark cannot start its "
        f"Python workers. Fix: {fix()} ({_DOCTOR})."
    )


def import_failure(python: str, timeout: float = 120) -> str | None:
    """Why ``python`` cannot import pysparksources and pyarrow (None when it can)."""
    try:
        result = subprocess.run(
            [python, "-c", "import pysparksources, pyarrow"],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"cannot run it ({exc})"
    if result.returncode == 0:
        return None
    return (result.stderr.strip().splitlines() or [f"exit code {result.returncode}"])[-1]


def path_python_problem() -> str | None:
    """Why Spark's default worker Python cannot run these sources, when PYSPARK_PYTHON is unset
    and PATH's ``python3`` (run to see) is another environment without the package."""
    decided_by_path, python = _unset_and_path_python()
    if not decided_by_path:
        return None
    if python is None:
        return _no_python3()
    if _runs_this_environment(python):
        return None
    failure = import_failure(python)
    if failure is None:
        return None
    return (
        f"PYSPARK_PYTHON is unset, so Spark starts its Python workers with python3 from PATH "
        f"({python}), which cannot import pysparksources ({failure}). Fix: {fix()} ({_DOCTOR})."
    )


def _is_connect(spark: Any) -> bool:
    return type(spark).__module__.startswith("pyspark.sql.connect")


def _cause(exc: BaseException) -> str:
    """The telling line of a failure that happened inside a Python worker."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    for marker in ("ModuleNotFoundError", "ImportError", "failed to connect back"):
        for line in reversed(lines):
            if marker in line:
                return line[:300]
    return (lines[0] if lines else repr(exc))[:300]


def _refusal(spark: Any, exc: BaseException) -> str:
    escape = (
        "If the workers get the package some way this check cannot see, call "
        "pysparksources.register(spark, check_workers=False)."
    )
    if _is_connect(spark):
        return (
            "pysparksources.register: the Spark Connect server's Python workers cannot import "
            f"pysparksources ({_cause(exc)}). Install the package in the Python the server starts "
            "for its workers (its PYSPARK_PYTHON), or ship the wheel from this client with "
            "spark.addArtifacts(..., pyfile=True) first (README: Deploying on a cluster). " + escape
        )
    python = spark.sparkContext.pythonExec
    how = "PYSPARK_PYTHON" if os.environ.get("PYSPARK_PYTHON") == python else "python3 from PATH"
    return (
        f"Spark starts this session's Python workers with {python} "
        f"({how}), which cannot import pysparksources ({_cause(exc)}). Fix: {fix()} (the "
        f"session keeps the Python it started with), or install pysparksources into {python}; "
        f"{_DOCTOR}. " + escape
    )


def require_workers_import(spark: Any) -> None:
    """Raise :class:`WorkerPythonError` unless the session's Python workers import the package.

    Spark resolves a probe data source (the class is pickled by reference, so resolving it
    imports pysparksources in a planning worker): on a classic session that worker runs the
    Python the executors run; over Spark Connect it runs in the server's environment. Nothing
    waits for executors, so this works the same on a busy cluster.
    """
    from pysparksources._core.probe import ImportProbe
    from pysparksources._version import __version__

    register_source(spark, ImportProbe)
    try:
        seen = spark.read.format(ImportProbe.name()).load().schema.fieldNames()
    except Exception as exc:
        raise WorkerPythonError("pysparksources.register", _refusal(spark, exc)) from exc
    if seen != [__version__]:
        _log.warning(
            "pysparksources: this driver has version %s but Spark's Python workers import %s",
            __version__,
            ", ".join(seen),
        )


def _pickled_class(pickled: bytes) -> tuple[str, str] | None:
    """(module, qualified name) of the class a pickle references first, without unpickling.

    A class pickled by reference is that one global and nothing else; a class pickled by
    value (cloudpickle) starts with a global of cloudpickle's own.
    """
    import pickletools

    strings: list[str] = []
    try:
        for opcode, argument, _ in pickletools.genops(pickled):
            if opcode.name in ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE"):
                strings.append(str(argument))
            elif opcode.name == "STACK_GLOBAL":
                return (strings[-2], strings[-1]) if len(strings) >= 2 else None
            elif opcode.name == "GLOBAL":
                module, _, name = str(argument).partition(" ")
                return module, name
    except Exception:  # not a pickle this reading understands: not ours
        return None
    return None


def register_source(spark: Any, source: type) -> None:
    """Register ``source`` on ``spark`` unless its name already holds it.

    On a classic session :func:`resolves_to` tells. Over Spark Connect nothing can look, and
    Spark 4.0 and 4.1 refuse to replace a registered data source
    (``DATA_SOURCE_ALREADY_EXISTS``; 4.2+ replace it): a name held there is left as it is,
    most often by automatic registration in the server, which registered this very class.
    """
    if resolves_to(spark, source):
        return
    try:
        spark.dataSource.register(source)
    except Exception as error:
        if "DATA_SOURCE_ALREADY_EXISTS" not in str(error):
            raise


def resolves_to(spark: Any, source: type) -> bool:
    """Whether ``spark`` already resolves ``source.name()`` to ``source`` itself.

    Spark's automatic registration (the ``pyspark_*`` shims) or an earlier ``register()`` put
    the same class there; registering it again only makes Spark log ``WARN DataSourceManager:
    The data source pyrate replaced a statically (or previously) registered data source``.
    Classic sessions only: it asks the session's DataSourceManager through the private
    ``spark._jsparkSession`` and reads the registered class's pickle without unpickling it.
    Anything unexpected (Spark Connect, which has no JVM here; another Spark version) answers
    False, and the caller registers as before.
    """
    session = getattr(spark, "_jsparkSession", None)
    if session is None:
        return False
    try:
        manager = session.sessionState().dataSourceManager()
        name = source.name()  # type: ignore[attr-defined]
        if not manager.dataSourceExists(name):
            return False
        signed = str(manager.lookupDataSource(name).dataSourceCls().command().mkString(","))
        pickled = bytes(int(value) % 256 for value in signed.split(",") if value)
    except Exception:
        return False
    return _pickled_class(pickled) == (source.__module__, source.__qualname__)
