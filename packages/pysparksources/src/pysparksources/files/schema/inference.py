"""A read without ``.schema(...)``: the schema Spark's own reader would infer, from a sample.

Runs on the driver at ``load()``. The sample is the first files by path, at most
``schemaSampleFiles`` of them, read until ``schemaSampleBytes`` are read (Spark reads every
file; on a small folder the two are the same). No file is held whole: text is streamed a
block and a record at a time, footers are checked for size first (``formats._sample_text``,
``formats._footers``). Per format, as Spark infers:

- parquet and orc: the first file's footer, or every sampled footer merged (``mergeSchema``);
- json: every record's type (a fraction with ``samplingRatio``), fields sorted by name, a
  corrupt-record column when a record does not parse in PERMISSIVE mode;
- csv: names from the first file's header (``_c0``... without one), every column STRING
  unless ``inferSchema``.

Hive-style ``col=value`` folders add their columns at the end, typed from their values.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.types import (
    DataType,
    NullType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from pysparksources._redact import scrubbed
from pysparksources.errors import CorruptFileError, SchemaError
from pysparksources.files import NAME
from pysparksources.files.config import InferenceOptions, ReaderOptions, SourceConfig
from pysparksources.files.formats._footers import FOOTER_LIMIT, footer_size
from pysparksources.files.formats._json_values import json_objects
from pysparksources.files.formats._sample_text import (
    Budget,
    csv_records,
    json_document_records,
    json_lines,
    line_blocks,
)
from pysparksources.files.storage.filesystem import FileLocation
from pysparksources.files.storage.folder_listing import FileEntry
from pysparksources.files.storage.partition_folders import (
    NULL_PARTITION,
    partition_spec,
    relative_dir,
)
from pysparksources.files.values.inferred_types import (
    arrow_to_spark,
    canonical,
    csv_token_type,
    json_value_type,
    merge_json,
    merge_partition,
    partition_value_type,
)

__all__ = ["infer_files", "infer_schema"]

_SEED = 42  # sampling is reproducible: the same files give the same schema on every start
# Every digit as 0, anything else as x: 19 zeros in a row are a number that may not fit a long.
_DIGITS = bytes(ord("0") if chr(b).isdigit() and b < 128 else ord("x") for b in range(256))


def infer_schema(config: SourceConfig) -> StructType:
    """The schema of the files under the source's path; :class:`SchemaError` if none can be."""
    from pysparksources.files.source.file_index import SourceLister, describe

    files = SourceLister(config).files()
    if not files:
        raise SchemaError(
            NAME,
            f"cannot infer a schema: {describe(config.location)} holds no "
            f"{config.reader.format} file yet; give one with .schema('a INT, b STRING') or "
            "add a file before the query starts",
        )
    sample = _sample(sorted(files, key=lambda f: f.path), config)
    data = infer_files(config.location, config.reader, config.inference, sample)
    schema = _with_partitions(config, data, files)
    _check_names(schema)
    return schema


@dataclass(frozen=True)
class _Inputs:
    """What inference reads with: a source's config, or the same three fields on a task, and
    what is left of the sample's bytes."""

    location: FileLocation
    reader: ReaderOptions
    inference: InferenceOptions
    budget: Budget


def infer_files(
    location: FileLocation,
    reader: ReaderOptions,
    inference: InferenceOptions,
    files: list[FileEntry],
) -> StructType:
    """The data columns (no partition columns) of ``files``, as :func:`infer_schema` types them."""
    inputs = _Inputs(location, reader, inference, Budget(inference.sample_bytes))
    return _INFER[reader.format](inputs, files)


def _sample(files: list[FileEntry], config: SourceConfig) -> list[FileEntry]:
    """The first files by path: up to schemaSampleFiles, and for csv and json only as many
    as schemaSampleBytes reaches into (reading stops inside the last one)."""
    taken = files[: config.inference.sample_files]
    if config.reader.format not in ("csv", "json"):
        return taken  # footers count against the bytes as they are read
    size = 0
    for count, entry in enumerate(taken):
        if size >= config.inference.sample_bytes:
            return taken[:count]
        size += entry.size
    return taken


def _open(config: _Inputs, entry: FileEntry) -> Any:
    return config.location.filesystem().open(entry.path, "rb")


