"""One line after a traceback, when Spark could not find pysparksources in its Python workers.

``pysparksources-hint.pth`` (written into the wheel by ``setup.py``) imports this module at
every start of an interpreter that has pysparksources installed. It must not change what any
other program does, so at start it only puts a watcher first on ``sys.meta_path`` that looks
at each module name imported and finds nothing. ``sys.excepthook`` stays the interpreter's
own: a program that never imports PySpark never sees the hint (the ``exceptiongroup``
backport, on Python 3.10, installs its hook only over the interpreter's own). When PySpark is
first imported the watcher wraps the ``sys.excepthook`` in place then, which keeps printing
every traceback; the watcher then does nothing more. ``PYSPARKSOURCES_NO_HINT=1`` turns all of
this off.

Spark starts its Python workers with ``PYSPARK_PYTHON`` (``python3`` from PATH when unset), not
with the interpreter that runs the application. From a virtual environment that is not
activated, that is another Python, without the package: Spark then fails with
``[DATA_SOURCE_NOT_FOUND] Failed to find the data source: pyrate`` (automatic registration
happens in a worker) or a worker's ``No module named 'pysparksources'``, and the application
never imported pysparksources, so nothing of ours could say why. When such an exception ends
the program uncaught, the hook lets the previous hook print it as usual and then adds::

    pysparksources: Spark starts its Python workers with /usr/bin/python3 (PYSPARK_PYTHON is
    unset), which did not find pysparksources: export PYSPARK_PYTHON=/app/venv/bin/python
    before Spark starts (pysparksources doctor checks a setup)

The error itself is the evidence: the hook runs no process. It never sets ``PYSPARK_PYTHON``
itself: executors run that path too, and a driver's virtual environment does not exist on a
cluster's machines. It is silent for every other exception, when the workers run this
environment's Python, and once a program installs its own ``sys.excepthook`` (which replaces
this one). Notebooks (IPython) print errors without ``sys.excepthook``: there the error's own
text and ``pysparksources doctor`` say it. Standard library only: keep it that way.
"""

import sys  # the only import at start: nothing else loads until an exception ends the program

__all__ = ["OPT_OUT", "hint", "install", "start"]

FORMATS = ("pyrate", "pyfile", "pyeventhub")
OPT_OUT = "PYSPARKSOURCES_NO_HINT"
_MISSING = ("No module named 'pysparksources'", "No module named 'pyspark_py")
_NOT_FOUND = "[DATA_SOURCE_NOT_FOUND] Failed to find the data source: "
# Python 3.10 has no ExceptionGroup; the exceptiongroup backport prints its groups through
# its own excepthook, installed only when it finds the interpreter's hook in place.
_BACKPORT_PYTHON = sys.version_info < (3, 11)


def _texts(error: BaseException) -> list[str]:
    """The text of ``error`` and of the exceptions it was raised from (a few levels)."""
    texts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen and len(texts) < 8:
        seen.add(id(current))
        name = f"{type(current).__module__}.{type(current).__qualname__}"
        try:
            texts.append(f"{name}: {current}")
        except Exception:  # a __str__ that raises
            texts.append(name)
        current = current.__cause__ or current.__context__
    return texts


def _our_failure(error: BaseException) -> str | None:
    """``"lookup"`` (a format of ours not found), ``"import"`` (a worker without the package)
    or None (anything else, or an error that already names the fix)."""
    text = "\n".join(_texts(error))
    if "export PYSPARK_PYTHON=" in text:
        return None  # pysparksources.register's own WorkerPythonError says it already
    at = text.find(_NOT_FOUND)
    while at >= 0:
        name = text[at + len(_NOT_FOUND) :].split(".", 1)[0].strip().lower()
        if name in FORMATS:
            return "lookup"
        at = text.find(_NOT_FOUND, at + 1)
    if any(missing in text for missing in _MISSING):
        return "import"
    return None


def _active_python_exec() -> str | None:
    """The worker Python of the SparkContext alive in this process (classic, or the local
    server of ``remote("local")``), without importing anything."""
    for name in ("pyspark.core.context", "pyspark.context"):
        module = sys.modules.get(name)
        context = getattr(getattr(module, "SparkContext", None), "_active_spark_context", None)
        if context is not None:
            python = getattr(context, "pythonExec", None)
            return python if isinstance(python, str) else None
    return None


