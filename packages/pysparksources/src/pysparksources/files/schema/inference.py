"""A read without ``.schema(...)``: the schema Spark's own reader would infer, from a sample.

Runs on the driver at ``load()``. The sample is the first files by path, at most
``schemaSampleFiles`` of them (csv and json: only as many as ``schemaSampleBytes`` reaches
into), read until ``schemaSampleBytes`` are read (Spark reads every file; on a small folder the
two are the same). No file is held whole: each format streams what it reads (see its
``infer``): parquet and orc their footers, json every record, csv the header and the tokens.

Hive-style ``col=value`` folders add their columns at the end, typed from their values.
"""

from __future__ import annotations

from pyspark.sql.types import DataType, StringType, StructField, StructType

from pysparksources.errors import SchemaError
from pysparksources.files import NAME
from pysparksources.files.config import InferenceOptions, ReaderOptions, SourceConfig
from pysparksources.files.formats import Sample, format_named
from pysparksources.files.storage.filesystem import FileLocation
from pysparksources.files.storage.folder_listing import FileEntry
from pysparksources.files.storage.partition_folders import (
    NULL_PARTITION,
    partition_spec,
    relative_dir,
)
from pysparksources.files.values.inferred_types import (
    canonical,
    merge_partition,
    partition_value_type,
)

__all__ = ["infer_files", "infer_schema"]


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
    fmt = format_named(config.reader.format)
    sampled = fmt.sample(sorted(files, key=lambda f: f.path), config.inference)
    data = infer_files(config.location, config.reader, config.inference, sampled)
    schema = _with_partitions(config, data, files)
    _check_names(schema)
    return schema


def infer_files(
    location: FileLocation,
    reader: ReaderOptions,
    inference: InferenceOptions,
    files: list[FileEntry],
) -> StructType:
    """The data columns (no partition columns) of ``files``, as :func:`infer_schema` types them."""
    sample = Sample.of(location, reader, inference)
    return format_named(reader.format).infer(sample, files)


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
