"""PERMISSIVE and DROPMALFORMED: the rest of a csv or json file read past malformed records.

pyfile reads csv and json with pyarrow's fast readers; the first record they cannot parse or
convert sends the rest of the file here (the rows already read stay read). Where a record is
one line (json, csv without multiLine) the lines go back to the fast reader in chunks, and a
chunk that fails is halved until the malformed lines stand alone, so a file with a few bad
records is still read at nearly the fast readers' speed. Small pieces, and multiLine csv, are
parsed one record at a time in Python. The rules are Spark's (the conformance suite compares
them with its readers on the same files):

- csv: a record whose field count differs from the schema's, or with a field that does not
  convert, is malformed; its other fields keep their values and missing ones are null.
- json: a line that is not JSON, or whose first value is neither an object nor an array of
  objects, is malformed with every field null. A value of the wrong type nulls only its field
  (in a nested object only the nested field; an array or map with a bad element is null
  whole). Text after a line's first value is ignored.
- PERMISSIVE keeps a malformed record and puts its text, line ending cut off, into the
  corrupt-record column if the schema has one; DROPMALFORMED leaves the record out.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pyarrow as pa

from pysparksources.errors import MalformedRecordError
from pysparksources.files import NAME
from pysparksources.files.config import ReaderOptions
from pysparksources.files.formats._csv_records import (
    escape_in_quotes,
    spark_csv_records,
    split_records,
    text_lines,
    whole_text,
)
from pysparksources.files.formats._json_values import (
    RawTextNeeded,
    arrow_read_type,
    json_objects,
    json_value,
)
from pysparksources.files.values.conversions import Parsing, conform

__all__ = ["CONVERSION_ERRORS", "FastParse", "document_batches", "record_batches"]

# What a record that does not parse or convert raises, in pyarrow's readers and in conform.
CONVERSION_ERRORS = (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError, OverflowError)
# Parses UTF-8 lines with the fast reader into arrays of the parsed schema's types; raises
# one of CONVERSION_ERRORS if any line is malformed.
FastParse = Callable[[bytes], list[pa.Array]]
_CHUNK_LINES = 65_536  # lines given back to the fast reader at once
_ALONE_LINES = 32  # a failing piece this small is parsed record by record
_BATCH_RECORDS = 4096  # records of one batch on the record-by-record path


class _Records:
    """Parsed records on their way into one batch: read-typed values, bad marks, texts."""

    def __init__(self, schema: pa.Schema) -> None:
        self.columns: list[list[Any]] = [[] for _ in schema]
        self.bad: list[bool] = []
        self.texts: list[str] = []

    def add(self, values: list[Any], bad: bool, text: str) -> None:
        for column, value in zip(self.columns, values, strict=True):
            column.append(value)
        self.bad.append(bad)
        self.texts.append(text)

    def __len__(self) -> int:
        return len(self.bad)


class _Reading:
    """What every piece of one file is read with."""

    def __init__(
        self,
        parsed: pa.Schema,
        opts: ReaderOptions,
        parsing: Parsing,
        corrupt_column: str | None,
    ) -> None:
        self.parsed = parsed
        self.opts = opts
        self.parsing = parsing
        self.corrupt_column = corrupt_column
        self.read_types = [pa.string() for _ in parsed]
        if opts.format == "json":
            self.read_types = [arrow_read_type(fld.type) for fld in parsed]
        self.names = {name: name for name in parsed.names}
        fields = list(parsed)
        if corrupt_column is not None:
            self.names[corrupt_column] = corrupt_column
            fields.append(pa.field(corrupt_column, pa.string()))
        self.schema = pa.schema(fields)

    def records(self, lines: Iterable[str]) -> Iterator[tuple[list[Any], bool, str]]:
        """Lines (json, or csv one record per line) parsed one record at a time."""
        if self.opts.format == "csv":
            opts = self.opts
            escape = escape_in_quotes(opts.quote, opts.escape)
            return self.csv_rows(
                split_records(lines, opts.sep, opts.quote, escape, opts.null_value)
            )
        return self._json(lines)

    def csv_rows(
        self, records: Iterable[tuple[list[str | None], str]]
    ) -> Iterator[tuple[list[Any], bool, str]]:
        """csv records cut or padded to the schema's width; another width is malformed."""
        width = len(self.parsed)
        for values, text in records:
            yield (values + [None] * width)[:width], len(values) != width, text

    def _json(self, lines: Iterable[str]) -> Iterator[tuple[list[Any], bool, str]]:
        """One entry per line, except that an array of objects gives one per object."""
        for line in lines:
            try:
                objects = json_objects(line)
            except ValueError:
                yield [None] * len(self.parsed), True, line
                continue
            try:
                rows, bad = self._json_rows(objects)
            except RawTextNeeded:
                rows, bad = self._json_rows(json_objects(line, keep_text=True))
            # One bad object of an array makes the whole line malformed, every row of it.
            for values in rows:
                yield values, bad, line

    def _json_rows(self, objects: list[dict[str, Any]]) -> tuple[list[list[Any]], bool]:
        rows, bad = [], False
        for record in objects:
            values = []
            for fld, read_type in zip(self.parsed, self.read_types, strict=True):
                value, fits = _fitted(record.get(fld.name), read_type)
                values.append(value)
                bad = bad or not fits
            rows.append(values)
        return rows, bad

    def batches(self, records: Iterable[tuple[list[Any], bool, str]]) -> Iterator[pa.RecordBatch]:
        pending = _Records(self.parsed)
        for values, bad, text in records:
            pending.add(values, bad, text)
            if len(pending) >= _BATCH_RECORDS:
                yield self._finish(pending)
                pending = _Records(self.parsed)
        if len(pending):
            yield self._finish(pending)

    def fast(self, arrays: list[pa.Array]) -> pa.RecordBatch:
        """A batch the fast reader parsed: no record in it is malformed."""
        if self.corrupt_column is not None:
            length = len(arrays[0]) if arrays else 0
            arrays = [*arrays, pa.nulls(length, pa.string())]
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def _finish(self, records: _Records) -> pa.RecordBatch:
        bad = records.bad
        arrays = [
            _converted(values, read_type, fld.type, self.parsing, bad)
            for values, read_type, fld in zip(
                records.columns, self.read_types, self.parsed, strict=True
            )
        ]
        if self.corrupt_column is not None:
            keep = self.opts.mode == "PERMISSIVE"
            texts = [
                text if malformed and keep else None
                for text, malformed in zip(records.texts, bad, strict=True)
            ]
            arrays.append(pa.array(texts, pa.string()))
        if self.opts.mode == "FAILFAST" and any(bad):
            text = records.texts[bad.index(True)]
            raise MalformedRecordError(NAME, f"malformed record: {text[:200]!r}")
        batch = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        if self.opts.mode == "DROPMALFORMED" and any(bad):
            batch = batch.filter(pa.array([not malformed for malformed in bad]))
        return batch

    def pieces(self, lines: list[str], fast: FastParse) -> Iterator[pa.RecordBatch]:
        """``lines`` through the fast reader, halved around the malformed ones."""
        try:
            arrays = fast(("\n".join(lines) + "\n").encode("utf-8"))
            if self.opts.format == "json" and arrays and len(arrays[0]) != len(lines):
                # pyarrow reads every object of a line; Spark only the first.
                raise MalformedRecordError(NAME, "a line holds more than one record")
        except CONVERSION_ERRORS:
            if len(lines) <= _ALONE_LINES:
                yield from self.batches(self.records(lines))
                return
            middle = len(lines) // 2
            yield from self.pieces(lines[:middle], fast)
            yield from self.pieces(lines[middle:], fast)
            return
        yield self.fast(arrays)


