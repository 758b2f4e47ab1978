"""The sink's ``bodyFormat=avro``: the Avro schema derived from the body column, and encoding.

Without ``avroSchema`` the schema is derived from the body column's Spark type the way
spark-avro's ``to_avro`` derives one (record ``topLevelRecord``, nested records named after
their fields, nullable fields as ``[type, "null"]`` unions, timestamps as timestamp-micros,
decimals as fixed). With a schema registry, the schema is looked up (or registered) once per
process and every event gets the content type ``avro/binary+<schema id>``, the form the
Azure SDK's AvroEncoder reads.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from pysparksources._core.avro_schema import (
    SPARK_LOGICAL_TYPES,
    UnionNames,
    canonical_schema_text,
    fastavro_document,
    parse_schema,
    spark_type,
)
from pysparksources._core.avro_sink_schema import sink_problem, sink_type
from pysparksources._core.process_caches import PROCESS, ProcessCache
from pysparksources.errors import MalformedRecordError, PySparkSourcesError, SchemaError
from pysparksources.eventhubs import NAME
from pysparksources.eventhubs.avro.arrow_types import avro_shaper

if TYPE_CHECKING:
    from pysparksources.eventhubs.config import BodyFormat

__all__ = ["derive_avro_schema", "encode_bodies", "schema_mismatch", "with_schema_id"]

# Avro schemas a process encodes with at most (one per sink query, usually).
_SCHEMAS = 64


def derive_avro_schema(body: pa.DataType) -> str:
    """to_avro's schema for a body column of Arrow type ``body`` (compact JSON); SchemaError
    when a type in it has no Avro equivalent or a field name is no Avro name."""
    problem = sink_problem([pa.field("body", body)])
    if problem is not None:
        raise SchemaError(NAME, problem)
    return canonical_schema_text(sink_type(body, "topLevelRecord", ""))


def schema_mismatch(schema_json: str, body: pa.DataType) -> str | None:
    """Why the body column cannot be encoded with the schema, or None when it matches."""
    from pysparksources._core.compat import spark_type_of

    wanted = spark_type(parse_schema(schema_json, NAME)[1], UnionNames(NAME)).simpleString()
    given = spark_type_of(body).simpleString()
    if wanted == given:
        return None
    return f"the body column is {given}, but avroSchema encodes {wanted}"


class _Encoder:
    def __init__(self, schema_json: str) -> None:
        import fastavro

        document, avro = parse_schema(schema_json, NAME)
        self.parsed = fastavro.parse_schema(fastavro_document(document, SPARK_LOGICAL_TYPES))
        self.shaper = avro_shaper(avro)
        self._write = fastavro.schemaless_writer

    def encode(self, value: Any) -> bytes:
        stream = io.BytesIO()
        self._write(stream, self.parsed, self.shaper(value) if self.shaper else value)
        return stream.getvalue()


# The schema's JSON -> its encoder, per process.
_ENCODERS: ProcessCache[str, _Encoder] = PROCESS.cache("eventhubs.avro-encoders", _SCHEMAS)


def _encoder(schema_json: str) -> _Encoder:
    return _ENCODERS.get_or_make(schema_json, lambda: _Encoder(schema_json))


def encode_bodies(
    body: BodyFormat, column: pa.Array, first_row: int
) -> tuple[list[bytes], str | None]:
    """Each row's Avro bytes and the events' content type (with a registry), or
    MalformedRecordError naming the task's row that does not encode."""
    assert body.schema_json is not None
    encoder = _encoder(body.schema_json)
    encoded = []
    for i, value in enumerate(column.to_pylist()):
        if value is None:
            raise MalformedRecordError(NAME, f"row {first_row + i} of the task has a null body")
        try:
            encoded.append(encoder.encode(value))
        except Exception as error:
            raise MalformedRecordError(
                NAME,
                f"row {first_row + i} of the task does not encode with avroSchema: "
                f"{type(error).__name__}: {_detail(error)}",
            ) from None
    return encoded, body.content_type


def _detail(error: Exception) -> str:
    return error.detail if isinstance(error, PySparkSourcesError) else str(error)


def with_schema_id(body: BodyFormat) -> BodyFormat:
    """The body format with the registry's content type for its schema, looked up (or
    registered) on the driver when the query starts, so a missing schema fails it there."""
    from dataclasses import replace

    from pysparksources.eventhubs.avro.schema_registry import AVRO_CONTENT_TYPE, schema_id_for

    if body.registry is None or body.schema_json is None:
        return body
    fullname = parse_schema(body.schema_json, NAME)[1].name
    if fullname is None:
        raise SchemaError(
            NAME,
            "the schema registry stores record schemas only: make the body column a struct "
            "(or avroSchema a record)",
        )
    schema_id = schema_id_for(body.registry, fullname, body.schema_json)
    return replace(body, content_type=f"{AVRO_CONTENT_TYPE}+{schema_id}")