def _unreadable(config: _Inputs, entry: FileEntry, error: Exception) -> CorruptFileError:
    return CorruptFileError(
        NAME,
        f"cannot infer a schema from {config.location.url(entry.path)}: "
        f"{scrubbed(f'{type(error).__name__}: {error}')} (ignoreCorruptFiles=true skips "
        "such files)",
    )


# -- parquet and orc: the footers ---------------------------------------------------------
def _footer(config: _Inputs, entry: FileEntry) -> pa.Schema | None:
    import pyarrow.orc as orc
    import pyarrow.parquet as pq

    try:
        with _open(config, entry) as f:
            size = footer_size(f, config.reader.format)
            if size > FOOTER_LIMIT:
                raise CorruptFileError(
                    NAME,
                    f"{config.location.url(entry.path)} declares a footer of {size} bytes, "
                    f"more than the {FOOTER_LIMIT // 2**20} MiB inference reads; the file is "
                    "damaged, or give the schema with .schema(...) "
                    "(ignoreCorruptFiles=true skips such files)",
                )
            config.budget.remaining -= size
            f.seek(0)
            if config.reader.format == "parquet":
                return pq.read_schema(f)
            return orc.ORCFile(f).schema
    except CorruptFileError:
        if config.reader.ignore_corrupt_files:
            return None
        raise
    except (pa.ArrowException, OSError, ValueError) as error:
        if config.reader.ignore_corrupt_files:
            return None
        raise _unreadable(config, entry, error) from None


def _footer_schema(config: _Inputs, files: list[FileEntry]) -> StructType:
    # A timestamp without a zone is TIMESTAMP_NTZ in parquet (Spark 4) and TIMESTAMP in orc;
    # parquet's legacy INT96 timestamps also arrive without a zone, in nanoseconds.
    naive = None if config.reader.format == "parquet" else TimestampType()
    merged: StructType | None = None
    for entry in files:
        if merged is not None and config.budget.remaining <= 0:
            break
        footer = _footer(config, entry)
        if footer is None or (config.reader.format == "orc" and not footer.names):
            continue
        schema = StructType([StructField(f.name, _footer_type(f.type, naive)) for f in footer])
        if not config.inference.merge_schema:
            return schema
        merged = schema if merged is None else _merge_footers(merged, schema, config, entry)
    if merged is None:
        raise SchemaError(
            NAME, f"cannot infer a schema: no readable {config.reader.format} footer in the sample"
        )
    return merged


def _footer_type(dtype: pa.DataType, naive: DataType | None) -> DataType:
    if pa.types.is_timestamp(dtype) and dtype.unit == "ns":
        return TimestampType()  # INT96 (or nanoseconds, which Spark reads as instants too)
    return arrow_to_spark(dtype, naive)


def _merge_footers(
    left: StructType, right: StructType, config: _Inputs, entry: FileEntry
) -> StructType:
    """Spark's StructType.merge: columns by name, the same type on both sides."""
    fields = list(left.fields)
    index = {f.name.lower(): i for i, f in enumerate(fields)}
    for f in right.fields:
        at = index.get(f.name.lower())
        if at is None:
            index[f.name.lower()] = len(fields)
            fields.append(f)
            continue
        merged = _merge_types(fields[at].dataType, f.dataType)
        if merged is None:
            raise SchemaError(
                NAME,
                f"mergeSchema: column {f.name!r} is {fields[at].dataType.simpleString()} in "
                f"earlier files but {f.dataType.simpleString()} in "
                f"{config.location.url(entry.path)}; the types must agree (give a schema)",
            )
        fields[at] = StructField(fields[at].name, merged)
    return StructType(fields)


def _merge_types(left: DataType, right: DataType) -> DataType | None:
    from pyspark.sql.types import ArrayType, MapType

    if left == right:
        return left
    if isinstance(left, StructType) and isinstance(right, StructType):
        names = {f.name.lower() for f in left.fields}
        fields = [
            StructField(f.name, _merge_types(f.dataType, right[f.name].dataType) or f.dataType)
            if f.name in right.names
            else f
            for f in left.fields
        ]
        fields += [f for f in right.fields if f.name.lower() not in names]
        return StructType(fields)
    if isinstance(left, ArrayType) and isinstance(right, ArrayType):
        element = _merge_types(left.elementType, right.elementType)
        return None if element is None else ArrayType(element)
    if isinstance(left, MapType) and isinstance(right, MapType):
        key = _merge_types(left.keyType, right.keyType)
        value = _merge_types(left.valueType, right.valueType)
        return None if key is None or value is None else MapType(key, value)
    return None


