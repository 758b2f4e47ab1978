"""avro: Avro object container files, read and written with fastavro (the ``avro`` extra).

Types follow spark-avro's documented mapping (the shared
:mod:`pysparksources._core.avro_schema`). A file is split at its sync markers: a task reads
the blocks whose marker starts in its byte range (``_avro_container``), which also
decompresses them (null, deflate, snappy, bzip2, xz, zstandard) without fastavro's optional
codec packages. Records are checked by their writer's schema, so there are no parse
modes: a file that does not decode fails, or is skipped with ``ignoreCorruptFiles``, like
parquet and orc; schema evolution and the rescued-data column work on the file's own columns.

Inference merges the writer schemas of the sampled files by column name (Spark's spark-avro
takes the first file's; the merge keeps its answer when every file has the same schema).
``avroSchema`` is a reader schema: files are resolved to it by Avro's rules, and without a
``.schema(...)`` it is the query's schema.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa
from pyspark.sql.types import StructField, StructType

from pysparksources._core.avro_schema import (
    AvroNode,
    UnionNames,
    fastavro_document,
    parse_schema,
    spark_type,
)
from pysparksources._core.avro_sink_schema import sink_problem
from pysparksources._core.option_table import Flag, Option, Text, Use
from pysparksources.errors import CorruptFileError, MalformedRecordError, SchemaError
from pysparksources.files import NAME
from pysparksources.files.formats._avro_container import (
    CODECS,
    MAX_HEADER_BYTES,
    DecodedStream,
    Header,
    blocks,
    header_size,
    read_header,
)
from pysparksources.files.formats._avro_read import (
    Decoding,
    Fit,
    check_unions,
    fitting,
    match_field,
    needs_names,
)
from pysparksources.files.formats._avro_schema import columns_of, merge_fields
from pysparksources.files.formats._avro_write import AvroWriter
from pysparksources.files.formats._file_format import (
    Batch,
    FileSplit,
    Fitter,
    PartWriter,
    Sample,
    WritableFormat,
)

if TYPE_CHECKING:
    from pysparksources.files.config import ReaderOptions, SinkConfig
    from pysparksources.files.storage.folder_listing import FileEntry

__all__ = [
    "AVRO_SCHEMA",
    "FORMAT",
    "POSITIONAL_FIELD_MATCHING",
    "RECORD_NAME",
    "RECORD_NAMESPACE",
    "STABLE_UNION_NAMES",
    "STABLE_UNION_PREFIX",
    "Avro",
]

_ROWS = 8192  # records decoded into one Arrow batch (Python dicts until then)
_BUFFER = 1 << 16  # what fastavro reads of the decoded stream at a time
_DECODE_ERRORS = (EOFError, IndexError, KeyError, TypeError, ValueError, OverflowError)


AVRO_SCHEMA = Text(
    name="avroSchema",
    doc="avro: a reader schema (Avro JSON, a record; checked when the options are read): files "
    "are resolved to it by Avro's schema resolution (renamed fields by alias, defaults for "
    "missing fields); without .schema(...) it gives the query's schema.",
    uses=Use.READ,
)
POSITIONAL_FIELD_MATCHING = Flag(
    name="positionalFieldMatching",
    doc="avro: match the schema's fields to Avro fields by position instead of by name.",
    default="false",
    uses=Use.READ,
)
STABLE_UNION_NAMES = Flag(
    name="enableStableIdentifiersForUnionType",
    doc="avro: name a union's struct fields after their types (member_int, member_string...) "
    "instead of member0, member1...",
    default="false",
    uses=Use.READ,
)
STABLE_UNION_PREFIX = Text(
    name="stableIdentifierPrefixForUnionType",
    doc="avro: the prefix of those names with enableStableIdentifiersForUnionType.",
    default="member_",
    uses=Use.READ,
)
RECORD_NAME = Text(
    name="recordName",
    doc="avro: the name of the written files' top-level record.",
    default="topLevelRecord",
    uses=Use.WRITE,
)
RECORD_NAMESPACE = Text(
    name="recordNamespace",
    doc="avro: the namespace of the written files' records.",
    default="",
    uses=Use.WRITE,
)


class Avro(WritableFormat):
    name = "avro"
    listed = 50
    title = "avro (object container files; the avro extra)"
    extension = ".avro"
    splittable = True
    # Avro compresses blocks inside the file; Spark names every part file .avro.
    codecs: ClassVar[Mapping[str, str]] = dict.fromkeys(CODECS, "")
    default_codec = "snappy"
    codec_inside_file = True

    # -- at query start, on the driver -----------------------------------------------------
    def option_problem(self, option: Option[Any], value: Any) -> str | None:
        if option is not AVRO_SCHEMA:
            return None
        try:
            columns_of(parse_schema(value, NAME, "avroSchema")[1], "avroSchema")
        except SchemaError as error:
            return f"expected an Avro schema (JSON) of records: {error.detail}"
        return None

    # -- inference, on the driver ---------------------------------------------------------
    def infer(self, sample: Sample, files: list[FileEntry]) -> StructType:
        given = sample.reader.format_option(AVRO_SCHEMA)
        unions = _unions(sample.reader)
        if given is not None:
            return _struct(parse_schema(given, NAME, "avroSchema")[1], unions, "avroSchema")
        merged: StructType | None = None
        for entry in files:
            if merged is not None and sample.budget.remaining <= 0:
                break
            node = self._writer_schema(sample, entry)
            if node is None:
                continue
            schema = _struct(node, unions, sample.location.url(entry.path))
            merged = schema if merged is None else _merged(merged, schema, sample, entry)
        if merged is None:
            raise SchemaError(NAME, "cannot infer a schema: no readable Avro file in the sample")
        return merged

    def _writer_schema(self, sample: Sample, entry: FileEntry) -> AvroNode | None:
        url = sample.location.url(entry.path)
        try:
            with sample.open(entry) as f:
                size = header_size(f)
                if size > MAX_HEADER_BYTES:
                    raise CorruptFileError(
                        NAME,
                        f"{url} declares an Avro header of {size} bytes, more than the "
                        f"{MAX_HEADER_BYTES >> 20} MiB inference reads; the file is damaged, or "
                        "give the schema with .schema(...) (ignoreCorruptFiles=true skips such "
                        "files)",
                    )
                sample.budget.remaining -= size
                header = read_header(f)
            return parse_schema(header.schema, NAME, f"the writer schema of {url}")[1]
        except CorruptFileError:
            if sample.reader.ignore_corrupt_files:
                return None
            raise
        except (MalformedRecordError, SchemaError, OSError) as error:
            if sample.reader.ignore_corrupt_files:
                return None
            raise sample.unreadable(entry, error) from None

    # -- reading, in tasks ----------------------------------------------------------------
    def batches(
        self, f: Any, split: FileSplit, wanted: pa.Schema, opts: ReaderOptions
    ) -> Iterator[Batch]:
        reading = _Reading.open(f, opts)
        fields = reading.fields
        names = [name for name, _ in fields]
        positional = opts.format_option(POSITIONAL_FIELD_MATCHING) is True
        chosen: list[tuple[str, AvroNode]] = []
        fits: list[Fit | None] = []
        matched: dict[str, str] = {}
        for position, fld in enumerate(wanted):
            index = match_field(names, fld.name, position, positional, "avro")
            if index is None:
                continue
            name, node = fields[index]
            matched[fld.name] = name
            if name not in [c for c, _ in chosen]:
                chosen.append((name, node))
                fits.append(
                    fitting(node, fld.type, fld.name, reading.unions, positional, "avro file")
                )
        decoding = Decoding(chosen, reading.unions, reading.named_values)
        for records in reading.records(f, split):
            if not chosen:  # none of the wanted columns: the rows still count
                yield pa.record_batch([pa.nulls(len(records))], names=[""]), matched
                continue
            arrays = [
                a if fit is None else fit(a)
                for a, fit in zip(decoding.columns(records), fits, strict=True)
            ]
            yield pa.RecordBatch.from_arrays(arrays, names=[c for c, _ in chosen]), matched

    def read_rescuing(self, f: Any, fitter: Fitter) -> Iterator[pa.RecordBatch]:
        reading = _Reading.open(f, fitter.reader)
        fields = list(reading.fields)
        decoding = Decoding(fields, reading.unions, reading.named_values)
        for records in reading.records(f, fitter.split):
            arrays = decoding.columns(records)
            natural = dict(zip([n for n, _ in fields], arrays, strict=True))
            yield fitter.columns(natural, len(records))

    # -- writing --------------------------------------------------------------------------
    def write_problem(self, data: list[pa.Field]) -> str | None:
        return sink_problem(data)

    def open_writer(self, stream: Any, schema: pa.Schema, config: SinkConfig) -> PartWriter:
        return AvroWriter(
            stream,
            schema,
            CODECS[config.compression],
            config.format_option(RECORD_NAME) or "topLevelRecord",
            config.format_option(RECORD_NAMESPACE) or "",
        )


def _unions(opts: ReaderOptions) -> UnionNames:
    prefix = opts.format_option(STABLE_UNION_PREFIX)
    return UnionNames(
        NAME,
        opts.format_option(STABLE_UNION_NAMES) is True,
        "member_" if prefix is None else prefix,
    )


def _struct(node: AvroNode, unions: UnionNames, what: str) -> StructType:
    check_unions(node, what)
    fields = columns_of(node, what)
    return StructType([StructField(name, spark_type(t, unions)) for name, t in fields])


def _merged(left: StructType, right: StructType, sample: Sample, entry: FileEntry) -> StructType:
    merged = merge_fields(left, right)
    if isinstance(merged, StructType):
        return merged
    raise _conflict(*merged, sample, entry)


def _conflict(
    fld: StructField, before: StructField, sample: Sample, entry: FileEntry
) -> SchemaError:
    return SchemaError(
        NAME,
        f"cannot infer a schema: column {fld.name!r} is {fld.dataType.simpleString()} in "
        f"{sample.location.url(entry.path)} but {before.dataType.simpleString()} in the "
        "files before it; give the schema with .schema(...) or avroSchema",
    )


@dataclass(frozen=True)
class _Reading:
    """One open file: its header, the schema its records are read with, how unions read."""

    header: Header
    writer: Any  # the writer's schema as JSON, logical types stripped
    reader: Any  # avroSchema's, likewise, or None
    fields: tuple[tuple[str, AvroNode], ...]  # the records' (avroSchema's, else the writer's)
    unions: UnionNames
    named_values: bool

    @classmethod
    def open(cls, f: Any, opts: ReaderOptions) -> _Reading:
        header = read_header(f)
        writer_doc, writer_node = parse_schema(header.schema, NAME, "the file's writer schema")
        given = opts.format_option(AVRO_SCHEMA)
        reader_doc = None
        root = writer_node
        what = "the file's writer schema"
        if given is not None:
            what = "avroSchema"
            reader_doc, root = parse_schema(given, NAME, what)
        fields = columns_of(root, what)
        check_unions(root, what)
        return cls(
            header,
            fastavro_document(writer_doc),
            None if reader_doc is None else fastavro_document(reader_doc),
            fields,
            _unions(opts),
            needs_names(root),
        )

    def records(self, f: Any, split: FileSplit) -> Iterator[list[Any]]:
        """The split's records, decoded by fastavro, in lists of up to ``_ROWS``."""
        import fastavro

        end = None if split.length is None else split.start + split.length
        pending: list[Any] = []
        stream = DecodedStream(
            json.dumps(self.writer), self.header.sync, blocks(f, self.header, split.start, end)
        )
        from fastavro.read import SchemaResolutionError
        from fastavro.schema import SchemaParseException

        try:
            reader = fastavro.reader(
                io.BufferedReader(stream, _BUFFER),
                reader_schema=self.reader,
                return_named_type=self.named_values,
            )
            for record in reader:
                pending.append(record)
                if len(pending) >= _ROWS:
                    yield pending
                    pending = []
            if pending:
                yield pending
        except (SchemaResolutionError, SchemaParseException) as error:
            problem = "does not resolve to avroSchema" if self.reader else "is refused by fastavro"
            raise SchemaError(NAME, f"the file's writer schema {problem}: {error}") from None
        except _DECODE_ERRORS as error:
            if pending:
                yield pending  # the records before the damage (ignoreCorruptFiles keeps them)
            if isinstance(error, MalformedRecordError):
                raise
            where = "" if stream.block is None else f" in the block at byte {stream.block.position}"
            raise MalformedRecordError(
                NAME, f"cannot decode an Avro record{where}: {type(error).__name__}: {error}"
            ) from None


FORMAT = Avro()
