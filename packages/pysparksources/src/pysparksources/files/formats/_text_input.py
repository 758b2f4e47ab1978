"""A text file's content as the csv and json readers take it: decoded, in lines, or lent.

A file is lent to one of pyarrow's streaming readers and taken back before anyone reads it
again (:class:`LentFile`): pyarrow's csv and json readers read ahead on threads of their own,
and those reads go on for a while after the reader has raised. Reading the file again from its
start (the escape-character and malformed-record paths do) while such a read is under way
moves its position mid-way: lines come out cut in two and rows go missing, a different few on
every run. Every read goes through a lock, and once the file is taken back pyarrow's reads
find its end.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import threading
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

__all__ = ["LentFile", "as_utf8", "is_utf8", "text_lines", "whole_text"]


class LentFile:
    """A file lent to one of pyarrow's streaming readers (module docstring)."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self._lock = threading.Lock()
        self._taken_back = False
        self.closed = False

    def read(self, size: int = -1) -> bytes:
        with self._lock:
            if self._taken_back:
                return b""
            data: bytes = self._raw.read(size)
            return data

    def take_back(self) -> None:
        """Wait for a read under way to end; later reads by pyarrow get nothing."""
        with self._lock:
            self._taken_back = True

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True


def is_utf8(encoding: str) -> bool:
    """Whether ``encoding`` (any of Python's names for it) is UTF-8, which pyarrow reads."""
    return codecs.lookup(encoding).name == "utf-8"


def as_utf8(f: Any, encoding: str) -> Any:
    """The file's bytes in UTF-8, which pyarrow's readers take: the file itself when it is."""
    if is_utf8(encoding):
        return f
    return pa.transcoding_input_stream(pa.PythonFile(f, mode="r"), encoding, "utf-8")


def text_lines(f: Any, encoding: str) -> Iterator[str]:
    """The file's lines without their endings (\\n, \\r\\n or \\r), as Spark splits them."""
    text = io.TextIOWrapper(f, encoding=encoding, newline="")
    try:
        for line in text:
            yield line.rstrip("\r\n")
    finally:
        # The caller's file stays open: it may read it again (unless the caller closed it
        # already, when a failure ended the reading early).
        with contextlib.suppress(ValueError):
            text.detach()


def whole_text(f: Any, encoding: str) -> str:
    """The whole file as text, line endings as they are (multiLine csv, multiLine json)."""
    text = io.TextIOWrapper(f, encoding=encoding, newline="")
    try:
        return text.read()
    finally:
        text.detach()  # the caller's file stays open
