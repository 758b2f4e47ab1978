"""Errors have one shape: one public module, one base, the source's name first, no stray kinds.

The static checks read the product's source: an exception class defined outside
``pysparksources/errors.py``, a built-in error raised where it can reach a user, or a
hand-typed ``"pyfile: "`` prefix fails here, naming the file and line.
"""

from __future__ import annotations

import ast
import pickle
import re

import pytest

import pysparksources
from pysparksources import errors
from pysparksources.errors import OptionError, PySparkSourcesError
from support.paths import DOCS, PRODUCT

SOURCE = PRODUCT / "src" / "pysparksources"
PRODUCT_FILES = sorted(SOURCE.rglob("*.py"))

# Exceptions that are caught inside the package and never reach a user, with why.
PRIVATE_EXCEPTIONS = {
    "_InvalidSchema": "_core/avro_schema.py: why an Avro schema is refused, turned by "
    "parse_schema into the calling source's SchemaError",
    "EscapeSeen": "files/formats/_csv_records.py: switches a csv file to the exact reader, "
    "then caught",
    "NotAStorageEvent": "files/source/notifications/events.py: a queue message that is not a "
    "storage event, logged, counted and deleted or left (unreadableMessages) by the discovery",
    "PositionError": "eventhubs: a position's parse error, always turned into an OptionError",
    "RawTextNeeded": "files/formats/_json_values.py: asks for a line to be parsed again, then "
    "caught",
}
# Modules that may raise ValueError because their caller turns it into ours: the value
# grammar and every option declaration (Option.parse raises ValueError("expected ..."), which
# the Options view turns into an OptionError naming the option). And the process caches'
# declarations: a duplicate name or a bound below 1 is the product's bug, raised at import.
VALUE_ERROR_ALLOWED = (
    "_core/option_values.py",
    "_core/option_table.py",
    "_option_table.py",
    "_core/process_caches.py",
)
BUILTIN_ERRORS = {"RuntimeError", "ValueError", "TimeoutError", "Exception", "KeyError"}


# The public module's names: its error classes, and the one function that finds them.
ERROR_NAMES = [name for name in errors.__all__ if name != "cause"]


def test_every_public_error_derives_from_the_base_and_is_exported() -> None:
    for name in ERROR_NAMES:
        cls = getattr(errors, name)
        assert isinstance(cls, type) and issubclass(cls, PySparkSourcesError), name
    assert pysparksources.PySparkSourcesError is PySparkSourcesError
    assert pysparksources.OptionError is OptionError
    assert issubclass(OptionError, ValueError)  # existing `except ValueError` keeps working


def test_messages_start_with_the_source_and_keep_their_parts() -> None:
    error = errors.DataLossError("pyeventhub", "events 5..9 of partition 1 expired")
    assert str(error) == "pyeventhub: events 5..9 of partition 1 expired"
    assert (error.source, error.detail) == ("pyeventhub", "events 5..9 of partition 1 expired")
    option = OptionError.invalid("pyfile", "maxFileAge", "expected a duration", "soon")
    assert (
        str(option) == "pyfile: invalid value 'soon' for option 'maxFileAge': expected a duration"
    )
    assert option.option == "maxFileAge"


@pytest.mark.parametrize("name", ERROR_NAMES)
def test_errors_survive_pickling(name: str) -> None:
    cls = getattr(errors, name)
    error = (
        cls("pyfile", "path", "pyfile: x")
        if cls is OptionError
        else cls("pyfile", "something is wrong")
    )
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is cls and str(copy) == str(error) and copy.source == "pyfile"


def test_bare_drops_the_traceback() -> None:
    try:
        raise errors.CorruptFileError("pyfile", "x.csv: bad quote")
    except errors.CorruptFileError as caught:
        assert caught.__traceback__ is not None
        assert caught.bare().__traceback__ is None


def _classes(tree: ast.AST) -> list[ast.ClassDef]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]


def _is_exception(node: ast.ClassDef) -> bool:
    bases = {ast.unparse(base).rsplit(".", 1)[-1] for base in node.bases}
    return any(b.endswith(("Error", "Exception")) or b == "Exception" for b in bases)


def test_no_exception_class_outside_the_errors_module() -> None:
    stray = []
    for path in PRODUCT_FILES:
        if path.name == "errors.py" and path.parent == SOURCE:
            continue
        for node in _classes(ast.parse(path.read_text(), str(path))):
            if _is_exception(node) and node.name not in PRIVATE_EXCEPTIONS:
                stray.append(f"{path.relative_to(SOURCE)}:{node.lineno} {node.name}")
    assert not stray, "define user-facing errors in pysparksources/errors.py: " + ", ".join(stray)


