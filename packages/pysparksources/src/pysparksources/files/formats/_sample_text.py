"""A sampled file's text for schema inference, read with memory bounded per file.

Inference never holds a whole file: it reads ``BLOCK_BYTES`` at a time and hands on text that
ends at a line end (JSON Lines, csv) or one record at a time (a multiLine JSON document's
objects, a multiLine csv record). What it holds at once is a block plus the record being
read, and a record (a line, an object of a JSON document, a csv record) may be at most
``RECORD_LIMIT`` characters: a larger one stops inference with a :class:`SchemaError` naming
the file and the fix. ``Budget`` stops the reading once the sample's bytes are read (see
``schemaSampleBytes``), whole records only, but never before the sample's first record.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from typing import Any

from pysparksources.errors import MalformedRecordError, SchemaError
from pysparksources.files import NAME
from pysparksources.files.config import ReaderOptions
from pysparksources.files.formats._csv_records import escape_in_quotes, record_parser

__all__ = [
    "BLOCK_BYTES",
    "RECORD_LIMIT",
    "Budget",
    "csv_records",
    "json_document_records",
    "json_lines",
    "line_blocks",
]

BLOCK_BYTES = 8 * 1024 * 1024
RECORD_LIMIT = 64 * 1024 * 1024
_STRUCTURE = re.compile(r"""[{}\[\]"']""")
_STRINGS = {
    '"': re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL),
    "'": re.compile(r"'(?:[^'\\]|\\.)*'", re.DOTALL),
}
_SPACE = re.compile(r"[ \t\r\n]*")
_LINE_ENDS = re.compile(r"\r\n|\r|\n")  # Spark's, without lineSep


class Budget:
    """The bytes the sample may still read. Spent only once a record has been typed (the
    sample's first record is always read whole); readers check it between records, so a
    record begun is read to its end."""

    def __init__(self, limit: int) -> None:
        self.remaining = limit
        self.started = False  # set by the caller once it has typed a record

    @property
    def spent(self) -> bool:
        return self.started and self.remaining <= 0


def _too_large(where: str, what: str) -> SchemaError:
    return SchemaError(
        NAME,
        f"cannot infer a schema from {where}: {what} is over {RECORD_LIMIT // 2**20} MiB, "
        "more than inference holds at once; give the schema with .schema(...)",
    )


def _blocks(f: Any, encoding: str, budget: Budget) -> Iterator[str]:
    """The file's text, BLOCK_BYTES of it at a time (counted against the budget)."""
    decoder = codecs.getincrementaldecoder(encoding)()
    while True:
        # Up to the budget while it lasts; past it only to finish a record or find the first.
        size = min(BLOCK_BYTES, budget.remaining) if budget.remaining > 0 else BLOCK_BYTES
        raw: bytes = f.read(size)
        budget.remaining -= len(raw)
        text = decoder.decode(raw, final=not raw)
        if text:
            yield text
        if not raw:
            return


def _space_end(text: str, pos: int) -> int:
    """The first position from ``pos`` that is not JSON white space."""
    space = _SPACE.match(text, pos)
    return space.end() if space else pos


def line_blocks(f: Any, encoding: str, budget: Budget, where: str) -> Iterator[str]:
    """The file's text in pieces that end where a line ends (\\n, \\r\\n or \\r; the last
    piece at the end of the file), until the budget is spent."""
    carry = ""
    for text in _blocks(f, encoding, budget):
        text = carry + text
        cut = max(text.rfind("\n"), text.rfind("\r")) + 1
        carry = text[cut:]
        if len(carry) > RECORD_LIMIT:
            raise _too_large(where, "a line")
        if cut:
            yield text[:cut]
            if budget.spent:
                return
    if carry:
        yield carry


def json_lines(piece: str) -> list[str]:
    """The lines of a piece of :func:`line_blocks`, endings cut off."""
    return _LINE_ENDS.split(piece)


def _value_end(text: str, start: int, depth: int) -> tuple[int | None, int, int]:
    """Scan the object or array in ``text`` from ``start`` (``depth`` brackets open there):
    (its end, or None when the text ends first; where to go on; the depth there)."""
    pos = start
    while True:
        found = _STRUCTURE.search(text, pos)
        if found is None:
            return None, len(text), depth
        char = found.group()
        if char in _STRINGS:
            string = _STRINGS[char].match(text, found.start())
            if string is None:  # not closed yet: go on from its start with more text
                return None, found.start(), depth
            pos = string.end()
            continue
        depth += 1 if char in "{[" else -1
        pos = found.end()
        if depth == 0:
            return pos, pos, 0


