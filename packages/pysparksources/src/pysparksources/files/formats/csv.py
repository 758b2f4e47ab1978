"""csv: pyarrow's fast reader until a file shows an escape character, then Spark's rules.

Columns match the schema by position. Types whose text Spark parses unlike pyarrow (a leading
``+``, decimals rounded to the scale, dates and timestamps by pattern...) are read as text and
converted by ``values.conversions``. A record is malformed (see ``_tolerant``) when its field
count differs from the schema's, or when a field does not convert; its other fields keep their
values and missing ones are null. Inference takes the names from the first file's header
(``_c0``... without one) and every column is STRING unless ``inferSchema``.
"""

from __future__ import annotations

import itertools
from collections.abc import Generator, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.types import DataType, NullType, StringType, StructField, StructType

from pysparksources._core.option_table import Flag, Use
from pysparksources.errors import SchemaError
from pysparksources.files import NAME
from pysparksources.files.formats._csv_records import (
    EscapeSeen,
    EscapeWatch,
    escape_in_quotes,
    records_as_configured,
    spark_csv_batches,
    spark_csv_records,
    split_records,
)
from pysparksources.files.formats._file_format import (
    BATCH_ROWS,
    BLOCK_BYTES,
    WHOLE_FILE_CODECS,
    Batch,
    FileSplit,
    Fitter,
    PartWriter,
    Sample,
    WritableFormat,
)
from pysparksources.files.formats._sample_text import Budget, csv_records
from pysparksources.files.formats._text_input import LentFile, as_utf8, is_utf8, text_lines
from pysparksources.files.formats._tolerant import (
    FastParse,
    Reading,
    Record,
    RecordsFormat,
    fast_then_records,
)
from pysparksources.files.values.inferred_types import canonical, csv_date_rule, csv_token_type
from pysparksources.files.values.rendering import concatenated, csv_header, csv_lines

if TYPE_CHECKING:
    from pysparksources.files.config import ReaderOptions, SinkConfig
    from pysparksources.files.storage.folder_listing import FileEntry

__all__ = ["FORMAT", "PREFER_DATE", "Csv", "string_batches"]

PREFER_DATE = Flag(
    name="preferDate",
    doc="csv, with inferSchema: a column whose values all parse with dateFormat (else "
    "yyyy-MM-dd, strictly) is a DATE, as in Spark; false infers no DATE (such values are "
    "TIMESTAMP or STRING).",
    default="true",
    uses=Use.READ,
)