def record_batches(
    f: Any,
    parsed: pa.Schema,
    opts: ReaderOptions,
    parsing: Parsing,
    corrupt_column: str | None,
    skip: int,
    fast: FastParse,
) -> Iterator[tuple[pa.RecordBatch, dict[str, str]]]:
    """Batches of ``parsed``'s columns (already its types), plus ``corrupt_column`` if given.

    ``skip`` records at the start of the file are left out: the fast reader read them (it
    reads whole lines, so in line-based files they are the first ``skip`` non-empty lines).
    """
    reading = _Reading(parsed, opts, parsing, corrupt_column)
    if opts.format == "csv" and opts.multi_line:
        escape = escape_in_quotes(opts.quote, opts.escape)
        records = spark_csv_records(
            f, opts.encoding, opts.sep, opts.quote, escape, opts.null_value, opts.header, True
        )
        for batch in reading.batches(reading.csv_rows(itertools.islice(records, skip, None))):
            yield batch, reading.names
        return
    lines = _nonblank(f, opts)
    if opts.format == "csv" and opts.header:
        next(lines, None)
    lines = itertools.islice(lines, skip, None)
    while chunk := list(itertools.islice(lines, _CHUNK_LINES)):
        for batch in reading.pieces(chunk, fast):
            yield batch, reading.names


def document_batches(
    f: Any,
    parsed: pa.Schema,
    opts: ReaderOptions,
    parsing: Parsing,
    corrupt_column: str | None,
) -> Iterator[tuple[pa.RecordBatch, dict[str, str]]]:
    """A json file read with multiLine: one JSON document, its text the malformed record's.

    As in Spark, the document is the file's first JSON value (what follows it is ignored), an
    object or an array of objects; an empty file has no rows. The file is read whole.
    """
    reading = _Reading(parsed, opts, parsing, corrupt_column)
    document = whole_text(f, opts.encoding)
    if document.strip():
        for batch in reading.batches(reading.records([document])):
            yield batch, reading.names


def _nonblank(f: Any, opts: ReaderOptions) -> Iterator[str]:
    """The file's lines that hold a record (Spark skips empty ones, and json blank ones)."""
    lines = text_lines(f, opts.encoding)
    if opts.format == "csv":
        return (line for line in lines if line)
    return (line for line in lines if line.strip())


def _fitted(value: Any, dtype: pa.DataType) -> tuple[Any, bool]:
    """``value`` as ``dtype``, or None where it does not fit (an object field by field)."""
    if pa.types.is_struct(dtype) and isinstance(value, dict):
        out, fits = {}, True
        for fld in dtype:
            out[fld.name], field_fits = _fitted(value.get(fld.name), fld.type)
            fits = fits and field_fits
        return out, fits
    try:
        return json_value(value, dtype), True
    except MalformedRecordError:
        return None, False


def _converted(
    values: list[Any],
    read_type: pa.DataType,
    target: pa.DataType,
    parsing: Parsing,
    bad: list[bool],
) -> pa.Array:
    """``values`` as ``target``; a value that does not convert is null and marks its record."""
    try:
        return conform(pa.array(values, read_type), target, parsing)
    except CONVERSION_ERRORS:
        pass
    pieces = []
    for index, value in enumerate(values):
        try:
            pieces.append(conform(pa.array([value], read_type), target, parsing))
        except CONVERSION_ERRORS:
            pieces.append(pa.nulls(1, target))
            bad[index] = True
    return pa.concat_arrays(pieces)