def json_document_records(f: Any, encoding: str, budget: Budget, where: str) -> Iterator[str]:
    """The records of a multiLine JSON document, one text at a time.

    An array's objects are handed on one by one, so an array of a million objects is never
    held whole; any other document is one record (an object, or text that is not JSON).
    :class:`MalformedRecordError` when the array holds something other than objects or is
    not closed: the file is then malformed as a whole, as in Spark. Once the budget is spent
    the rest of the file is not read.
    """
    blocks = _blocks(f, encoding, budget)
    pos, text = _skip_space("", 0, blocks)
    if pos >= len(text):
        return  # an empty document: no records
    if text[pos] != "[":
        yield _whole(text[pos:], blocks, where)
        return
    pos, text = _skip_space(text, pos + 1, blocks)
    if pos < len(text) and text[pos] == "]":
        return  # an empty array: no records
    while True:
        if pos >= len(text) or text[pos] != "{":
            raise MalformedRecordError(NAME, "the document's array holds a non-object")
        record, text, pos = _object(text, pos, blocks, where)
        yield record
        if budget.spent:
            return
        pos, text = _skip_space(text, pos, blocks)
        if pos < len(text) and text[pos] == "]":
            return
        if pos >= len(text) or text[pos] != ",":
            raise MalformedRecordError(NAME, "the document's array is not closed")
        pos, text = _skip_space(text, pos + 1, blocks)


def _skip_space(text: str, pos: int, blocks: Iterator[str]) -> tuple[int, str]:
    """The next position that is not white space (reading on as needed), and its text."""
    while True:
        pos = _space_end(text, pos)
        if pos < len(text):
            return pos, text
        more = next(blocks, None)
        if more is None:
            return pos, text
        text, pos = more, 0


def _object(text: str, start: int, blocks: Iterator[str], where: str) -> tuple[str, str, int]:
    """(the object at ``text[start]``, the text it ends in, the position after it)."""
    end, pos, depth = _value_end(text, start, 0)
    while end is None:
        if len(text) - start > RECORD_LIMIT:
            raise _too_large(where, "an object of the document")
        more = next(blocks, None)
        if more is None:
            raise MalformedRecordError(NAME, "an object of the document is not closed")
        text, pos, start = text[start:] + more, pos - start, 0
        end, pos, depth = _value_end(text, pos, depth)
    return text[start:end], text, end


def _whole(text: str, blocks: Iterator[str], where: str) -> str:
    """A document that is not an array: its whole text, at most RECORD_LIMIT of it."""
    parts, size = [text], len(text)
    for more in blocks:
        parts.append(more)
        size += len(more)
        if size > RECORD_LIMIT:
            raise _too_large(where, "the document")
    return "".join(parts)


def csv_records(
    f: Any, opts: ReaderOptions, budget: Budget, where: str
) -> Iterator[tuple[list[str | None], str]]:
    """Every record of a csv file (the header too): values and text, as
    :func:`~pysparksources.files.formats._csv_records.records_as_configured` gives them, streamed.

    With multiLine a record may span lines: each block's last record is held back and parsed
    again with the next block, as the block may have cut it.
    """
    escape = escape_in_quotes(opts.quote, opts.escape)
    parse = record_parser(opts.sep, opts.quote, escape, opts.null_value)
    if not opts.multi_line:
        for piece in line_blocks(f, opts.encoding, budget, where):
            for line in _LINE_ENDS.split(piece):
                for values, raw, _ in parse(line):
                    yield values, raw
        return
    carry = ""
    for block in _blocks(f, opts.encoding, budget):
        text = carry + block
        held: tuple[list[str | None], str] | None = None
        last = len(text)  # where the held record starts
        for values, raw, start in parse(text):
            if held is not None:
                yield held
            held, last = (values, raw), start
        carry = text[last:]
        if len(carry) > RECORD_LIMIT:
            raise _too_large(where, "a record")
        if budget.spent:
            return
    for values, raw, _ in parse(carry):
        yield values, raw
