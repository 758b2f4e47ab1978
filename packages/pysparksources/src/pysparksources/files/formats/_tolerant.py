"""PERMISSIVE and DROPMALFORMED: the rest of a file of text records read past malformed ones.

What csv and json share (:class:`RecordsFormat`). pyfile reads them with pyarrow's fast
readers; the first record they cannot parse or convert sends the rest of the file here (the
rows already read stay read). Where a record is one line the lines go back to the fast reader
in chunks, and a chunk that fails is halved until the malformed lines stand alone, so a file
with a few bad records is still read at nearly the fast readers' speed. Small pieces are
parsed one record at a time in Python, by the format (:meth:`RecordsFormat.parse_lines`). The
rules are Spark's (the conformance suite compares them with its readers on the same files);
each format's module says what makes one of its records malformed.

PERMISSIVE keeps a malformed record and puts its text, line ending cut off, into the
corrupt-record column if the schema has one; DROPMALFORMED leaves the record out; FAILFAST
fails the file at the first one.
"""

from __future__ import annotations

import io
import itertools
from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from pysparksources.errors import MalformedRecordError
from pysparksources.files import NAME
from pysparksources.files.formats._file_format import (
    CONVERSION_ERRORS,
    Assemble,
    FileFormat,
    FileSplit,
)
from pysparksources.files.values.conversions import Parsing, conform

if TYPE_CHECKING:
    from pysparksources.files.config import InferenceOptions, ReaderOptions
    from pysparksources.files.storage.folder_listing import FileEntry

__all__ = ["FastParse", "Reading", "Record", "RecordsFormat", "fast_then_records"]

# Parses UTF-8 lines with the fast reader into arrays of the parsed schema's types; raises
# one of CONVERSION_ERRORS if any line is malformed.
FastParse = Callable[[bytes], list[pa.Array]]
# One record: its values in the read types, whether it is malformed, and its text.
Record = tuple[list[Any], bool, str]
_CHUNK_LINES = 65_536  # lines given back to the fast reader at once
_ALONE_LINES = 32  # a failing piece this small is parsed record by record
_BATCH_RECORDS = 4096  # records of one batch on the record-by-record path


