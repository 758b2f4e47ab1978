"""Avro bodies of a received batch -> the ``body`` struct column; events that do not decode.

A read task turns each chunk of received events into the plain read schema first
(:mod:`.._arrowize`), then calls :func:`decode_batch`. Each body is decoded on its own with
fastavro (an undecodable event cannot spill into its neighbours), the results become one
Arrow array in a single conversion, and bad events are handled by ``mode`` /
``badRecordsPath`` like Spark's file readers: fail naming hub, partition and sequence number,
keep with a null body and a corrupt-record column, drop, or write to a folder and skip.

A body is bad when it does not decode, when it would decode into more values than its size
allows (:mod:`.body_bounds`, checked before fastavro reads it), or when the registry has no
usable schema under the id its content type names (:mod:`.schema_registry`). A registry that
cannot be asked fails the task instead: that says nothing about the event.
"""

from __future__ import annotations

import base64
import io
import json
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from pysparksources._core.arrow import spark_arrow_schema
from pysparksources._core.avro_schema import AvroNode, UnionNames, parse_schema, spark_type
from pysparksources._core.process_caches import PROCESS, ProcessCache
from pysparksources.errors import (
    MalformedRecordError,
    PySparkSourcesError,
    SchemaError,
    SchemaRegistryError,
)
from pysparksources.eventhubs import NAME
from pysparksources.eventhubs.avro.arrow_types import (
    arrow_type,
    cast,
    finish,
    raw_schema,
    union_shaper,
)
from pysparksources.eventhubs.avro.body_bounds import BodyBounds
from pysparksources.eventhubs.avro.schema_registry import schema_by_id, schema_id_of

if TYPE_CHECKING:
    from pysparksources.eventhubs.config import BodyFormat, SourceConfig

__all__ = ["decode_batch", "read_arrow_schema"]

# Body formats (reader's schema, registry, mode) a process decodes at most.
_FORMATS = 64
# Writers' schemas ready for fastavro a process keeps, least recently used first out.
_WRITERS = 1024


def read_arrow_schema(body: BodyFormat) -> pa.Schema:
    """The Arrow schema Spark expects for the read schema with this body format."""
    from pyspark.sql.types import BinaryType, StringType, StructField, StructType

    from pysparksources.eventhubs._schema import ARROW_SCHEMA

    assert body.schema_json is not None
    body_type = spark_type(parse_schema(body.schema_json, NAME)[1], UnionNames(NAME))
    fields = [StructField("body", body_type)]
    if body.mode == "PERMISSIVE" and body.bad_records_path is None:
        corrupt = StructType(
            [StructField("body", BinaryType()), StructField("error", StringType())]
        )
        fields.append(StructField(body.corrupt_column, corrupt))
    converted = spark_arrow_schema(StructType(fields))
    columns = [converted.field(0), *list(ARROW_SCHEMA)[1:]]
    return pa.schema(columns + list(converted)[1:])


class _Writer:
    """A writer's schema ready for fastavro, and whether its bodies need a bounds check."""

    def __init__(self, document: Any, avro: AvroNode) -> None:
        import fastavro

        self.parsed = fastavro.parse_schema(raw_schema(document))
        self.bounds = BodyBounds(avro)


class _Decoder:
    """One reader's schema, its fastavro form and the writers' schemas seen so far."""

    def __init__(self, body: BodyFormat) -> None:
        import fastavro

        if body.schema_json is None:
            raise SchemaError(NAME, "bodyFormat=avro needs avroSchema")
        document, self.avro = parse_schema(body.schema_json, NAME)
        self.reader = _Writer(document, self.avro)  # also the writer's without a registry
        self.raw_type = arrow_type(self.avro, raw=True)
        self.shaper = union_shaper(self.avro)
        self.arrow_schema = read_arrow_schema(body)
        self.registry = body.registry
        self._read = fastavro.schemaless_reader

    def _writer(self, content_type: str | None) -> _Writer | None:
        if self.registry is None:
            return None
        schema_id = schema_id_of(content_type)
        if schema_id is None:
            raise MalformedRecordError(
                NAME,
                f"content type {content_type!r} names no schema id (expected avro/binary+<id>)",
            )
        key = (self.registry.namespace, schema_id)
        writer = _WRITER_SCHEMAS.get(key)
        if writer is None:
            document, avro = schema_by_id(self.registry, schema_id)
            try:
                writer = _Writer(document, avro)
            except Exception as error:  # valid to our parser, not to fastavro's
                why = _describe_error(error)
                writer = f"schema {schema_id} is not a usable Avro schema ({why})"
            _WRITER_SCHEMAS.put(key, writer)
        if isinstance(writer, str):
            raise MalformedRecordError(NAME, writer)
        return writer

    def decode(self, body: bytes | None, content_type: str | None) -> Any:
        writer = self._writer(content_type)
        if body is None:
            raise MalformedRecordError(NAME, "the event has no body")
        schema = writer or self.reader
        if schema.bounds.needed:
            schema.bounds.check(body)
        stream = io.BytesIO(body)
        value = self._read(
            stream,
            schema.parsed,
            self.reader.parsed if writer is not None else None,
            return_record_name=True,
            return_record_name_override=True,
        )
        left = len(body) - stream.tell()
        if left:
            raise MalformedRecordError(NAME, f"{left} bytes are left after the record")
        return self.shaper(value) if self.shaper is not None else value


