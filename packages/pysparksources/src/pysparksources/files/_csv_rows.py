"""CSV the way Spark's reader (univocity) splits it, for files pyarrow would split otherwise.

The two differ only around the escape character: univocity honours it inside quoted values
only, and only before the quote or the escape character itself (``"a\\"b"`` is ``a"b``,
``"a\\,b"`` stays ``a\\,b``), while pyarrow unescapes it everywhere, before any character.
Spark's writer leaves backslashes unquoted (``a\\b``), so its own files show the difference.
pyfile reads with pyarrow (escaping off) while no escape character has been seen, and parses a
file that has one here. Null rules are Spark's: an unquoted empty field is null, and so is any
value equal to ``nullValue`` (quoted or not).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from pysparksources.errors import MalformedRecordError
from pysparksources.files import NAME

__all__ = ["EscapeSeen", "EscapeWatch", "spark_csv_batches"]


class EscapeSeen(Exception):
    """The file holds the escape character: pyarrow's reading of it would differ from Spark's."""


class EscapeWatch:
    """A readable file that raises :class:`EscapeSeen` when a read returns the escape byte."""

    def __init__(self, raw: Any, escape: bytes) -> None:
        self._raw = raw
        self._escape = escape
        self.closed = False

    def read(self, size: int = -1) -> bytes:
        data: bytes = self._raw.read(size)
        if self._escape in data:
            raise EscapeSeen
        return data

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True


def _field_regex(sep: str, quote: str, escape: str) -> re.Pattern[str]:
    s, q, e = (re.escape(c) for c in (sep, quote, escape))
    ends = rf"(?={s}|\r\n|\n|\r|$)"
    unquoted = rf"(?P<u>[^{s}\r\n]*)"
    if not quote:
        return re.compile(unquoted)
    inside = rf"(?:[^{q}{e}]|{e}[\s\S])*" if escape else rf"[^{q}]*"
    return re.compile(rf"{q}(?P<q>{inside}){q}{ends}|{unquoted}")


def _records(text: str, fields: re.Pattern[str], sep: str) -> Iterator[list[tuple[str, bool]]]:
    """Records of (value, quoted) from ``text``; records end at \\n, \\r\\n or \\r."""
    pos, end = 0, len(text)
    while pos < end:
        record: list[tuple[str, bool]] = []
        while True:
            match = fields.match(text, pos)
            assert match is not None  # the unquoted alternative matches the empty string
            quoted = match.group("q") if "q" in fields.groupindex else None
            record.append((quoted, True) if quoted is not None else (match.group("u"), False))
            pos = match.end()
            if pos < end and text[pos] == sep:
                pos += 1
                continue
            break
        if text.startswith("\r\n", pos):
            pos += 2
        elif pos < end:
            pos += 1
        if record != [("", False)]:  # Spark skips empty lines
            yield record


def spark_csv_batches(
    f: Any,
    encoding: str,
    names: list[str],
    sep: str,
    quote: str,
    escape: str,
    null_value: str,
    header: bool,
    multi_line: bool,
    batch_rows: int,
    skip: int = 0,
) -> Iterator[pa.RecordBatch]:
    """String columns ``names`` of a csv file; the first ``skip`` data rows left out."""
    fields = _field_regex(sep, quote, escape)
    unescape = (
        re.compile(rf"{re.escape(escape)}([{re.escape(quote + escape)}])") if escape else None
    )
    text = io.TextIOWrapper(f, encoding=encoding, newline="")
    chunks = [text.read()] if multi_line else text
    columns: list[list[str | None]] = [[] for _ in names]
    seen = 0
    for chunk in chunks:
        for record in _records(chunk, fields, sep):
            seen += 1
            if (header and seen == 1) or seen - header <= skip:
                continue
            if len(record) != len(names):
                raise MalformedRecordError(
                    NAME, f"record {seen} has {len(record)} fields, the schema {len(names)} columns"
                )
            for column, (value, quoted) in zip(columns, record, strict=True):
                if quoted and unescape is not None:
                    value = unescape.sub(r"\1", value)
                null = (not quoted and value == "") or value == null_value
                column.append(None if null else value)
            if len(columns[0]) >= batch_rows:
                yield _batch(columns, names)
                columns = [[] for _ in names]
    text.detach()
    if columns and columns[0]:
        yield _batch(columns, names)


def _batch(columns: list[list[str | None]], names: list[str]) -> pa.RecordBatch:
    return pa.record_batch([pa.array(c, pa.string()) for c in columns], names=names)