class RecordsFormat(FileFormat):
    """A format of text records (csv, json): Spark's parse modes apply."""

    parse_modes = True

    @abstractmethod
    def read_types(self, parsed: pa.Schema) -> list[pa.DataType]:
        """The types one record's values are parsed into, before they are converted."""

    @abstractmethod
    def parse_lines(self, lines: Iterable[str], reading: Reading) -> Iterator[Record]:
        """Lines (each holding whole records) parsed one record at a time."""

    @abstractmethod
    def record_lines(self, f: Any, opts: ReaderOptions) -> Iterator[str]:
        """The file's lines that hold records, in order (blank lines and a header left out)."""

    def sample(self, files: list[FileEntry], inference: InferenceOptions) -> list[FileEntry]:
        """The first files by path: up to schemaSampleFiles, and only as many as
        schemaSampleBytes reaches into (reading stops inside the last one)."""
        taken = files[: inference.sample_files]
        size = 0
        for count, entry in enumerate(taken):
            if size >= inference.sample_bytes:
                return taken[:count]
            size += entry.size
        return taken

    def reads_fast_first(self, parsed: pa.Schema, opts: ReaderOptions) -> bool:
        """Whether the fast reader reads the file until its first malformed record."""
        return True

    def piece_problem(self, arrays: list[pa.Array], lines: list[str]) -> str | None:
        """What makes a piece the fast reader read malformed as a whole, besides a failure."""
        return None

    def rest(
        self, f: Any, reading: Reading, skip: int, fast: FastParse
    ) -> Iterator[pa.RecordBatch]:
        """The file's records after the first ``skip`` (the fast reader read those), read past
        the malformed ones; ``f`` is at its start."""
        lines = itertools.islice(self.record_lines(f, reading.opts), skip, None)
        while chunk := list(itertools.islice(lines, _CHUNK_LINES)):
            yield from reading.pieces(chunk, fast)

    def read(
        self,
        f: Any,
        split: FileSplit,
        parsed: pa.Schema,
        opts: ReaderOptions,
        parsing: Parsing,
        corrupt_column: str | None,
        assemble: Assemble,
    ) -> Iterator[pa.RecordBatch]:
        tolerant = opts.mode != "FAILFAST"
        done = 0
        if self.reads_fast_first(parsed, opts):
            try:
                for batch, names in self.batches(f, split, parsed, opts):
                    out = assemble(batch, names)
                    done += out.num_rows
                    yield out
                return
            except CONVERSION_ERRORS:
                if not tolerant:
                    raise
        f.seek(0)
        reading = Reading(self, parsed, opts, parsing, corrupt_column)
        for batch in self.rest(f, reading, done, self._fast_lines(parsed, opts, parsing)):
            yield assemble(batch, reading.names)

    def _fast_lines(self, parsed: pa.Schema, opts: ReaderOptions, parsing: Parsing) -> FastParse:
        """The fast reader on a piece of a file's lines (UTF-8, no header).

        The mode stays tolerant, so the json reader fails at once on what pyarrow refuses
        instead of parsing the piece in Python first: the caller halves a piece that fails
        anyway.
        """
        piece_opts = replace(opts, header=False, encoding="utf-8")

        def parse(data: bytes) -> list[pa.Array]:
            pieces = self.batches(io.BytesIO(data), FileSplit("", len(data)), parsed, piece_opts)
            batches = list(pieces)
            return [
                conform(
                    pa.chunked_array([b.column(names[fld.name]) for b, names in batches])
                    if batches
                    else pa.array([], fld.type),
                    fld.type,
                    parsing,
                )
                for fld in parsed
            ]

        return parse


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


class Reading:
    """What every piece of one file is read with, past its malformed records."""

    def __init__(
        self,
        fmt: RecordsFormat,
        parsed: pa.Schema,
        opts: ReaderOptions,
        parsing: Parsing,
        corrupt_column: str | None,
    ) -> None:
        self.format = fmt
        self.parsed = parsed
        self.opts = opts
        self.parsing = parsing
        self.corrupt_column = corrupt_column
        self.read_types = fmt.read_types(parsed)
        self.names = {name: name for name in parsed.names}
        fields = list(parsed)
        if corrupt_column is not None:
            self.names[corrupt_column] = corrupt_column
            fields.append(pa.field(corrupt_column, pa.string()))
        self.schema = pa.schema(fields)

    def batches(self, records: Iterable[Record]) -> Iterator[pa.RecordBatch]:
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
            problem = self.format.piece_problem(arrays, lines)
            if problem is not None:
                raise MalformedRecordError(NAME, problem)
        except CONVERSION_ERRORS:
            if len(lines) <= _ALONE_LINES:
                yield from self.batches(self.format.parse_lines(lines, self))
                return
            middle = len(lines) // 2
            yield from self.pieces(lines[:middle], fast)
            yield from self.pieces(lines[middle:], fast)
            return
        yield self.fast(arrays)


def fast_then_records(
    f: Any,
    fast: Callable[[], Iterator[pa.RecordBatch]] | None,
    records: Callable[[int], Iterator[pa.RecordBatch]],
) -> Iterator[pa.RecordBatch]:
    """``fast()``'s batches until it fails at a record (one of CONVERSION_ERRORS), then
    ``records(skip)``'s: the file read again from its start, the first ``skip`` records left
    out. Without ``fast``, ``records(0)``'s."""
    done = 0
    if fast is not None:
        try:
            for batch in fast():
                done += batch.num_rows
                yield batch
            return
        except CONVERSION_ERRORS:
            f.seek(0)
    yield from records(done)


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
