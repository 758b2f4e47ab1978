"""Parse one file split into Arrow record batches with Spark's exact Arrow schema.

Every format streams: parquet by row group batches, orc by stripe, csv and json through
pyarrow's incremental readers, text by fixed-size chunks; a task never holds a whole large
file. Columns are matched by name (csv: by position), cast to the user's schema, and
``col=value`` partition folders fill the columns the file itself lacks.
"""

from __future__ import annotations

import codecs
import io
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from pysparksources._core.arrow import json_batches
from pysparksources._redact import scrubbed
from pysparksources.errors import (
    CorruptFileError,
    DataLossError,
    MalformedRecordError,
    PySparkSourcesError,
    SchemaChangedError,
)
from pysparksources.files import NAME
from pysparksources.files.config import ReaderOptions
from pysparksources.files.formats._csv_records import (
    EscapeSeen,
    EscapeWatch,
    escape_in_quotes,
    spark_csv_batches,
)
from pysparksources.files.formats._json_values import arrow_read_type, has_map, python_batches
from pysparksources.files.formats._lent_file import LentFile
from pysparksources.files.formats._orc_calendar import julian_to_gregorian
from pysparksources.files.formats._orc_timestamps import OrcTimestamps
from pysparksources.files.formats._tolerant import (
    CONVERSION_ERRORS,
    FastParse,
    document_batches,
    record_batches,
)
from pysparksources.files.storage.filesystem import FileLocation
from pysparksources.files.storage.partition_folders import NULL_PARTITION
from pysparksources.files.values.conversions import Parsing, check_datetime_pattern, conform
from pysparksources.files.values.zones import session_time_zone

# (open file, its URL, split, target schema, parsing) -> the split's batches as the target.
FitSplit = Callable[[Any, str, "FileSplit", pa.Schema, Parsing], Iterator[pa.RecordBatch]]

__all__ = [
    "BATCH_ROWS",
    "FileSplit",
    "check_datetime_pattern",
    "read_split",
]

log = logging.getLogger(__name__)
BATCH_ROWS = 1 << 16
BLOCK_BYTES = 8 << 20


@dataclass(frozen=True)
class FileSplit:
    """A file, or a byte range of one (parquet/orc units starting in it), for one task."""

    path: str
    size: int
    start: int = 0
    length: int | None = None
    partition_values: dict[str, str] = field(default_factory=dict)

    @property
    def whole(self) -> bool:
        return self.start == 0 and (self.length is None or self.length >= self.size)


def constant_column(
    value: str | None, target: pa.DataType, length: int, parsing: Parsing
) -> pa.Array:
    """A partition column: the folder's value on every row."""
    if value is None or value == NULL_PARTITION:
        return pa.nulls(length, target)
    return conform(pa.array([value] * length, pa.string()), target, parsing)


# -- per-format batch iterators --------------------------------------------------------
def _match_names(available: list[str], wanted: list[str]) -> dict[str, str]:
    """wanted column -> file column, exact name first, then case-insensitively (Spark)."""
    lower = {name.lower(): name for name in available}
    found = {}
    for name in wanted:
        if name in available:
            found[name] = name
        elif name.lower() in lower:
            found[name] = lower[name.lower()]
    return found


def _every_column(available: list[str], wanted: pa.Schema | None) -> dict[str, str]:
    """Wanted name -> the file's name; every column of the file as it is without ``wanted``."""
    if wanted is None:
        return {name: name for name in available}
    return _match_names(available, wanted.names)


def _parquet(
    f: Any, split: FileSplit, wanted: pa.Schema | None, opts: ReaderOptions
) -> Iterator[Any]:
    import pyarrow.parquet as pq

    # Spark writes INT96 timestamps by default; nanoseconds would overflow outside 1677-2262.
    pf = pq.ParquetFile(f, coerce_int96_timestamp_unit="us")
    groups = list(range(pf.metadata.num_row_groups))
    if not split.whole:
        groups = [g for g in groups if _in_range(_row_group_mid(pf.metadata, g), split)]
    if not groups:
        return
    names = _every_column(pf.schema_arrow.names, wanted)
    columns = sorted(set(names.values()))
    for batch in pf.iter_batches(batch_size=BATCH_ROWS, row_groups=groups, columns=columns):
        yield batch, names