def _workers_python(kind: str) -> tuple[str, str | None]:
    """(the Python Spark starts for this kind of failure, the variable that chose it)."""
    import os

    # Automatic registration runs in a planner worker, which prefers PYSPARK_DRIVER_PYTHON;
    # tasks run the SparkContext's Python (PYSPARK_PYTHON when the session started).
    names = ("PYSPARK_DRIVER_PYTHON", "PYSPARK_PYTHON") if kind == "lookup" else ("PYSPARK_PYTHON",)
    chosen = next((name for name in names if os.environ.get(name)), None)
    python = os.environ[chosen] if chosen else "python3"
    if kind == "import":
        python = _active_python_exec() or python
        chosen = None if python == "python3" else "PYSPARK_PYTHON"
    return python, chosen


def hint(error: BaseException) -> str | None:
    """The line to print after ``error``'s traceback, or None."""
    import os
    import shutil

    kind = _our_failure(error)
    if kind is None:
        return None
    connect = type(error).__module__.startswith("pyspark.errors.exceptions.connect")
    if connect and _active_python_exec() is None:  # a server of its own, elsewhere
        return (
            "pysparksources: the Spark Connect server's Python workers have no "
            "pysparksources: install it in the Python the server starts them with, or ship it "
            "with spark.addArtifacts and call pysparksources.register(spark) "
            "(pysparksources doctor --connect sc://HOST:PORT checks a setup)"
        )
    python, chosen = _workers_python(kind)
    shown = shutil.which(python) or python
    # A virtual environment's python links to its base interpreter: compare folders, not files.
    if os.path.realpath(os.path.dirname(shown)) == os.path.realpath(
        os.path.dirname(sys.executable)
    ):
        return None  # the workers run this environment: something else went wrong
    fix = f"export PYSPARK_PYTHON={sys.executable} before Spark starts"
    doctor = "(pysparksources doctor checks a setup)"
    if chosen is None:
        return (
            f"pysparksources: Spark starts its Python workers with {shown} "
            f"(PYSPARK_PYTHON is unset), which did not find pysparksources: {fix} {doctor}"
        )
    return (
        f"pysparksources: Spark starts its Python workers with {shown} ({chosen}), which did "
        f"not find pysparksources: install pysparksources into it, or {fix} {doctor}"
    )


def _print_traceback(previous: object, kind: type, error: BaseException, tb: object) -> None:
    """What ``previous`` (the hook this one wraps) prints; on Python 3.10, with the
    ``exceptiongroup`` backport imported after this hook was installed (so it kept its own
    out), the backport's printing, which that hook would have done."""
    backport = sys.modules.get("exceptiongroup") if _BACKPORT_PYTHON else None
    printer = getattr(backport, "print_exception", None)
    if previous is sys.__excepthook__ and printer is not None:
        printer(kind, error, tb)
        return
    previous(kind, error, tb)  # type: ignore[operator]


def install() -> None:
    """Wrap the ``sys.excepthook`` in place (once): it keeps printing every traceback."""
    previous = sys.excepthook
    if getattr(previous, "_pysparksources_hint", False):
        return

    def excepthook(kind: type[BaseException], error: BaseException, traceback: object) -> None:
        _print_traceback(previous, kind, error, traceback)
        try:
            line = hint(error)
            if line:
                sys.stderr.write(line + "\n")
                sys.stderr.flush()
        except BaseException:  # even Ctrl-C while it looks: the traceback is out already
            pass

    excepthook._pysparksources_hint = True  # type: ignore[attr-defined]
    sys.excepthook = excepthook


class _PySparkWatch:
    """First on ``sys.meta_path``: finds no module, and installs the hook when PySpark is
    imported (before its first module runs). Then it only returns None."""

    done = False

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if not self.done and (name == "pyspark" or name.startswith("pyspark.")):
            self.done = True
            try:  # noqa: SIM105 - contextlib is one more import at every start
                install()
            except BaseException:  # never in the way of an import
                pass

    def __repr__(self) -> str:
        return "<pysparksources start-up hint: waits for pyspark>"


def start() -> None:
    """What the .pth file's import does: nothing with ``PYSPARKSOURCES_NO_HINT`` set, the hook
    now if PySpark is already imported, else the watcher."""
    import os

    if os.environ.get(OPT_OUT, "") not in ("", "0"):
        return
    if "pyspark" in sys.modules:
        install()
    elif not any(isinstance(finder, _PySparkWatch) for finder in sys.meta_path):
        sys.meta_path.insert(0, _PySparkWatch())


start()