# Per process: a decoder per body format, and the writers' schemas by (namespace, id) for
# all of them (a writer's schema does not depend on the reader's); one fastavro refuses is
# kept as the reason (ids are immutable).
_DECODERS: ProcessCache[BodyFormat, _Decoder] = PROCESS.cache("eventhubs.avro-decoders", _FORMATS)
_WRITER_SCHEMAS: ProcessCache[tuple[str, str], _Writer | str] = PROCESS.cache(
    "eventhubs.avro-writer-schemas", _WRITERS
)


def _decoder(body: BodyFormat) -> _Decoder:
    return _DECODERS.get_or_make(body, lambda: _Decoder(body))


def _describe_error(error: Exception) -> str:
    text = error.detail if isinstance(error, PySparkSourcesError) else str(error)
    return (f"{type(error).__name__}: {text}" if text else type(error).__name__)[:500]


def decode_batch(
    config: SourceConfig, batch: pa.RecordBatch, content_types: list[Any]
) -> pa.RecordBatch:
    """``batch`` (plain read schema) with ``body`` decoded; bad events handled per ``mode``
    (FAILFAST: :class:`MalformedRecordError` naming the first bad event)."""
    body = config.body
    decoder = _decoder(body)
    bodies = batch.column(0).to_pylist()
    values: list[Any] = []
    errors: list[str | None] = []
    for raw, content_type in zip(bodies, content_types, strict=True):
        try:
            values.append(decoder.decode(raw, content_type))
            errors.append(None)
        except SchemaRegistryError:
            raise  # the registry is unreachable or refuses us: nothing known of the event
        except Exception as error:
            values.append(None)
            errors.append(_describe_error(error))
    bad = [i for i, e in enumerate(errors) if e is not None]
    if bad and not body.drops_bad and body.mode == "FAILFAST":
        raise MalformedRecordError(NAME, _failfast_message(config, batch, bad, errors))
    if bad and body.bad_records_path is not None:
        _write_bad_records(config, batch, bad, errors, content_types)
    decoded = finish(pa.array(values, type=decoder.raw_type), decoder.avro)
    schema = decoder.arrow_schema
    columns = [cast(decoded, schema.field(0).type), *batch.columns[1:]]
    if len(schema) > len(batch.columns):  # PERMISSIVE: the corrupt-record column
        is_bad = pa.array([e is not None for e in errors])
        corrupt_body = pc.if_else(is_bad, batch.column(0), pa.scalar(None, pa.binary()))
        corrupt = pa.StructArray.from_arrays(
            [corrupt_body, pa.array(errors, pa.string())],
            names=["body", "error"],
            mask=pc.invert(is_bad),
        )
        columns.append(corrupt.cast(schema.field(len(schema) - 1).type))
    result = pa.RecordBatch.from_arrays(columns, schema=schema)
    if bad and body.drops_bad:
        result = result.filter(pa.array([e is None for e in errors]))
    return result


def _failfast_message(
    config: SourceConfig, batch: pa.RecordBatch, bad: list[int], errors: list[str | None]
) -> str:
    first = bad[0]
    partition = batch.column(1)[first].as_py()
    sequence = batch.column(3)[first].as_py()
    return (
        f"the body of event sequenceNumber {sequence} in partition {partition} of "
        f"{config.connection.describe()} does not decode as Avro ({errors[first]}); "
        f"{len(bad)} of {batch.num_rows} events in this chunk do not. Set mode=PERMISSIVE "
        "(null body, error in columnNameOfCorruptRecord), mode=DROPMALFORMED or badRecordsPath "
        "to keep reading"
    )


def _write_bad_records(
    config: SourceConfig,
    batch: pa.RecordBatch,
    bad: list[int],
    errors: list[str | None],
    content_types: list[Any],
) -> None:
    """One JSON-lines file per chunk; its name comes from the chunk's first sequence number,
    so a retried task overwrites its own file instead of adding duplicates."""
    import fsspec

    path = config.body.bad_records_path
    assert path is not None
    rows = batch.select([0, 1, 2, 3, 4, 6]).take(pa.array(bad)).to_pylist()
    lines = []
    for row, i in zip(rows, bad, strict=True):
        line = {
            "eventHub": config.connection.event_hub,
            "partition": row["partition"],
            "offset": row["offset"],
            "sequenceNumber": row["sequenceNumber"],
            "enqueuedTime": row["enqueuedTime"].isoformat() if row["enqueuedTime"] else None,
            "partitionKey": row["partitionKey"],
            "contentType": content_types[i],
            "body": base64.b64encode(row["body"]).decode() if row["body"] is not None else None,
            "error": errors[i],
        }
        lines.append(json.dumps(line, sort_keys=True))
    fs, root = fsspec.core.url_to_fs(path)
    fs.makedirs(root, exist_ok=True)
    partition = rows[0]["partition"]
    first = batch.column(3)[0].as_py()
    name = f"{config.connection.event_hub}-{partition}-{first}.json"
    with fs.open(f"{root.rstrip('/')}/{name}", "w") as f:
        f.write("\n".join(lines) + "\n")
