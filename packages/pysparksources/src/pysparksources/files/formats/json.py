"""json: JSON Lines (or one document per file with ``multiLine``), pyarrow's reader first.

pyarrow's JSON reader is fast but strict: a file it refuses (maps, quoted ``NaN``, a number in
a string column...) is parsed in Python (``_json_values``). A line that is not JSON, or whose
first value is neither an object nor an array of objects, is malformed with every field null
(see ``_tolerant``); a value of the wrong type nulls only its field (in a nested object only
the nested field; an array or map with a bad element is null whole). Text after a line's first
value is ignored. With ``multiLine`` the document is the file's first JSON value, an object or
an array of objects; an empty file has no rows; the file is read whole.

Inference types every record (a fraction with ``samplingRatio``), fields sorted by name, and
adds the corrupt-record column when a record does not parse in PERMISSIVE mode.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa
from pyspark.sql.types import DataType, NullType, StringType, StructField, StructType

from pysparksources._core.arrow import json_batches
from pysparksources.errors import MalformedRecordError, SchemaError
from pysparksources.files import NAME
from pysparksources.files.formats._file_format import (
    BATCH_ROWS,
    BLOCK_BYTES,
    WHOLE_FILE_CODECS,
    Assemble,
    Batch,
    FileSplit,
    Fitter,
    PartWriter,
    Sample,
    WritableFormat,
)
from pysparksources.files.formats._json_values import (
    RawTextNeeded,
    arrow_read_type,
    has_map,
    json_objects,
    json_value,
    python_batches,
)
from pysparksources.files.formats._sample_text import (
    json_document_records,
    json_lines,
    line_blocks,
)
from pysparksources.files.formats._text_input import (
    LentFile,
    as_utf8,
    is_utf8,
    text_lines,
    whole_text,
)
from pysparksources.files.formats._tolerant import (
    Reading,
    Record,
    RecordsFormat,
    fast_then_records,
)
from pysparksources.files.values.conversions import Parsing
from pysparksources.files.values.inferred_types import (
    canonical,
    json_value_type,
    merge_json,
)
from pysparksources.files.values.rendering import concatenated
from pysparksources.files.values.rendering import json_lines as rendered_lines

if TYPE_CHECKING:
    from pysparksources.files.config import ReaderOptions, SinkConfig
    from pysparksources.files.storage.folder_listing import FileEntry

__all__ = ["FORMAT", "Json"]

# Every digit as 0, anything else as x: 19 zeros in a row are a number that may not fit a long.
_DIGITS = bytes(ord("0") if chr(b).isdigit() and b < 128 else ord("x") for b in range(256))


class Json(RecordsFormat, WritableFormat):
    name = "json"
    listed = 20
    title = "json (JSON Lines; one document per file with multiLine)"
    written_title = "json (JSON Lines)"
    extension = ".json"
    read_options = (
        "samplingRatio",
        "primitivesAsString",
        "prefersDecimal",
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

    def check_read_schema(self, schema: StructType, target: pa.Schema) -> None:
        for column, key_type in _map_key_types(schema, ""):
            if not isinstance(key_type, StringType):
                raise SchemaError(
                    NAME,
                    f"the schema's column {column!r}: a JSON map can only have STRING keys, "
                    f"not {key_type.simpleString()}",
                )

    def infer(self, sample: Sample, files: list[FileEntry]) -> StructType:
        return _schema(sample, files)

    # -- reading ------------------------------------------------------------------------
    def batches(
        self, f: Any, split: FileSplit, wanted: pa.Schema, opts: ReaderOptions
    ) -> Iterator[Batch]:
        """pyarrow's fast reader; a file it refuses (maps, quoted NaN, ...) is parsed in
        Python (outside FAILFAST the refusal is raised instead: the caller reads on past the
        malformed records, see ``_tolerant``)."""
        import pyarrow.json as pj

        read_schema = pa.schema([pa.field(fld.name, arrow_read_type(fld.type)) for fld in wanted])
        identity = {n: n for n in wanted.names}
        rows = 0
        if not any(has_map(fld.type) for fld in wanted):
            lent = LentFile(f)
            try:
                reader = json_batches(
                    as_utf8(lent, opts.encoding),
                    pj.ReadOptions(block_size=BLOCK_BYTES),
                    pj.ParseOptions(
                        explicit_schema=read_schema, unexpected_field_behavior="ignore"
                    ),
                )
                for batch in reader:
                    rows += batch.num_rows
                    yield batch, identity
                return
            except pa.ArrowInvalid:
                lent.take_back()  # before the file is read again
                if opts.mode != "FAILFAST":
                    raise  # read on past the malformed records
                f.seek(0)
            finally:
                lent.take_back()
        for batch in python_batches(f, opts.encoding, read_schema, BATCH_ROWS, skip=rows):
            yield batch, identity

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
        if not opts.multi_line:
            yield from super().read(f, split, parsed, opts, parsing, corrupt_column, assemble)
            return
        # One JSON document, its text the malformed record's; read whole.
        reading = Reading(self, parsed, opts, parsing, corrupt_column)
        document = whole_text(f, opts.encoding)
        if document.strip():
            for batch in reading.batches(self.parse_lines([document], reading)):
                yield assemble(batch, reading.names)

    def reads_fast_first(self, parsed: pa.Schema, opts: ReaderOptions) -> bool:
        # Python parses a file with maps from its first row anyway; tolerant, it does so in
        # pieces of lines, which keeps the count of what was read in lines (an array of
        # objects is several rows).
        return opts.mode == "FAILFAST" or not any(has_map(fld.type) for fld in parsed)

    def read_types(self, parsed: pa.Schema) -> list[pa.DataType]:
        return [arrow_read_type(fld.type) for fld in parsed]

    def record_lines(self, f: Any, opts: ReaderOptions) -> Iterator[str]:
        return (line for line in text_lines(f, opts.encoding) if line.strip())

    def piece_problem(self, arrays: list[pa.Array], lines: list[str]) -> str | None:
        if arrays and len(arrays[0]) != len(lines):
            return "a line holds more than one record"  # pyarrow reads every object; Spark one
        return None

    def parse_lines(self, lines: Iterable[str], reading: Reading) -> Iterator[Record]:
        """One record per line, except that an array of objects gives one per object."""
        width = len(reading.parsed)
        for line in lines:
            try:
                objects = json_objects(line)
            except ValueError:
                yield [None] * width, True, line
                continue
            try:
                rows, bad = _rows(objects, reading)
            except RawTextNeeded:
                rows, bad = _rows(json_objects(line, keep_text=True), reading)
            # One bad object of an array makes the whole line malformed, every row of it.
            for values in rows:
                yield values, bad, line

    def read_rescuing(self, f: Any, fitter: Fitter) -> Iterator[pa.RecordBatch]:
        # pyarrow reads the file by its own columns while it can (not multiLine, UTF-8, no
        # map: pyarrow's reader has none); from the first record it cannot, Python reads the
        # rest record by record.
        opts = fitter.reader
        fast = None
        if (
            not opts.multi_line
            and is_utf8(opts.encoding)
            and not any(has_map(fld.type) for fld in fitter.data)
        ):
            fast = lambda: _rescued_by_arrow(f, fitter)  # noqa: E731
        yield from fast_then_records(f, fast, lambda skip: _rescued_records(f, fitter, skip))

    # -- writing ------------------------------------------------------------------------
    def open_writer(self, stream: Any, schema: pa.Schema, config: SinkConfig) -> PartWriter:
        return _JsonWriter(stream, config)


def _map_key_types(data_type: Any, path: str) -> Iterator[tuple[str, Any]]:
    from pyspark.sql.types import ArrayType, MapType

    if isinstance(data_type, StructType):
        for f in data_type.fields:
            yield from _map_key_types(f.dataType, f"{path}.{f.name}" if path else f.name)
    elif isinstance(data_type, ArrayType):
        yield from _map_key_types(data_type.elementType, path)
    elif isinstance(data_type, MapType):
        yield path, data_type.keyType
        yield from _map_key_types(data_type.valueType, path)


# -- reading past malformed records ---------------------------------------------------------
def _rows(objects: list[dict[str, Any]], reading: Reading) -> tuple[list[list[Any]], bool]:
    rows, bad = [], False
    for record in objects:
        values = []
        for fld, read_type in zip(reading.parsed, reading.read_types, strict=True):
            value, fits = _fitted(record.get(fld.name), read_type)
            values.append(value)
            bad = bad or not fits
        rows.append(values)
    return rows, bad


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


# -- inference: every record ----------------------------------------------------------------
def _schema(config: Sample, files: list[FileEntry]) -> StructType:
    sampler = config.sampler()
    root: DataType = NullType()
    for entry in files:
        if config.budget.spent:
            break
        try:
            with config.open(entry) as f:
                if config.reader.multi_line:
                    found = _document_type(config, entry, f, sampler)
                else:
                    found = _lines_type(config, entry, f, sampler)
        except (OSError, UnicodeDecodeError) as error:
            if config.reader.ignore_corrupt_files:
                continue
            raise config.unreadable(entry, error) from None
        root = merge_json(root, found)
    schema = canonical(root)
    return schema if isinstance(schema, StructType) else StructType([])


def _lines_type(config: Sample, entry: FileEntry, f: Any, sampler: random.Random) -> DataType:
    """The type of a JSON Lines file, a block of whole lines at a time."""
    root: DataType = NullType()
    budget = config.budget
    where = config.location.url(entry.path)
    for piece in line_blocks(f, config.reader.encoding, budget, where):
        # pyarrow types a whole piece read within the budget; a piece read past it (to end the
        # line the budget cut, or to find the sample's first record) goes line by line.
        whole = config.inference.sampling_ratio >= 1 and budget.remaining >= 0
        fast = _arrow_type(piece.encode("utf-8"), config) if whole else None
        if fast is not None:
            root = merge_json(root, fast)
            budget.started = True
            continue
        for line in json_lines(piece):
            if budget.spent:
                break
            if not line.strip() or config.skipped(sampler):
                continue
            root = merge_json(root, _record_type(config, entry, line))
            budget.started = True
    return root


def _document_type(config: Sample, entry: FileEntry, f: Any, sampler: random.Random) -> DataType:
    """The type of a multiLine JSON file: one document, typed object by object; malformed
    as a whole when any part of it is (its types so far are then dropped, as in Spark)."""
    where = config.location.url(entry.path)
    records = json_document_records(f, config.reader.encoding, config.budget, where)
    found: DataType = NullType()
    try:
        first = next(records, None)
        if first is None or config.skipped(sampler):
            return found
        for text in itertools.chain([first], records):
            if config.budget.spent:  # this object ends past the sample's bytes
                break
            found = merge_json(found, _record_type(config, entry, text.strip(), strict=True))
            config.budget.started = True
    except SchemaError:  # a record too large to hold: no verdict on the document
        raise
    except ValueError:  # the document (json_objects: MalformedRecordError) is malformed
        return _malformed_type(config, entry)
    return found


def _record_type(config: Sample, entry: FileEntry, text: str, strict: bool = False) -> DataType:
    """The type of one record's text (a line, or an object of a multiLine document);
    ``strict``: a malformed one raises ValueError (its whole document is malformed)."""
    inference = config.inference
    try:
        objects = json_objects(text)
    except ValueError:
        if strict:
            raise
        return _malformed_type(config, entry)
    root: DataType = NullType()
    for value in objects:
        found = json_value_type(value, inference.primitives_as_string, inference.prefers_decimal)
        root = merge_json(root, found)
    return root


def _malformed_type(config: Sample, entry: FileEntry) -> DataType:
    """What a malformed record adds: the corrupt-record column (PERMISSIVE), nothing
    (DROPMALFORMED), or a SchemaError (FAILFAST)."""
    if config.reader.mode == "FAILFAST":
        raise SchemaError(
            NAME,
            f"mode FAILFAST: a malformed JSON record in "
            f"{config.location.url(entry.path)} (mode=PERMISSIVE keeps it)",
        )
    if config.reader.mode == "PERMISSIVE":
        return StructType([StructField(config.reader.corrupt_column, StringType())])
    return NullType()


def _arrow_type(data: bytes, config: Sample) -> DataType | None:
    """The file's type from pyarrow's own inference, when its rules give Spark's answer.

    Only UTF-8 text pyarrow reads without complaint and without single quotes or values
    that pyarrow and Spark type differently qualifies; the rest is typed record by record.
    """
    import pyarrow.json as pj

    if config.reader.multi_line or config.inference.prefers_decimal:
        return None
    if not is_utf8(config.reader.encoding):
        return None
    if b"'" in data or b"NaN" in data or b"Infinity" in data:
        return None
    if b'""' in data:  # Spark types an empty string as null, pyarrow as a string
        return None
    if b"0" * 19 in data.translate(_DIGITS):  # over 64 bits: Spark DECIMAL, pyarrow DOUBLE
        return None
    try:
        # One block of whole lines: a line over pyarrow's default block (1 MiB) reads too.
        options = pj.ReadOptions(block_size=max(len(data), 1))
        table = pj.read_json(pa.BufferReader(data), read_options=options)
    except (pa.ArrowException, ValueError):
        return None
    if table.num_rows == 0:
        return None
    return _spark_type(pa.struct(list(table.schema)), config.inference.primitives_as_string)


def _spark_type(dtype: pa.DataType, as_string: bool) -> DataType:
    from pyspark.sql.types import ArrayType, BooleanType, DoubleType, LongType

    t = pa.types
    if t.is_struct(dtype):
        fields = sorted((f.name, _spark_type(f.type, as_string)) for f in dtype)
        return StructType([StructField(name, ftype) for name, ftype in fields])
    if t.is_list(dtype):
        return ArrayType(_spark_type(dtype.value_type, as_string))
    if t.is_null(dtype):
        return NullType()
    if as_string and not t.is_string(dtype):
        return StringType()
    if t.is_int64(dtype):
        return LongType()
    if t.is_float64(dtype):
        return DoubleType()
    if t.is_boolean(dtype):
        return BooleanType()
    return StringType()  # strings, and what pyarrow reads as timestamps: Spark keeps text


# -- csv: the header, then every token ----------------------------------------------------


# -- schema evolution and rescue: the file's own columns ------------------------------------
def _rescued_by_arrow(f: Any, fitter: Fitter) -> Iterator[pa.RecordBatch]:
    """The file through pyarrow (raises one of CONVERSION_ERRORS where it cannot)."""
    import pyarrow.json as pj

    schema = pa.schema([pa.field(fld.name, arrow_read_type(fld.type)) for fld in fitter.data])
    reader = json_batches(
        f,
        pj.ReadOptions(block_size=BLOCK_BYTES),
        pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer"),
    )
    for batch in reader:
        yield fitter.columns(
            dict(zip(batch.schema.names, batch.columns, strict=True)), batch.num_rows
        )


def _rescued_records(f: Any, fitter: Fitter, skip: int) -> Iterator[pa.RecordBatch]:
    """The file record by record in Python, the first ``skip`` lines left out."""
    opts = fitter.reader
    data = fitter.data
    lines = [whole_text(f, opts.encoding)] if opts.multi_line else text_lines(f, opts.encoding)
    read_types = {fld.name: arrow_read_type(fld.type) for fld in data}
    values: dict[str, list[Any]] = {name: [] for name in data.names}
    rescued: list[dict[str, Any]] = []
    texts: list[str | None] = []
    for line in lines:
        if not line.strip():
            continue
        if skip:  # lines pyarrow read already: one record each
            skip -= 1
            continue
        try:
            records = json_objects(line.strip() if opts.multi_line else line)
        except ValueError:
            if opts.mode == "FAILFAST":
                raise MalformedRecordError(NAME, f"malformed record: {line[:200]!r}") from None
            if opts.mode == "PERMISSIVE":
                for name in values:
                    values[name].append(None)
                rescued.append({})
                texts.append(line)
            continue
        for record in records:
            kept: dict[str, Any] = {}
            fitter.new_columns(list(record))
            for key, value in record.items():
                if key not in data.names and value is not None and fitter.rescues(key):
                    kept[key] = value
            for name in data.names:
                raw = record.get(name)
                try:
                    values[name].append(json_value(raw, read_types[name]))
                except MalformedRecordError:
                    values[name].append(None)
                    kept[name] = raw
            rescued.append(kept)
            texts.append(None)
        if len(rescued) >= BATCH_ROWS:
            yield _values_batch(fitter, values, read_types, rescued, texts)
            values = {name: [] for name in data.names}
            rescued, texts = [], []
    if rescued:
        yield _values_batch(fitter, values, read_types, rescued, texts)


def _values_batch(
    fitter: Fitter,
    values: dict[str, list[Any]],
    read_types: dict[str, pa.DataType],
    rescued: list[dict[str, Any]],
    texts: list[str | None],
) -> pa.RecordBatch:
    arrays = {
        name: fitter.convert(name, pa.array(column, read_types[name]), rescued, name)
        for name, column in values.items()
    }
    return fitter.finish(arrays, rescued, len(rescued), texts)


# -- writing --------------------------------------------------------------------------------
class _JsonWriter:
    """Rows as JSON Lines."""

    def __init__(self, stream: Any, config: SinkConfig) -> None:
        self._stream = stream
        self._ignore_null_fields = config.ignore_null_fields
        self._zone = config.time_zone

    def write(self, batch: pa.RecordBatch) -> None:
        lines = rendered_lines(batch, self._ignore_null_fields, self._zone)
        self._stream.write(concatenated(lines))

    def close(self) -> None:
        pass  # nothing to finish: every row is written


FORMAT = Json()
