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
from pysparksources._core.process_caches import PROCESS, ProcessCache
from pysparksources.errors import MalformedRecordError, PySparkSourcesError, SchemaError
from pysparksources.eventhubs import NAME
from pysparksources.eventhubs.avro.arrow_types import avro_shaper

if TYPE_CHECKING:
    from pysparksources.eventhubs.config import BodyFormat

__all__ = ["derive_avro_schema", "encode_bodies", "schema_mismatch", "with_schema_id"]

# Avro schemas a process encodes with at most (one per sink query, usually).
_SCHEMAS = 64


def _min_bytes(precision: int) -> int:
    """Fewest bytes whose two's complement holds every unscaled value of ``precision`` digits."""
    size = 1
    while 2 ** (8 * size - 1) < 10**precision:
        size += 1
    return size


def _avro_of(arrow: pa.DataType, record: str, namespace: str) -> Any:
    if pa.types.is_boolean(arrow):
        return "boolean"
    if pa.types.is_int8(arrow) or pa.types.is_int16(arrow) or pa.types.is_int32(arrow):
        return "int"
    if pa.types.is_int64(arrow):
        return "long"
    if pa.types.is_float32(arrow):
        return "float"
    if pa.types.is_float64(arrow):
        return "double"
    if pa.types.is_string(arrow) or pa.types.is_large_string(arrow):
        return "string"
    if pa.types.is_binary(arrow) or pa.types.is_large_binary(arrow):
        return "bytes"
    if pa.types.is_date32(arrow):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_timestamp(arrow):
        logical = "timestamp-micros" if arrow.tz else "local-timestamp-micros"
        return {"type": "long", "logicalType": logical}
    if pa.types.is_decimal(arrow):
        name = f"{namespace}.{record}.fixed" if namespace else f"{record}.fixed"
        return {
            "type": "fixed",
            "name": name,
            "size": _min_bytes(arrow.precision),
            "logicalType": "decimal",
            "precision": arrow.precision,
            "scale": arrow.scale,
        }
    if pa.types.is_list(arrow) or pa.types.is_large_list(arrow):
        item = arrow.value_field
        return {"type": "array", "items": _nullable(item, record, namespace)}
    if pa.types.is_map(arrow):
        if not pa.types.is_string(arrow.key_type):
            raise SchemaError(NAME, f"map keys must be strings for Avro, not {arrow.key_type}")
        return {"type": "map", "values": _nullable(arrow.item_field, record, namespace)}
    if pa.types.is_struct(arrow):
        inner = f"{namespace}.{record}" if namespace else record
        fields = [
            {"name": f.name, "type": _nullable(f, f.name, inner)}
            for f in (arrow.field(i) for i in range(arrow.num_fields))
        ]
        document: dict[str, Any] = {"type": "record", "name": record}
        if namespace:
            document["namespace"] = namespace
        document["fields"] = fields
        return document
    raise SchemaError(NAME, f"Arrow type {arrow} has no Avro equivalent")


def _nullable(field: pa.Field, record: str, namespace: str) -> Any:
    avro = _avro_of(field.type, record, namespace)
    return [avro, "null"] if field.nullable else avro


def derive_avro_schema(body: pa.DataType) -> str:
    """to_avro's schema for a body column of Arrow type ``body`` (compact JSON); SchemaError
    when a type in it has no Avro equivalent."""
    return canonical_schema_text(_avro_of(body, "topLevelRecord", ""))


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