def test_no_builtin_error_raised_where_it_can_reach_a_user() -> None:
    found = []
    for path in PRODUCT_FILES:
        relative = path.relative_to(SOURCE).as_posix()
        allowed = {"ValueError"} if relative.endswith(VALUE_ERROR_ALLOWED) else set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                name = ast.unparse(node.exc.func)
                if name in BUILTIN_ERRORS - allowed:
                    found.append(f"{relative}:{node.lineno} raise {name}(...)")
    assert not found, "raise a pysparksources.errors class instead: " + ", ".join(found)


def test_no_hand_typed_source_prefix() -> None:
    prefix = re.compile(r"""f?["'](?:pyrate|pyfile|pyeventhub): """)
    found = [
        f"{path.relative_to(SOURCE)}:{number}"
        for path in PRODUCT_FILES
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if prefix.search(line)
    ]
    assert not found, "take the prefix from the source's NAME: " + ", ".join(found)


def test_the_error_reference_names_every_class() -> None:
    reference = (DOCS / "errors.md").read_text()
    missing = [name for name in errors.__all__ if f"`{name}`" not in reference]
    assert not missing, f"docs/errors.md does not describe {missing}"


# What Spark's exceptions hold: our error's line among Spark's own lines and a traceback.
_SPARK_TEXT = """[STREAM_FAILED] Query [id = 5, runId = 6] terminated with exception: Job aborted.
org.apache.spark.api.python.PythonException: Traceback (most recent call last):
  File "/x/worker.py", line 1, in main
    raise error.bare() from None
pysparksources.errors.SchemaChangedError: pyfile: file 'file:/in/2.json' has new columns 'city'
\tat org.apache.spark.api.python.BasePythonRunner.handlePythonException(PythonRunner.scala:1)
"""


def test_cause_gives_our_error_back_from_sparks_text() -> None:
    found = errors.cause(RuntimeError(_SPARK_TEXT))
    assert type(found) is errors.SchemaChangedError
    assert isinstance(found, errors.SchemaError)
    assert found.source == "pyfile"
    assert str(found) == "pyfile: file 'file:/in/2.json' has new columns 'city'"
    assert pickle.loads(pickle.dumps(found)).detail == found.detail


def test_cause_takes_the_last_quoted_error_and_an_options_name() -> None:
    text = (
        "pysparksources.errors.DataLossError: pyeventhub: events expired\r\n"
        "pysparksources.errors.OptionError: pyfile: unknown option 'compresion': did you mean\n"
    )
    found = errors.cause(ValueError(text))
    assert isinstance(found, errors.OptionError) and found.option == "compresion"
    assert str(found) == "pyfile: unknown option 'compresion': did you mean"


def test_cause_returns_our_error_from_the_chain_as_it_is() -> None:
    ours = errors.CheckpointError("pyfile", "a damaged line")
    try:
        try:
            raise ours
        except errors.CheckpointError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert errors.cause(outer) is ours


@pytest.mark.parametrize(
    "text",
    [
        "",
        "org.apache.spark.SparkException: Job aborted",
        # Not at a line's start: quoted inside someone else's text (a record, a file name).
        "value 'pysparksources.errors.SchemaChangedError: pyfile: x' is not a number",
        # Not one of the module's error classes.
        "pysparksources.errors.cause: pyfile: x",
        "pysparksources.errors.NotAnError: pyfile: x",
        "pysparksources.errors._InvalidSchema: pyfile: x",
        # No source name before the message.
        "pysparksources.errors.SchemaError: no source",
    ],
)
def test_cause_is_none_where_no_error_of_ours_is_quoted(text: str) -> None:
    assert errors.cause(RuntimeError(text)) is None


def test_cause_reads_a_bounded_text_and_chain() -> None:
    line = "pysparksources.errors.OptionError: pyfile: late\n"
    assert errors.cause(RuntimeError("x" * (1 << 20) + "\n" + line)) is None
    error: BaseException = RuntimeError(line)
    for _ in range(40):  # our error deeper than the chain is read
        wrapper = RuntimeError("wrapped")
        wrapper.__cause__ = error
        error = wrapper
    assert errors.cause(error) is None
