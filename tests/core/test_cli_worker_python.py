"""What the command line, the package and the start-up hint say about the Python Spark starts
for its workers, in the situation of a virtual environment run without activation:
PYSPARK_PYTHON unset and PATH's ``python3`` another interpreter, without pysparksources (here a
link to this environment's base interpreter).

- Commands that start no Spark, and importing the package, say nothing about it (the demo and
  doctor, which start Spark, do: tests/wheel/test_wheel_install.py).
- ``_pysparksources_hint`` (which the wheel's .pth file imports at every start) changes
  nothing until PySpark is imported; then it adds one line after the traceback when Spark
  fails because of it, and is silent otherwise. The wheel test runs the real failure from the
  built wheel; here each script runs the wheel's .pth line itself (an editable install has no
  .pth file), imports PySpark and raises the texts Spark's errors carry.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pysparksources._core import worker_python
from support.paths import PRODUCT, TESTS

FIX = f"export PYSPARK_PYTHON={sys.executable} before Spark starts"

# What Py4J raises when automatic registration found nothing (its first lines, as seen).
NOT_FOUND = """
class Py4JJavaError(Exception):
    pass
raise Py4JJavaError(
    "An error occurred while calling o28.load.\\n: org.apache.spark.SparkClassNotFoundException: "
    "[DATA_SOURCE_NOT_FOUND] Failed to find the data source: {name}. Make sure the provider "
    "name is correct and the package is properly registered and compatible with your Spark "
    "version. SQLSTATE: 42K02\\n\\tat org.apache.spark.sql.errors.QueryExecutionErrors$"
)
"""
# A task whose worker cannot import the package (register(spark, check_workers=False)).
NO_MODULE = """
class PythonException(Exception):
    pass
try:
    raise ModuleNotFoundError("No module named 'pysparksources'")
except ModuleNotFoundError as error:
    raise PythonException(
        "An exception was thrown from the Python worker. Please see the stack trace below.\\n"
        "Traceback (most recent call last):\\n"
        "ModuleNotFoundError: No module named 'pysparksources'"
    ) from error
"""


@pytest.fixture
def path_python3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH folder whose python3 is the base interpreter, without this environment's
    packages."""
    monkeypatch.chdir(tmp_path)  # python -c imports from the working folder: not the checkout
    base = Path(sys.base_prefix) / "bin" / "python3"
    assert sys.prefix != sys.base_prefix, "run the tests from the project's virtual environment"
    assert worker_python.import_failure(str(base)) is not None, f"{base} has pysparksources"
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "python3").symlink_to(base)
    return folder


def run(path: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    unset = {"PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"}
    env = {k: v for k, v in os.environ.items() if k not in unset} | {"PATH": str(path)} | extra
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, timeout=120
    )