class Csv(RecordsFormat, WritableFormat):
    name = "csv"
    listed = 10
    title = "csv"
    extension = ".csv"
    read_options = (
        "header",
        "sep",
        "quote",
        "escape",
        "nullValue",
        "inferSchema",
        "samplingRatio",
        "encoding",
        "multiLine",
        "dateFormat",
        "timestampFormat",
        "mode",
        "columnNameOfCorruptRecord",
        "timeZone",
    )
    write_options = ("timeZone",)
    codecs: ClassVar[Mapping[str, str]] = WHOLE_FILE_CODECS

    # -- inference: the header, then every token ------------------------------------------
    def infer(self, sample: Sample, files: list[FileEntry]) -> StructType:
        reader = sample.reader
        header = _records(sample, files[0], Budget(0))  # its first record, whatever it costs
        first = next(header, None)
        header.close()
        if first is None:
            raise SchemaError(
                NAME, f"cannot infer a schema: {sample.location.url(files[0].path)} has no records"
            )
        values, header_text = first
        names = _names(values, reader.header, reader.null_value)
        types: list[DataType] = [NullType() for _ in names]
        if sample.inference.infer_types:
            dates = csv_date_rule(
                reader.date_format, reader.format_option(PREFER_DATE) is not False
            )
            sampler = sample.sampler()
            for entry in files:
                if sample.budget.spent:
                    break
                for tokens, raw in _records(sample, entry, sample.budget):
                    if sample.budget.spent:
                        break
                    if reader.header and raw == header_text:
                        continue
                    if sample.skipped(sampler):
                        continue
                    for i, token in enumerate(tokens[: len(types)]):
                        types[i] = csv_token_type(types[i], token, dates)
                    sample.budget.started = True
        columns = zip(names, types, strict=True)
        return StructType([StructField(name, canonical(t) or StringType()) for name, t in columns])

    # -- reading ------------------------------------------------------------------------
    def batches(
        self, f: Any, split: FileSplit, wanted: pa.Schema, opts: ReaderOptions
    ) -> Iterator[Batch]:
        names = list(wanted.names)
        identity = {n: n for n in names}
        for batch in _batches(f, wanted, opts):
            yield batch, identity

    def read_types(self, parsed: pa.Schema) -> list[pa.DataType]:
        return [pa.string() for _ in parsed]

    def parse_lines(self, lines: Iterable[str], reading: Reading) -> Iterator[Record]:
        opts = reading.opts
        escape = escape_in_quotes(opts.quote, opts.escape)
        records = split_records(lines, opts.sep, opts.quote, escape, opts.null_value)
        return _sized(records, len(reading.parsed))

    def record_lines(self, f: Any, opts: ReaderOptions) -> Iterator[str]:
        lines = (line for line in text_lines(f, opts.encoding) if line)
        if opts.header:
            next(lines, None)
        return lines

    def rest(
        self, f: Any, reading: Reading, skip: int, fast: FastParse
    ) -> Iterator[pa.RecordBatch]:
        opts = reading.opts
        if not opts.multi_line:
            yield from super().rest(f, reading, skip, fast)
            return
        escape = escape_in_quotes(opts.quote, opts.escape)
        records = spark_csv_records(
            f, opts.encoding, opts.sep, opts.quote, escape, opts.null_value, opts.header, True
        )
        sized = _sized(itertools.islice(records, skip, None), len(reading.parsed))
        yield from reading.batches(sized)

    def read_rescuing(self, f: Any, fitter: Fitter) -> Iterator[pa.RecordBatch]:
        # pyarrow reads the file by its own columns while it can; from the first record it
        # cannot (another type, another width, ...), Python reads the rest record by record.
        opts = fitter.reader
        fast = None
        if not opts.multi_line and is_utf8(opts.encoding):
            fast = lambda: _rescued_by_arrow(f, fitter)  # noqa: E731
        yield from fast_then_records(f, fast, lambda skip: _rescued_records(f, fitter, skip))

    # -- writing ------------------------------------------------------------------------
    def write_problem(self, data: list[pa.Field]) -> str | None:
        for f in data:
            if pa.types.is_nested(f.type) or pa.types.is_binary(f.type):
                return f"csv cannot write column {f.name!r} of {f.type}"
        return None

    def open_writer(self, stream: Any, schema: pa.Schema, config: SinkConfig) -> PartWriter:
        return _CsvWriter(stream, schema, config)


def _sized(records: Iterable[tuple[list[str | None], str]], width: int) -> Iterator[Record]:
    """csv records cut or padded to the schema's width; another width is malformed."""
    for values, text in records:
        yield (values + [None] * width)[:width], len(values) != width, text


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


def _batches(f: Any, wanted: pa.Schema, opts: ReaderOptions) -> Iterator[pa.RecordBatch]:
    """The file's records as ``wanted``'s columns (by position), pyarrow's reader first."""
    import pyarrow.csv as csv

    names = list(wanted.names)
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
    source = as_utf8(lent, opts.encoding)
    source = EscapeWatch(
        source,
        escape.encode("utf-8"),
        opts.quote.encode("utf-8"),
        opts.sep.encode("utf-8"),
        opts.multi_line,
    )
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
            yield _null_value_strings(batch, opts.null_value)
        return
    except EscapeSeen:
        lent.take_back()  # before the file is read again
        f.seek(0)
    finally:
        lent.take_back()  # a malformed record: the caller reads the file again
    yield from spark_csv_batches(
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
    )


