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
import pyarrow.compute as pc

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
    """The file holds text pyarrow's reader reads unlike Spark's: the escape character, or a
    quoted value whose quote is followed by more text (see :class:`EscapeWatch`)."""


# A file's text held back between reads at most: a quoted value still open at a read's end is
# held until it closes; one longer than this sends the file to Python's reader, to be safe.
_HELD_LIMIT = 16 * 1024 * 1024


def _re2_char(text: bytes) -> str:
    return "".join(f"\\x{{{byte:02x}}}" for byte in text)


class EscapeWatch:
    """A readable file that raises :class:`EscapeSeen` when a read returns text pyarrow would
    read unlike univocity: the escape character, or a value that starts with a quote (at the
    start of a line or after a separator) whose next quote is followed by something else than
    a separator or a line end (``"say ""hi"" now"``, ``"q"x``, ``"ab" ,``): univocity keeps such
    a field's text, quotes included, where pyarrow unquotes it; or, without multiLine, a quote
    still open at the end of its line (Spark reads each line alone).

    The search runs in pyarrow's RE2 (linear, a few ms for a block of 8 MB): Python's ``re``
    would cost ten times that on a file of quoted values.
    """

    def __init__(self, raw: Any, escape: bytes, quote: bytes, sep: bytes, multi_line: bool) -> None:
        self._raw = raw
        self._escape = escape
        self._quote = quote
        self._bounds = (sep, b"\r", b"\n")
        self._pattern: str | None = None
        self._held = b""
        if len(quote) == 1 and len(sep) == 1:
            q, ends = _re2_char(quote), _re2_char(sep) + "\\r\\n"
            inside = f"[^{q}]*" if multi_line else f"[^{q}\\r\\n]*"
            unclosed = "" if multi_line else "|[\\r\\n]"
            self._pattern = f"[{ends}]{q}{inside}(?:{q}[^{ends}]{unclosed})"
            self._held = b"\n"  # the file's start is a line's
        self.closed = False

    def read(self, size: int = -1) -> bytes:
        data: bytes = self._raw.read(size)
        if self._escape and self._escape in data:
            raise EscapeSeen
        if self._pattern is not None and data:
            text = self._held + data
            found = pc.match_substring_regex(pa.array([text], pa.binary()), self._pattern)
            if found[0].as_py():
                raise EscapeSeen
            self._held = self._still_open(text)
            if len(self._held) > _HELD_LIMIT:
                raise EscapeSeen
        # At the end a quote closing the last value closes it, and one never closed runs to
        # the end in both readers: nothing held is left to decide.
        return data

    def _still_open(self, text: bytes) -> bytes:
        """The end of ``text`` the next read decides: a quoted value open at the end, or whose
        closing quote ends the text, from the character before its opening quote; else the
        last character (the next read's first quote may start a value)."""
        last = text.rfind(self._quote)
        opening = [last] if last > 0 and text[last - 1 : last] in self._bounds else []
        if last == len(text) - 1:  # it may close the value of the quote before it
            before = text.rfind(self._quote, 0, last)
            if before > 0 and text[before - 1 : before] in self._bounds:
                opening.append(before)
        return text[min(opening) - 1 :] if opening else text[-1:]

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True


def _field_regex(sep: str, quote: str, escape: str) -> re.Pattern[str]:
    """A field: a cleanly quoted value (``c``), the opening quote of any other quoted value
    (``o``, read by :func:`_quoted_value`), or an unquoted value (``u``)."""
    s, q, e = (re.escape(c) for c in (sep, quote, escape))
    ends = rf"(?={s}|\r\n|\n|\r|$)"
    unquoted = rf"(?P<u>[^{s}\r\n]*)"
    if not quote:
        return re.compile(unquoted)
    # Without an escape character (escape = quote), a doubled quote is one quote.
    inside = rf"(?:[^{q}{e}]|{e}[\s\S])*" if escape else rf"(?:[^{q}]|{q}{q})*"
    return re.compile(rf"{q}(?P<c>{inside}){q}{ends}|(?P<o>{q})|{unquoted}")


def _is_blank(ch: str) -> bool:
    """univocity's whitespace: any character from U+0001 to the space."""
    return "\0" < ch <= " "


def _next_of(chars: str, text: str, pos: int) -> int:
    """Where the first of ``chars`` is in ``text`` from ``pos`` (its length if nowhere)."""
    found = re.compile(f"[{re.escape(chars)}]").search(text, pos)  # re caches the pattern
    return found.start() if found else len(text)


def _field_end(text: str, pos: int, sep: str) -> int:
    """Where the field at ``pos`` ends when read as it stands: the next separator or line end."""
    return _next_of(sep + "\r\n", text, pos)


