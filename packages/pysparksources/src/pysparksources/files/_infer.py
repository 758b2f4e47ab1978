"""A read without ``.schema(...)``: the schema Spark's own reader would infer, from a sample.

Runs on the driver at ``load()``. The sample is the first files by path, at most
``schemaSampleFiles`` of them and stopping once they hold ``schemaSampleBytes`` (Spark reads
every file; on a small folder the two are the same). Per format, as Spark infers:

- parquet and orc: the first file's footer, or every sampled footer merged (``mergeSchema``);
- json: every record's type (a fraction with ``samplingRatio``), fields sorted by name, a
  corrupt-record column when a record does not parse in PERMISSIVE mode;
- csv: names from the first file's header (``_c0``... without one), every column STRING
  unless ``inferSchema``.

Hive-style ``col=value`` folders add their columns at the end, typed from their values.
"""

from __future__ import annotations

import io
import random
from collections.abc import Iterator
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
from pysparksources.files._csv_rows import records_as_configured, whole_text
from pysparksources.files._filesystem import FileLocation
from pysparksources.files._infer_types import (
    arrow_to_spark,
    canonical,
    csv_token_type,
    json_value_type,
    merge_json,
    merge_partition,
    partition_value_type,
)
from pysparksources.files._json_rows import json_objects
from pysparksources.files._listing import FileEntry, partition_spec, relative_dir
from pysparksources.files.config import InferenceOptions, ReaderOptions, SourceConfig

__all__ = ["infer_files", "infer_schema"]

_SEED = 42  # sampling is reproducible: the same files give the same schema on every start


def infer_schema(config: SourceConfig) -> StructType:
    """The schema of the files under the source's path; :class:`SchemaError` if none can be."""
    from pysparksources.files._source_files import SourceLister, describe

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
    """What inference reads with: a source's config, or the same three fields on a task."""

    location: FileLocation
    reader: ReaderOptions
    inference: InferenceOptions


def infer_files(
    location: FileLocation,
    reader: ReaderOptions,
    inference: InferenceOptions,
    files: list[FileEntry],
) -> StructType:
    """The data columns (no partition columns) of ``files``, as :func:`infer_schema` types them."""
    return _INFER[reader.format](_Inputs(location, reader, inference), files)


def _sample(files: list[FileEntry], config: SourceConfig) -> list[FileEntry]:
    taken: list[FileEntry] = []
    size = 0
    for entry in files[: config.inference.sample_files]:
        if taken and size + entry.size > config.inference.sample_bytes:
            break
        taken.append(entry)
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
            if config.reader.format == "parquet":
                return pq.read_schema(f)
            return orc.ORCFile(f).schema
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
def _json_documents(data: bytes, config: _Inputs) -> list[str]:
    """The file's lines (its one document with multiLine) to type record by record."""
    from pysparksources.files._csv_rows import text_lines

    if config.reader.multi_line:
        return [whole_text(io.BytesIO(data), config.reader.encoding)]
    return list(text_lines(io.BytesIO(data), config.reader.encoding))


def _json_schema(config: _Inputs, files: list[FileEntry]) -> StructType:
    inference = config.inference
    corrupt = config.reader.corrupt_column
    sampler = random.Random(_SEED)
    root: DataType = NullType()
    for entry in files:
        try:
            with _open(config, entry) as f:
                data = f.read()
            fast = _arrow_json_type(data, config) if inference.sampling_ratio >= 1 else None
            documents = [] if fast is not None else _json_documents(data, config)
        except (OSError, UnicodeDecodeError) as error:
            if config.reader.ignore_corrupt_files:
                continue
            raise _unreadable(config, entry, error) from None
        if fast is not None:
            root = merge_json(root, fast)
            continue
        for text in documents:
            if not text.strip():
                continue
            if inference.sampling_ratio < 1 and sampler.random() >= inference.sampling_ratio:
                continue
            try:
                objects = json_objects(text.strip() if config.reader.multi_line else text)
            except ValueError:
                if config.reader.mode == "FAILFAST":
                    raise SchemaError(
                        NAME,
                        f"mode FAILFAST: a malformed JSON record in "
                        f"{config.location.url(entry.path)} (mode=PERMISSIVE keeps it)",
                    ) from None
                if config.reader.mode == "PERMISSIVE":
                    root = merge_json(root, StructType([StructField(corrupt, StringType())]))
                continue
            for value in objects:
                found = json_value_type(
                    value, inference.primitives_as_string, inference.prefers_decimal
                )
                root = merge_json(root, found)
    schema = canonical(root)
    return schema if isinstance(schema, StructType) else StructType([])


def _arrow_json_type(data: bytes, config: _Inputs) -> DataType | None:
    """The file's type from pyarrow's own inference, when its rules give Spark's answer.

    Only a UTF-8 file pyarrow reads without complaint and without single quotes or values
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
    try:
        table = pj.read_json(pa.BufferReader(data))
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
def _csv_records(config: _Inputs, entry: FileEntry) -> Iterator[tuple[list[str | None], str]]:
    with _open(config, entry) as f:
        yield from records_as_configured(f, config.reader)


def _csv_schema(config: _Inputs, files: list[FileEntry]) -> StructType:
    reader = config.reader
    first = next(iter(_csv_records(config, files[0])), None)
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
            for tokens, raw in _csv_records(config, entry):
                if reader.header and raw == header_text:
                    continue
                if ratio < 1 and sampler.random() >= ratio:
                    continue
                for i, token in enumerate(tokens[: len(types)]):
                    types[i] = csv_token_type(types[i], token)
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
    from pysparksources.files._source_files import reads_partition_values

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
            value = None if raw == "__HIVE_DEFAULT_PARTITION__" else raw
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
