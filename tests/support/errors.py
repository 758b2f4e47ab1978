"""What the user sees of a failed load(), start(), save() or query: the Python error lines."""

from __future__ import annotations

import re
from typing import Any

import pytest

# A Python exception line inside Spark's message ("pkg.mod.SomeError: text"); JVM class names
# in Spark Connect's appended stack trace have no ": " right after them.
_PYTHON_ERROR = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception): .*$", re.MULTILINE)


def python_error_lines(message: str) -> list[str]:
    """The Python exception lines of ``message``, without Spark Connect's JVM stack trace."""
    python_part = message.split("\nJVM stacktrace:", 1)[0]
    return [line.rstrip() for line in _PYTHON_ERROR.findall(python_part)]


def assert_one_line_error(message: str, expected: str) -> str:
    """Our OptionError is the last Python error the user sees, with no PySpark tail.

    Returns the OptionError's sentence (without the exception class name).
    """
    assert "UnboundLocalError" not in message, message
    assert "During handling of the above exception" not in message, message
    assert "invalid value None" not in message, message
    lines = python_error_lines(message)
    assert lines, message
    last = lines[-1]
    assert last.startswith("pysparksources.errors.OptionError: "), message
    sentence = last.split(": ", 1)[1].removesuffix(" SQLSTATE: 38000").strip()
    assert expected in sentence, sentence
    return sentence


def query_failure(query: Any) -> str:
    """The message awaitTermination() raises for a query that fails."""
    with pytest.raises(Exception) as caught:
        query.awaitTermination(180)
    query.stop()
    return str(caught.value)