# -- json: every record -------------------------------------------------------------------
def _json_schema(config: _Inputs, files: list[FileEntry]) -> StructType:
    sampler = random.Random(_SEED)
    root: DataType = NullType()
    for entry in files:
        if config.budget.spent:
            break
        try:
            with _open(config, entry) as f:
                if config.reader.multi_line:
                    found = _json_document_type(config, entry, f, sampler)
                else:
                    found = _json_lines_type(config, entry, f, sampler)
        except (OSError, UnicodeDecodeError) as error:
            if config.reader.ignore_corrupt_files:
                continue
            raise _unreadable(config, entry, error) from None
        root = merge_json(root, found)
    schema = canonical(root)
    return schema if isinstance(schema, StructType) else StructType([])


def _json_lines_type(config: _Inputs, entry: FileEntry, f: Any, sampler: random.Random) -> DataType:
    """The type of a JSON Lines file, a block of whole lines at a time."""
    root: DataType = NullType()
    budget = config.budget
    where = config.location.url(entry.path)
    for piece in line_blocks(f, config.reader.encoding, budget, where):
        # pyarrow types a whole piece read within the budget; a piece read past it (to end the
        # line the budget cut, or to find the sample's first record) goes line by line.
        whole = config.inference.sampling_ratio >= 1 and budget.remaining >= 0
        fast = _arrow_json_type(piece.encode("utf-8"), config) if whole else None
        if fast is not None:
            root = merge_json(root, fast)
            budget.started = True
            continue
        for line in json_lines(piece):
            if budget.spent:
                break
            if not line.strip() or _skipped(config, sampler):
                continue
            root = merge_json(root, _json_record_type(config, entry, line))
            budget.started = True
    return root


def _json_document_type(
    config: _Inputs, entry: FileEntry, f: Any, sampler: random.Random
) -> DataType:
    """The type of a multiLine JSON file: one document, typed object by object; malformed
    as a whole when any part of it is (its types so far are then dropped, as in Spark)."""
    where = config.location.url(entry.path)
    records = json_document_records(f, config.reader.encoding, config.budget, where)
    found: DataType = NullType()
    try:
        first = next(records, None)
        if first is None or _skipped(config, sampler):
            return found
        for text in itertools.chain([first], records):
            if config.budget.spent:  # this object ends past the sample's bytes
                break
            found = merge_json(found, _json_record_type(config, entry, text.strip(), strict=True))
            config.budget.started = True
    except SchemaError:  # a record too large to hold: no verdict on the document
        raise
    except ValueError:  # the document (json_objects: MalformedRecordError) is malformed
        return _malformed(config, entry)
    return found


def _skipped(config: _Inputs, sampler: random.Random) -> bool:
    ratio = config.inference.sampling_ratio
    return ratio < 1 and sampler.random() >= ratio


def _json_record_type(
    config: _Inputs, entry: FileEntry, text: str, strict: bool = False
) -> DataType:
    """The type of one record's text (a line, or an object of a multiLine document);
    ``strict``: a malformed one raises ValueError (its whole document is malformed)."""
    inference = config.inference
    try:
        objects = json_objects(text)
    except ValueError:
        if strict:
            raise
        return _malformed(config, entry)
    root: DataType = NullType()
    for value in objects:
        found = json_value_type(value, inference.primitives_as_string, inference.prefers_decimal)
        root = merge_json(root, found)
    return root


def _malformed(config: _Inputs, entry: FileEntry) -> DataType:
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


def _arrow_json_type(data: bytes, config: _Inputs) -> DataType | None:
    """The file's type from pyarrow's own inference, when its rules give Spark's answer.

    Only UTF-8 text pyarrow reads without complaint and without single quotes or values
    that pyarrow and Spark type differently qualifies; the rest is typed record by record.
    """
    import codecs

    import pyarrow.json as pj

    if config.reader.multi_line or config.inference.prefers_decimal:
        return None
    if codecs.lookup(config.reader.encoding).name != "utf-8":
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
    return _spark_json_type(pa.struct(list(table.schema)), config.inference.primitives_as_string)