def _pth_line() -> str:
    """The line setup.py writes into the wheel's pysparksources-hint.pth."""
    tree = ast.parse((PRODUCT / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "PTH_LINE":
            value = ast.literal_eval(node.value)
            assert isinstance(value, str)
            return value
    raise AssertionError("setup.py has no PTH_LINE")


PTH_LINE = _pth_line()


def with_hint(code: str, pyspark: bool = True) -> str:
    """A script as a program of the wheel's environment runs it: the .pth line first (as the
    site module runs it), then (``pyspark``) ``import pyspark``, then ``code``."""
    start = PTH_LINE + ("import pyspark\n" if pyspark else "")
    return start + textwrap.dedent(code)


def hint_line(python3: Path, executable: str = sys.executable) -> str:
    return (
        f"pysparksources: Spark starts its Python workers with {python3} (PYSPARK_PYTHON is "
        f"unset), which did not find pysparksources: export PYSPARK_PYTHON={executable} before "
        "Spark starts (pysparksources doctor checks a setup)"
    )


def last_line(result: subprocess.CompletedProcess[str]) -> str:
    return result.stderr.rstrip("\n").splitlines()[-1]


# -- B: only what starts Spark talks about the workers' Python ------------------------------


def test_importing_the_package_says_nothing(path_python3: Path, tmp_path: Path) -> None:
    assert run(path_python3, "-c", "import pysparksources, pysparksources.cli").stderr == ""
    assert run(tmp_path, "-c", "import pysparksources").stderr == ""  # no python3 at all


def test_commands_that_start_no_spark_say_nothing(path_python3: Path) -> None:
    helped = run(path_python3, "-m", "pysparksources.cli", "--help")
    assert helped.returncode == 0 and helped.stderr == "", helped.stderr
    assert run(path_python3, "-m", "pysparksources.cli", "demo", "--help").stderr == ""
    checkpoint = TESTS / "eventhubs" / "migrate" / "spark35" / "single"
    migrated = run(
        path_python3, "-m", "pysparksources.cli", "eventhubs", "migrate-checkpoint",
        str(checkpoint),
    )  # fmt: skip
    assert migrated.returncode == 0, migrated.stderr
    assert "PYSPARK_PYTHON" not in migrated.stderr
    assert all(line.startswith("migrate-checkpoint: ") for line in migrated.stderr.splitlines())
    emulator = run(path_python3, "-m", "pysparksources_emulator", "--help")
    assert emulator.returncode == 0 and emulator.stderr == "", emulator.stderr


def test_a_bad_demo_output_folder_fails_before_spark_in_one_line(
    path_python3: Path, tmp_path: Path
) -> None:
    full = tmp_path / "full"
    full.mkdir()
    (full / "part-0.parquet").write_bytes(b"")
    result = run(path_python3, "-m", "pysparksources.cli", "demo", "--output", str(full))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"pysparksources demo: --output {full}: give a new or empty folder ({full} is not empty)"
    ]


def test_the_demo_prints_no_path_that_vanishes() -> None:
    from pysparksources._commands.demo import output_line

    assert output_line(None) == (
        "parquet output in a temporary folder, deleted at the end (--output DIR keeps it)"
    )
    assert output_line(Path("/data/demo")) == "parquet output in /data/demo (kept)"


# -- A: the start-up hint --------------------------------------------------------------------


@pytest.mark.parametrize("name", ["pyrate", "pyfile", "pyeventhub", "PyRate"])
def test_a_format_of_ours_not_found_ends_with_the_fix(path_python3: Path, name: str) -> None:
    result = run(path_python3, "-c", with_hint(NOT_FOUND.format(name=name)))
    assert result.returncode == 1
    assert "[DATA_SOURCE_NOT_FOUND]" in result.stderr  # the traceback, printed as usual
    assert last_line(result) == hint_line(path_python3 / "python3")
    assert [x for x in result.stderr.splitlines() if x.startswith("pysparksources")] == [
        last_line(result)
    ]


def test_a_worker_without_the_package_ends_with_the_fix(path_python3: Path) -> None:
    result = run(path_python3, "-c", with_hint(NO_MODULE))
    assert "The above exception was the direct cause" in result.stderr
    assert last_line(result) == hint_line(path_python3 / "python3")


def test_a_chosen_worker_python_without_the_package_is_named(path_python3: Path) -> None:
    python = str(path_python3 / "python3")
    code = with_hint(NOT_FOUND.format(name="pyrate"))
    result = run(path_python3, "-c", code, PYSPARK_PYTHON=python)
    assert last_line(result) == (
        f"pysparksources: Spark starts its Python workers with {python} (PYSPARK_PYTHON), which "
        f"did not find pysparksources: install pysparksources into it, or {FIX} "
        "(pysparksources doctor checks a setup)"
    )


def test_the_hint_is_silent_for_anything_else(path_python3: Path) -> None:
    quiet = {
        "another error": "raise ValueError('boom')",
        "another format": NOT_FOUND.format(name="delta"),
        "workers run this interpreter": NOT_FOUND.format(name="pyrate"),
        "an error that names the fix already": (
            "raise RuntimeError('pysparksources.register: ... Fix: export PYSPARK_PYTHON=/x')"
        ),
        "a str() that fails": (
            "class Odd(Exception):\n    def __str__(self): raise RuntimeError('no')\nraise Odd()"
        ),
        "exit": "raise SystemExit(3)",
    }
    for case, code in quiet.items():
        extra = {"PYSPARK_PYTHON": sys.executable} if case.startswith("workers") else {}
        result = run(path_python3, "-c", with_hint(code), **extra)
        assert "pysparksources:" not in result.stderr, (case, result.stderr)
        assert "Error in sys.excepthook" not in result.stderr, (case, result.stderr)
        assert result.returncode != 0, case
    exited = run(path_python3, "-c", with_hint("raise SystemExit(3)"))
    assert exited.returncode == 3 and exited.stderr == ""
    assert run(path_python3, "-c", with_hint("print('ok')")).stderr == ""


def test_a_programs_own_excepthook_replaces_the_hint(path_python3: Path) -> None:
    code = with_hint(
        "import sys\n"
        "sys.excepthook = lambda kind, error, tb: print('MINE', kind.__name__, file=sys.stderr)\n"
        + NOT_FOUND.format(name="pyrate")
    )
    assert run(path_python3, "-c", code).stderr == "MINE Py4JJavaError\n"


def test_an_earlier_excepthook_still_runs_first(path_python3: Path) -> None:
    """A hook installed before the hint loads (the exceptiongroup backport's, on Python 3.10,
    installed when it is imported first) prints the traceback; the hint's line follows."""
    code = (
        "import sys\n"
        "sys.excepthook = lambda kind, error, tb: print('EARLIER', file=sys.stderr)\n"
        + with_hint(NOT_FOUND.format(name="pyrate"))
    )
    result = run(path_python3, "-c", code)
    assert result.stderr.splitlines() == ["EARLIER", hint_line(path_python3 / "python3")]


def test_a_program_that_never_imports_pyspark_keeps_the_interpreters_hook(
    path_python3: Path,
) -> None:
    """At start the hint only waits: sys.excepthook stays the interpreter's own, so the
    exceptiongroup backport (which installs its hook only over that one) is unaffected."""
    code = with_hint(
        "import sys\n"
        "print(sys.excepthook is sys.__excepthook__, sys.meta_path[0])\n"
        "import json\n" + NOT_FOUND.format(name="pyrate"),  # other imports: found as before
        pyspark=False,
    )
    result = run(path_python3, "-c", code)
    assert result.stdout == "True <pysparksources start-up hint: waits for pyspark>\n"
    assert "[DATA_SOURCE_NOT_FOUND]" in result.stderr and "pysparksources:" not in result.stderr
    imported = with_hint("import sys\nprint(sys.excepthook is sys.__excepthook__)\n")
    assert run(path_python3, "-c", imported).stdout == "False\n"  # pyspark is used: hooked


def test_the_backport_imported_after_pyspark_still_prints_its_groups(
    path_python3: Path,
) -> None:
    """Python 3.10: exceptiongroup imported after PySpark finds this hook in place and keeps
    its own out; the hint then prints the traceback as the backport's hook would have. Here,
    on a newer Python, a stand-in module and the 3.10 switch show which printer runs."""
    code = with_hint(
        "import sys, types, _pysparksources_hint\n"
        "_pysparksources_hint._BACKPORT_PYTHON = True\n"
        "backport = types.ModuleType('exceptiongroup')\n"
        "backport.print_exception = lambda kind, error, tb: print('BACKPORT', kind.__name__, "
        "file=sys.stderr)\n"
        "sys.modules['exceptiongroup'] = backport\n" + NOT_FOUND.format(name="pyrate")
    )
    result = run(path_python3, "-c", code)
    assert result.stderr.splitlines() == [
        "BACKPORT Py4JJavaError",
        hint_line(path_python3 / "python3"),
    ]


def test_the_hint_runs_no_process(path_python3: Path) -> None:
    """The error is the evidence: no Python is started to check the workers' one."""
    code = with_hint(
        "import sys\n"
        "sys.addaudithook(lambda event, args: event.startswith(('subprocess', 'os.exec', "
        "'os.posix_spawn', 'os.fork')) and print('STARTED', event, file=sys.stderr))\n"
        + NOT_FOUND.format(name="pyrate")
    )
    result = run(path_python3, "-c", code)
    assert "STARTED" not in result.stderr, result.stderr
    assert last_line(result) == hint_line(path_python3 / "python3")


def test_the_opt_out_leaves_everything_as_it_was(path_python3: Path) -> None:
    code = with_hint(
        "import sys\n"
        "print(sys.excepthook is sys.__excepthook__, any('hint' in repr(f) for f in "
        "sys.meta_path))\n" + NOT_FOUND.format(name="pyrate")
    )
    result = run(path_python3, "-c", code, PYSPARKSOURCES_NO_HINT="1")
    assert result.stdout == "True False\n"
    assert "pysparksources:" not in result.stderr


def test_the_pth_line_survives_any_failure_of_the_import(
    path_python3: Path, tmp_path: Path
) -> None:
    """Even a KeyboardInterrupt while the hint module loads ends only the hint."""
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "_pysparksources_hint.py").write_text("raise KeyboardInterrupt\n")
    code = f"import sys; sys.path.insert(0, {str(broken)!r})\n{PTH_LINE}print('started')\n"
    result = run(path_python3, "-c", code)
    assert (result.returncode, result.stdout, result.stderr) == (0, "started\n", "")


def test_a_spark_connect_servers_failure_names_the_servers_python(path_python3: Path) -> None:
    code = with_hint(
        NOT_FOUND.format(name="pyrate").replace(
            "class Py4JJavaError(Exception):\n    pass",
            "class Py4JJavaError(Exception):\n    pass\n"
            "Py4JJavaError.__module__ = 'pyspark.errors.exceptions.connect'",
        )
    )
    assert last_line(run(path_python3, "-c", code)) == (
        "pysparksources: the Spark Connect server's Python workers have no pysparksources: "
        "install it in the Python the server starts them with, or ship it with "
        "spark.addArtifacts and call pysparksources.register(spark) (pysparksources doctor "
        "--connect sc://HOST:PORT checks a setup)"
    )


def test_the_hint_module_imports_nothing_at_start(path_python3: Path) -> None:
    """Interpreter start pays for one small module: no other import, nothing run."""
    result = run(path_python3, "-X", "importtime", "-c", "import _pysparksources_hint")
    imported = [line.split("|")[-1].strip() for line in result.stderr.splitlines()]
    after = imported[imported.index("site") + 1 :]  # what the -c line imported
    assert [name for name in after if name and "sitecustomize" not in name] == [
        "_pysparksources_hint"
    ], result.stderr