def string_batches(f: Any, names: list[str], opts: ReaderOptions) -> Iterator[pa.RecordBatch]:
    """A csv file's records as STRING columns ``names`` (by position), Spark's null rules
    applied; raises one of CONVERSION_ERRORS at a record of another width."""
    return _batches(f, pa.schema([pa.field(name, pa.string()) for name in names]), opts)


# -- inference ------------------------------------------------------------------------------
def _records(
    sample: Sample, entry: FileEntry, budget: Budget
) -> Generator[tuple[list[str | None], str], None, None]:
    with sample.open(entry) as f:
        yield from csv_records(f, sample.reader, budget, sample.location.url(entry.path))


def _names(values: list[str | None], header: bool, null_value: str) -> list[str]:
    """Spark's column names: the header's (``_c<i>`` for empty ones, ``<name><i>`` for names
    repeated case-insensitively), or ``_c0``, ``_c1``... without a header."""
    if not header:
        return [f"_c{i}" for i in range(len(values))]
    lowered = [v.lower() for v in values if v is not None]
    repeated = {name for name in lowered if lowered.count(name) > 1}
    names = []
    for i, value in enumerate(values):
        if value is None or value == "" or value == null_value:
            names.append(f"_c{i}")
        elif value.lower() in repeated:
            names.append(f"{value}{i}")
        else:
            names.append(value)
    return names


# -- schema evolution and rescue: the file's own columns ------------------------------------
def _file_names(fitter: Fitter, header: list[str | None]) -> list[str]:
    if fitter.reader.header:
        return [v if v else f"_c{i}" for i, v in enumerate(header)]
    # Without a header, columns match the schema by position, as when reading; columns
    # beyond the schema have no name to record or rescue them under.
    return list(fitter.data.names)


def _rescued_by_arrow(f: Any, fitter: Fitter) -> Iterator[pa.RecordBatch]:
    """The file through pyarrow (raises one of CONVERSION_ERRORS where it cannot)."""
    first = next(iter(records_as_configured(f, fitter.reader)), None)
    f.seek(0)
    if first is None:
        return
    names = _file_names(fitter, first[0])
    for batch in string_batches(f, names, fitter.reader):
        yield fitter.columns(dict(zip(names, batch.columns, strict=True)), batch.num_rows)


def _rescued_records(f: Any, fitter: Fitter, skip: int) -> Iterator[pa.RecordBatch]:
    """The file record by record in Python, the first ``skip`` records left out."""
    opts = fitter.reader
    names: list[str] | None = None
    rows: list[list[str | None]] = []
    seen = 0
    for values, _ in records_as_configured(f, opts):
        if names is None:
            names = _file_names(fitter, values)
            if opts.header:  # the first record only, as Spark's reader
                continue
        seen += 1
        if seen <= skip:
            continue
        rows.append((values + [None] * len(names))[: len(names)])
        if len(rows) >= BATCH_ROWS:
            yield _rows_batch(fitter, names, rows)
            rows = []
    if rows and names is not None:
        yield _rows_batch(fitter, names, rows)


def _rows_batch(fitter: Fitter, names: list[str], rows: list[list[str | None]]) -> pa.RecordBatch:
    columns = {
        name: pa.array([row[i] for row in rows], pa.string()) for i, name in enumerate(names)
    }
    return fitter.columns(columns, len(rows))


# -- writing --------------------------------------------------------------------------------
class _CsvWriter:
    """Rows as csv lines, the header first when asked."""

    def __init__(self, stream: Any, schema: pa.Schema, config: SinkConfig) -> None:
        self._stream = stream
        self._sep = config.csv_sep
        self._zone = config.time_zone
        if config.csv_header:
            stream.write(csv_header(schema.names, config.csv_sep))

    def write(self, batch: pa.RecordBatch) -> None:
        self._stream.write(concatenated(csv_lines(batch, self._sep, self._zone)))

    def close(self) -> None:
        pass  # nothing to finish: every row is written


FORMAT = Csv()
