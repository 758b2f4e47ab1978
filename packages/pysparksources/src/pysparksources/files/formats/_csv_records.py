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

import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from pysparksources.errors import MalformedRecordError
from pysparksources.files import NAME
from pysparksources.files.formats._text_input import text_lines, whole_text

if TYPE_CHECKING:
    from pysparksources.files.config import ReaderOptions

__all__ = [
    "EscapeSeen",
    "EscapeWatch",
    "escape_in_quotes",
    "record_parser",
    "records_as_configured",
    "spark_csv_batches",
    "spark_csv_records",
    "split_records",
]


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
    # Without an escape character (escape = quote), a doubled quote is one quote.
    inside = rf"(?:[^{q}{e}]|{e}[\s\S])*" if escape else rf"(?:[^{q}]|{q}{q})*"
    # A quote never closed runs to the end of the text (of the line, unless multiLine): the
    # record then has fewer fields, which makes it malformed, as in Spark.
    return re.compile(rf"{q}(?P<q>{inside}){q}{ends}|{q}(?P<o>[\s\S]*)\Z|{unquoted}")


def _records(
    text: str, fields: re.Pattern[str], sep: str
) -> Iterator[tuple[list[tuple[str, bool]], str, int]]:
    """Records of (value, quoted) from ``text``, each with its text and where it starts;
    records end at \\n, \\r\\n or \\r, and the text leaves the line ending out (Spark's
    corrupt-record text)."""
    pos, end = 0, len(text)
    while pos < end:
        start = pos
        record: list[tuple[str, bool]] = []
        while True:
            match = fields.match(text, pos)
            assert match is not None  # the unquoted alternative matches the empty string
            quoted = match.group("q") if "q" in fields.groupindex else None
            if quoted is None and "o" in fields.groupindex:
                quoted = match.group("o")
            record.append((quoted, True) if quoted is not None else (match.group("u"), False))
            pos = match.end()
            if pos < end and text[pos] == sep:
                pos += 1
                continue
            break
        raw = text[start:pos]
        if text.startswith("\r\n", pos):
            pos += 2
        elif pos < end:
            pos += 1
        if record != [("", False)]:  # Spark skips empty lines
            yield record, raw.rstrip("\r\n"), start


def record_parser(
    sep: str, quote: str, escape: str, null_value: str
) -> Callable[[str], Iterator[tuple[list[str | None], str, int]]]:
    """A function giving each record of a text: its values (Spark's null rules applied), its
    text and where it starts in the text."""
    fields = _field_regex(sep, quote, escape)
    unescape = (
        re.compile(rf"{re.escape(escape or quote)}([{re.escape(quote + escape)}])")
        if quote
        else None
    )

    def parse(text: str) -> Iterator[tuple[list[str | None], str, int]]:
        for record, raw, start in _records(text, fields, sep):
            values: list[str | None] = []
            for value, quoted in record:
                if quoted and unescape is not None:
                    value = unescape.sub(r"\1", value)
                null = (not quoted and value == "") or value == null_value
                values.append(None if null else value)
            yield values, raw, start

    return parse


def split_records(
    chunks: Iterable[str], sep: str, quote: str, escape: str, null_value: str
) -> Iterator[tuple[list[str | None], str]]:
    """Each record's values (Spark's null rules applied) and its text, from ``chunks``: the
    file's lines (their endings cut off), or with multiLine the whole file as one chunk."""
    parse = record_parser(sep, quote, escape, null_value)
    for chunk in chunks:
        for values, raw, _ in parse(chunk):
            yield values, raw


def escape_in_quotes(quote: str, escape: str) -> str:
    """The escape character to honour inside quotes; none when it is the quote itself, which
    then escapes by doubling (pyarrow's double_quote, the doubled-quote rule of _field_regex)."""
    return "" if escape == quote else escape


def spark_csv_records(
    f: Any,
    encoding: str,
    sep: str,
    quote: str,
    escape: str,
    null_value: str,
    header: bool,
    multi_line: bool,
) -> Iterator[tuple[list[str | None], str]]:
    """Each data record's values and its text, header left out (see :func:`split_records`)."""
    chunks = [whole_text(f, encoding)] if multi_line else text_lines(f, encoding)
    records = split_records(chunks, sep, quote, escape, null_value)
    return itertools.islice(records, 1 if header else 0, None)


def records_as_configured(f: Any, opts: ReaderOptions) -> Iterator[tuple[list[str | None], str]]:
    """Every record of a csv file, the header too, read with the source's csv options."""
    return spark_csv_records(
        f,
        opts.encoding,
        opts.sep,
        opts.quote,
        escape_in_quotes(opts.quote, opts.escape),
        opts.null_value,
        header=False,
        multi_line=opts.multi_line,
    )


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
    records = spark_csv_records(f, encoding, sep, quote, escape, null_value, header, multi_line)
    columns: list[list[str | None]] = [[] for _ in names]
    for seen, (values, _) in enumerate(records, 1):
        if seen <= skip:
            continue
        if len(values) != len(names):
            raise MalformedRecordError(
                NAME,
                f"record {seen + header} has {len(values)} fields, the schema {len(names)} columns",
            )
        for column, value in zip(columns, values, strict=True):
            column.append(value)
        if len(columns[0]) >= batch_rows:
            yield _batch(columns, names)
            columns = [[] for _ in names]
    if columns and columns[0]:
        yield _batch(columns, names)


def _batch(columns: list[list[str | None]], names: list[str]) -> pa.RecordBatch:
    return pa.record_batch([pa.array(c, pa.string()) for c in columns], names=names)