def _quoted_value(text: str, pos: int, sep: str, quote: str, escape: str) -> tuple[str, int]:
    """A quoted value that is not cleanly quoted, the way univocity reads it for Spark
    (unescapedQuoteHandling STOP_AT_DELIMITER): ``pos`` follows the opening quote; returns the
    value and where its field ends (a separator, a line end or the end of the text).

    Inside the quotes the escape character escapes the quote and itself; each quote after a
    quote is kept (the field ``"x""`` closed by one more quote reads ``x""``). A quote followed
    by anything but a separator, a line end or whitespace closes nothing: the field is then read
    as it stands to the next separator or line end, its quotes kept, what came before unescaped
    (``"say ""hi"" now"`` reads as written). Whitespace after the closing quote is dropped when
    the field ends there, and kept with the rest otherwise (``"ab" c`` reads as written). A
    quote never closed runs to the end of the text (of the line, unless multiLine).
    """
    escape = escape or quote
    # The character that escapes the escape character: none when quotes escape quotes.
    escape_escape = escape if escape != quote else ""
    out: list[str] = []
    prev = ""  # the character before, "" once it has been used up by an escape
    i, end = pos, len(text)
    while i < end:
        ch = text[i]
        if prev == quote and (ch == sep or ch in "\r\n" or _is_blank(ch)):
            return _after_closing_quote("".join(out), text, i, sep, quote)
        if ch != quote and ch != escape:
            if prev == quote:  # a quote that closes nothing
                stop = _field_end(text, i, sep)
                return quote + "".join(out) + quote + text[i:stop], stop
            if prev == escape:  # an escape before an ordinary character stays
                out.append(escape)
            stop = _next_of(quote + escape, text, i)
            out.append(text[i:stop])
            if stop == end:
                break
            prev, i = text[stop], stop + 1
            continue
        if escape_escape and ch == escape and prev == escape_escape:
            out.append(escape)
            prev = ""
        elif prev == escape and ch == quote:
            out.append(quote)
            prev = ""
        elif prev == quote and ch == quote:
            out.append(quote)
            prev = ch
        elif prev == quote:  # the escape character right after a quote: one that closes nothing
            stop = _field_end(text, i, sep)
            return quote + "".join(out) + quote + text[i:stop], stop
        else:
            prev = ch
        i += 1
    return "".join(out), end


def _after_closing_quote(value: str, text: str, pos: int, sep: str, quote: str) -> tuple[str, int]:
    """The value closed at ``pos``: blanks after the quote are dropped when the field ends after
    them; other text after them makes the field read as it stands."""
    stop = pos
    while stop < len(text) and _is_blank(text[stop]) and text[stop] not in (sep, "\r", "\n"):
        stop += 1
    if stop == len(text) or text[stop] in (sep, "\r", "\n"):
        return value, stop
    rest = _field_end(text, stop, sep)
    return quote + value + quote + text[pos:rest], rest


def _unescaper(quote: str, escape: str) -> Callable[[str], str]:
    """A cleanly quoted value's text unescaped: the escape character (the quote itself when
    there is none) before the quote or the escape character stands for that character."""
    if not quote:
        return lambda value: value
    pattern = re.compile(rf"{re.escape(escape or quote)}([{re.escape(quote + escape)}])")
    return lambda value: pattern.sub(r"\1", value)


def _records(
    text: str, fields: re.Pattern[str], sep: str, quote: str, escape: str
) -> Iterator[tuple[list[tuple[str, bool]], str, int]]:
    """Records of (value, quoted) from ``text``, each with its text and where it starts;
    records end at \\n, \\r\\n or \\r, and the text leaves the line ending out (Spark's
    corrupt-record text)."""
    unescape = _unescaper(quote, escape)
    pos, end = 0, len(text)
    groups = fields.groupindex
    while pos < end:
        start = pos
        record: list[tuple[str, bool]] = []
        while True:
            match = fields.match(text, pos)
            assert match is not None  # the unquoted alternative matches the empty string
            if "c" in groups and match.group("c") is not None:
                record.append((unescape(match.group("c")), True))
                pos = match.end()
            elif "o" in groups and match.group("o") is not None:
                value, pos = _quoted_value(text, match.end(), sep, quote, escape)
                record.append((value, True))
            else:
                record.append((match.group("u"), False))
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

    def parse(text: str) -> Iterator[tuple[list[str | None], str, int]]:
        for record, raw, start in _records(text, fields, sep, quote, escape):
            values: list[str | None] = []
            for value, quoted in record:
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