def _row_group_mid(meta: Any, index: int) -> int:
    group = meta.row_group(index)
    column = group.column(0)
    start = column.dictionary_page_offset or column.data_page_offset
    return int(start + group.total_byte_size // 2)


def _in_range(position: int, split: FileSplit) -> bool:
    end = split.size if split.length is None else split.start + split.length
    return split.start <= position < end


def _orc(f: Any, split: FileSplit, wanted: pa.Schema | None, opts: ReaderOptions) -> Iterator[Any]:
    import pyarrow.orc as orc

    of = orc.ORCFile(f)
    # pyarrow converts TIMESTAMP values unlike Spark: read them through OrcTimestamps.
    timestamps = OrcTimestamps.open(f, of.schema)
    if timestamps is not None:
        of = orc.ORCFile(timestamps.source)
    names = _every_column(of.schema.names, wanted)
    columns = sorted(set(names.values()))
    stripes = range(of.nstripes)
    if not split.whole:
        # pyarrow does not expose stripe offsets: a split starting at 0 takes the whole file.
        stripes = range(of.nstripes) if split.start == 0 else range(0)
    # With none of the wanted columns in the file, read one anyway: a stripe read with no
    # columns has no rows, and Spark gives each of the file's rows with nulls.
    columns = columns or of.schema.names[:1]
    # ORC's Java writer (Spark, Hive) stores dates in the hybrid Julian/Gregorian calendar.
    hybrid = of.writer == "ORC_JAVA"
    for index in stripes:
        stripe = of.read_stripe(index, columns=columns)
        if timestamps is not None:
            stripe = timestamps.as_spark_reads(stripe, index)
        if hybrid:
            stripe = pa.RecordBatch.from_arrays(
                [julian_to_gregorian(c) for c in stripe.columns], schema=stripe.schema
            )
        for batch in pa.Table.from_batches([stripe]).to_batches(max_chunksize=BATCH_ROWS):
            yield batch, names


def _decoded(f: Any, encoding: str) -> Any:
    if codecs.lookup(encoding).name == "utf-8":
        return f
    return pa.transcoding_input_stream(pa.PythonFile(f, mode="r"), encoding, "utf-8")


def _null_value_strings(batch: pa.RecordBatch, null_value: str) -> pa.RecordBatch:
    """Quoted text equal to nullValue is null too (pyarrow leaves quoted values alone)."""
    columns = list(batch.columns)
    changed = False
    for i, column in enumerate(columns):
        if pa.types.is_string(column.type):
            equal = pc.equal(column, null_value)
            if pc.any(equal).as_py():
                columns[i] = pc.if_else(equal, pa.scalar(None, pa.string()), column)
                changed = True
    return pa.RecordBatch.from_arrays(columns, schema=batch.schema) if changed else batch


def _csv(f: Any, split: FileSplit, wanted: pa.Schema, opts: ReaderOptions) -> Iterator[Any]:
    """pyarrow's fast reader until the file shows an escape character, then Spark's rules."""
    import pyarrow.csv as csv

    names = list(wanted.names)
    identity = {n: n for n in names}
    types = {}
    for fld in wanted:
        # Types whose text Spark parses unlike pyarrow (a leading +, decimals rounded to
        # the scale, ...) come as text and are converted by conform.
        special = pa.types.is_timestamp(fld.type) or pa.types.is_date32(fld.type)
        special = special or pa.types.is_boolean(fld.type) or pa.types.is_decimal(fld.type)
        special = special or pa.types.is_integer(fld.type)
        types[fld.name] = pa.string() if special else fld.type
    escape = escape_in_quotes(opts.quote, opts.escape)
    lent = LentFile(f)
    source = _decoded(lent, opts.encoding)
    if escape:
        source = EscapeWatch(source, escape.encode("utf-8"))
    rows = 0
    try:
        reader = csv.open_csv(
            source,
            read_options=csv.ReadOptions(
                column_names=names, skip_rows=1 if opts.header else 0, block_size=BLOCK_BYTES
            ),
            parse_options=csv.ParseOptions(
                delimiter=opts.sep,
                quote_char=opts.quote or False,
                escape_char=False,
                double_quote=not escape,
                newlines_in_values=opts.multi_line,
            ),
            convert_options=csv.ConvertOptions(
                column_types=types,
                # Spark: an unquoted empty field is null; so is a value equal to nullValue,
                # quoted or not (see _null_value_strings), but a quoted "" is an empty string.
                null_values=sorted({"", opts.null_value}),
                strings_can_be_null=True,
                quoted_strings_can_be_null=False,
                include_columns=names,
            ),
        )
        for batch in reader:
            rows += batch.num_rows
            yield _null_value_strings(batch, opts.null_value), identity
        return
    except EscapeSeen:
        lent.take_back()  # before the file is read again
        f.seek(0)
    finally:
        lent.take_back()  # a malformed record: the caller reads the file again
    for batch in spark_csv_batches(
        f,
        opts.encoding,
        names,
        opts.sep,
        opts.quote,
        escape,
        opts.null_value,
        opts.header,
        opts.multi_line,
        BATCH_ROWS,
        skip=rows,
    ):
        yield batch, identity


def _json(f: Any, split: FileSplit, wanted: pa.Schema, opts: ReaderOptions) -> Iterator[Any]:
    """pyarrow's fast reader; a file it refuses (maps, quoted NaN, ...) is parsed in Python."""
    import pyarrow.json as pj

    read_schema = pa.schema([pa.field(fld.name, arrow_read_type(fld.type)) for fld in wanted])
    identity = {n: n for n in wanted.names}
    rows = 0
    if not any(has_map(fld.type) for fld in wanted):
        lent = LentFile(f)
        try:
            reader = json_batches(
                _decoded(lent, opts.encoding),
                pj.ReadOptions(block_size=BLOCK_BYTES),
                pj.ParseOptions(explicit_schema=read_schema, unexpected_field_behavior="ignore"),
            )
            for batch in reader:
                rows += batch.num_rows
                yield batch, identity
            return
        except pa.ArrowInvalid:
            lent.take_back()  # before the file is read again
            if opts.mode != "FAILFAST":
                raise  # read on past the malformed records (see ``_tolerant``)
            f.seek(0)
        finally:
            lent.take_back()
    for batch in python_batches(f, opts.encoding, read_schema, BATCH_ROWS, skip=rows):
        yield batch, identity


def _text(f: Any, split: FileSplit, wanted: pa.Schema, opts: ReaderOptions) -> Iterator[Any]:
    name = wanted.names[0] if wanted.names else "value"
    mapping = {name: name}
    decoder = codecs.getincrementaldecoder(opts.encoding)(errors="strict")
    if opts.wholetext:
        text = "".join([decoder.decode(chunk) for chunk in iter(lambda: f.read(BLOCK_BYTES), b"")])
        yield pa.record_batch([pa.array([text + decoder.decode(b"", final=True)])], [name]), mapping
        return
    splitter: Callable[[str], list[str]]
    if opts.line_sep is None:
        splitter = _split_universal
    else:
        sep = opts.line_sep
        splitter = lambda s: s.split(sep)  # noqa: E731
    tail = ""
    while True:
        chunk = f.read(BLOCK_BYTES)
        final = not chunk
        text = tail + decoder.decode(chunk, final=final)
        carry = ""
        if not final and text.endswith("\r"):
            # "\r\n" may straddle two chunks: decide on the "\r" with the next chunk.
            text, carry = text[:-1], "\r"
        lines = splitter(text)
        if final:
            if lines and lines[-1] == "":
                lines.pop()
            if lines:
                yield pa.record_batch([pa.array(lines, pa.string())], [name]), mapping
            return
        tail = lines.pop() + carry
        if lines:
            yield pa.record_batch([pa.array(lines, pa.string())], [name]), mapping


def _split_universal(text: str) -> list[str]:
    """Split on \\n, \\r\\n and \\r (Spark's default text line separators)."""
    return re.split(r"\r\n|\r|\n", text)


_READERS: dict[str, Callable[[Any, FileSplit, pa.Schema, ReaderOptions], Iterator[Any]]] = {
    "parquet": _parquet,
    "orc": _orc,
    "csv": _csv,
    "json": _json,
    "text": _text,
}


def csv_string_batches(
    f: Any, split: FileSplit, names: list[str], opts: ReaderOptions
) -> Iterator[pa.RecordBatch]:
    """A csv file's records as STRING columns ``names`` (by position), Spark's null rules
    applied; raises one of CONVERSION_ERRORS at a record of another width."""
    wanted = pa.schema([pa.field(name, pa.string()) for name in names])
    for batch, _ in _csv(f, split, wanted, opts):
        yield batch


def natural_batches(f: Any, split: FileSplit, opts: ReaderOptions) -> Iterator[pa.RecordBatch]:
    """A parquet or orc split's rows with every column of the file, as the file names them."""
    reader = _parquet if opts.format == "parquet" else _orc
    for batch, _ in reader(f, split, None, opts):
        yield batch


def read_split(
    location: FileLocation,
    split: FileSplit,
    target: pa.Schema,
    opts: ReaderOptions,
    on_corrupt: Callable[[str, str], None] | None = None,
    fit: FitSplit | None = None,
) -> Iterator[pa.RecordBatch]:
    """Yield the split's rows as batches of exactly ``target``'s schema; ``fit`` reads the
    open file instead, when the schema may not fit the files (see ``schema.rescue``)."""
    partition_names = [n for n in target.names if n in split.partition_values]
    data_schema = pa.schema([f for f in target if f.name not in split.partition_values])
    fs = location.filesystem()
    parsing = Parsing(
        opts.time_zone or session_time_zone(), opts.date_format, opts.timestamp_format
    )
    rows = 0
    try:
        with fs.open(split.path, "rb") as f:
            if fit is not None:
                batches = fit(f, location.url(split.path), split, target, parsing)
            else:
                batches = _parsed(f, split, target, data_schema, partition_names, opts, parsing)
            for out in batches:
                rows += out.num_rows
                if out.num_rows:
                    yield out
    except SchemaChangedError:
        raise  # the schema lacks the file's columns: not a corrupt file
    except FileNotFoundError:
        if opts.ignore_missing_files:
            log.warning(
                "%s: skipped missing file %s (ignoreMissingFiles)", NAME, location.url(split.path)
            )
            return
        raise DataLossError(
            NAME,
            f"file {location.url(split.path)} was deleted after it was listed "
            "(ignoreMissingFiles=true skips such files)",
        ) from None
    except (*CONVERSION_ERRORS, pa.ArrowException, OSError, KeyError) as error:
        detail = error.detail if isinstance(error, PySparkSourcesError) else error
        problem = scrubbed(f"{type(error).__name__}: {detail}")
        if opts.ignore_corrupt_files:
            log.warning(
                "%s: skipped the rest of corrupt file %s after %d rows (ignoreCorruptFiles): %s",
                NAME,
                location.url(split.path),
                rows,
                problem,
            )
            if on_corrupt is not None:
                on_corrupt(split.path, problem)
            return
        hint = "ignoreCorruptFiles=true skips such files"
        if opts.format in ("csv", "json") and isinstance(error, CONVERSION_ERRORS):
            hint = f"mode FAILFAST: mode=PERMISSIVE keeps malformed records, {hint}"
        raise CorruptFileError(
            NAME, f"cannot read {opts.format} file {location.url(split.path)}: {problem} ({hint})"
        ) from None


def _parsed(
    f: Any,
    split: FileSplit,
    target: pa.Schema,
    data_schema: pa.Schema,
    partition_names: list[str],
    opts: ReaderOptions,
    parsing: Parsing,
) -> Iterator[pa.RecordBatch]:
    """The file's batches; csv and json outside FAILFAST go on past a malformed record."""
    corrupt = opts.corrupt_column if opts.format in ("csv", "json") else None
    if corrupt not in data_schema.names:
        corrupt = None
    # Spark leaves the corrupt-record column out of what it parses (csv columns by position).
    parsed = pa.schema([fld for fld in data_schema if fld.name != corrupt])
    if opts.format == "json" and opts.multi_line:
        for batch, names in document_batches(f, parsed, opts, parsing, corrupt):
            yield _assemble(batch, names, target, split, partition_names, parsing)
        return
    tolerant = opts.format in ("csv", "json") and opts.mode != "FAILFAST"
    done = 0
    # Python parses a json file with maps from its first row anyway; tolerant, it does so in
    # pieces of lines, which keeps the count of what was read in lines (an array of objects
    # is several rows).
    if not (tolerant and opts.format == "json" and any(has_map(fld.type) for fld in parsed)):
        try:
            for batch, names in _READERS[opts.format](f, split, parsed, opts):
                out = _assemble(batch, names, target, split, partition_names, parsing)
                done += out.num_rows
                yield out
            return
        except CONVERSION_ERRORS:
            if not tolerant:
                raise
    f.seek(0)
    fast = _fast_lines(parsed, opts, parsing)
    for batch, names in record_batches(f, parsed, opts, parsing, corrupt, done, fast):
        yield _assemble(batch, names, target, split, partition_names, parsing)


def _fast_lines(parsed: pa.Schema, opts: ReaderOptions, parsing: Parsing) -> FastParse:
    """The fast reader on a piece of a file's lines (UTF-8, no header).

    The mode stays tolerant, so the json reader fails at once on what pyarrow refuses instead
    of parsing the piece in Python first: the caller halves a piece that fails anyway.
    """
    piece_opts = replace(opts, header=False, encoding="utf-8")
    read = _READERS[opts.format]

    def parse(data: bytes) -> list[pa.Array]:
        batches = list(read(io.BytesIO(data), FileSplit("", len(data)), parsed, piece_opts))
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


def _assemble(
    batch: Any,
    names: dict[str, str],
    target: pa.Schema,
    split: FileSplit,
    partition_names: list[str],
    parsing: Parsing,
) -> pa.RecordBatch:
    length = batch.num_rows
    arrays = []
    for fld in target:
        if fld.name in partition_names:
            arrays.append(
                constant_column(split.partition_values[fld.name], fld.type, length, parsing)
            )
        elif fld.name in names:
            arrays.append(conform(batch.column(names[fld.name]), fld.type, parsing))
        else:
            arrays.append(pa.nulls(length, fld.type))
        if not fld.nullable and arrays[-1].null_count:
            # Arrow keeps nullability as metadata only; Spark would fail later, naming no file.
            raise MalformedRecordError(
                NAME, f"column {fld.name!r} is NOT NULL in the schema but holds a null"
            )
    return pa.RecordBatch.from_arrays(arrays, schema=target)