def _spark_json_type(dtype: pa.DataType, as_string: bool) -> DataType:
    from pyspark.sql.types import ArrayType, BooleanType, DoubleType, LongType

    t = pa.types
    if t.is_struct(dtype):
        fields = sorted((f.name, _spark_json_type(f.type, as_string)) for f in dtype)
        return StructType([StructField(name, ftype) for name, ftype in fields])
    if t.is_list(dtype):
        return ArrayType(_spark_json_type(dtype.value_type, as_string))
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
def _csv_records(
    config: _Inputs, entry: FileEntry, budget: Budget
) -> Generator[tuple[list[str | None], str], None, None]:
    with _open(config, entry) as f:
        yield from csv_records(f, config.reader, budget, config.location.url(entry.path))


def _csv_schema(config: _Inputs, files: list[FileEntry]) -> StructType:
    reader = config.reader
    header = _csv_records(config, files[0], Budget(0))  # its first record, whatever it costs
    first = next(header, None)
    header.close()
    if first is None:
        raise SchemaError(
            NAME, f"cannot infer a schema: {config.location.url(files[0].path)} has no records"
        )
    values, header_text = first
    names = _csv_names(values, reader.header, reader.null_value)
    types: list[DataType] = [NullType() for _ in names]
    if config.inference.infer_types:
        sampler = random.Random(_SEED)
        ratio = config.inference.sampling_ratio
        for entry in files:
            if config.budget.spent:
                break
            for tokens, raw in _csv_records(config, entry, config.budget):
                if config.budget.spent:
                    break
                if reader.header and raw == header_text:
                    continue
                if ratio < 1 and sampler.random() >= ratio:
                    continue
                for i, token in enumerate(tokens[: len(types)]):
                    types[i] = csv_token_type(types[i], token)
                config.budget.started = True
    columns = zip(names, types, strict=True)
    return StructType([StructField(name, canonical(t) or StringType()) for name, t in columns])


def _csv_names(values: list[str | None], header: bool, null_value: str) -> list[str]:
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


_INFER = {
    "parquet": _footer_schema,
    "orc": _footer_schema,
    "json": _json_schema,
    "csv": _csv_schema,
}


# -- partition folders and names ----------------------------------------------------------
def _with_partitions(config: SourceConfig, data: StructType, files: list[FileEntry]) -> StructType:
    from pysparksources.files.source.file_index import reads_partition_values

    if not reads_partition_values(config):
        return data
    columns: list[str] | None = None
    example = ""
    types: dict[str, DataType] = {}
    for entry in files:
        folder = relative_dir(config.base, entry.path)
        spec, _ = partition_spec(folder)
        names = [name for name, _ in spec]
        if columns is None:
            columns, example = names, folder
        elif [n.lower() for n in names] != [n.lower() for n in columns]:
            raise SchemaError(
                NAME,
                f"cannot infer partition columns: folder {folder or '.'!r} has "
                f"{names or 'none'} but {example or '.'!r} has {columns or 'none'}; every file "
                "must be as deep in the same col=value folders",
            )
        for (_, raw), column in zip(spec, columns, strict=True):
            value = None if raw == NULL_PARTITION else raw
            found = partition_value_type(value)
            types[column] = merge_partition(types[column], found) if column in types else found
    if not columns:
        return data
    lowered = {c.lower() for c in columns}
    kept = [f for f in data.fields if f.name.lower() not in lowered]
    added = [StructField(c, canonical(types[c]) or StringType()) for c in columns]
    return StructType(kept + added)


def _check_names(schema: StructType) -> None:
    seen: dict[str, str] = {}
    for name in schema.names:
        if name.lower() in seen:
            raise SchemaError(
                NAME,
                f"the inferred schema has column {seen[name.lower()]!r} and {name!r}, the same "
                "name compared case-insensitively as Spark does: give a schema "
                "(.schema(...)) that names one of them",
            )
        seen[name.lower()] = name
