"""Writing a part file as an Avro object container file, as Spark's Avro writer would.

The schema is Spark's (``sink_schema``). Arrow turns timestamps and dates into the numbers
Avro stores before Python sees them; Python makes decimals the bytes of their fixed type and
maps the dicts fastavro wants. fastavro encodes the records (with the schema's logical types
stripped: the values are already as stored) into blocks of about 64 KB, which
``_avro_container`` compresses and frames between sync markers.
"""

from __future__ import annotations

import decimal
import io
import json
import os
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from pysparksources._core.avro_schema import fastavro_document
from pysparksources._core.avro_sink_schema import min_bytes, sink_schema
from pysparksources.files.formats._avro_container import (
    SYNC_SIZE,
    compress,
    encode_block,
    encode_header,
)

__all__ = ["AvroWriter"]

BLOCK_BYTES = 64_000  # Avro's Java writer's default sync interval
Transform = Callable[[Any], Any]


class AvroWriter:
    """One part file's records, written to ``stream`` block by block."""

    def __init__(
        self, stream: Any, schema: pa.Schema, codec: str, record_name: str, namespace: str
    ) -> None:
        import fastavro

        avro = sink_schema(list(schema), record_name, namespace)
        self._parsed = fastavro.parse_schema(fastavro_document(avro))
        self._stream = stream
        self._codec = codec
        self._sync = os.urandom(SYNC_SIZE)
        # Timestamps made microseconds first (Spark sends them so), then the numbers stored.
        self._micros = pa.schema([pa.field(f.name, _stored_type(f.type, True)) for f in schema])
        self._stored = pa.schema([pa.field(f.name, _stored_type(f.type, False)) for f in schema])
        self._transforms = [(f.name, t) for f in schema if (t := _transform(f.type)) is not None]
        self._buffer = io.BytesIO()
        self._count = 0
        stream.write(encode_header(json.dumps(avro), codec, self._sync))

    def write(self, batch: pa.RecordBatch) -> None:
        import fastavro

        stored = batch
        if batch.schema != self._stored:
            stored = batch.cast(self._micros).cast(self._stored)
        for record in stored.to_pylist():
            for name, transform in self._transforms:
                record[name] = transform(record[name])
            fastavro.schemaless_writer(self._buffer, self._parsed, record)
            self._count += 1
            if self._buffer.tell() >= BLOCK_BYTES:
                self._flush()

    def _flush(self) -> None:
        if self._count:
            data = compress(self._codec, self._buffer.getvalue())
            self._stream.write(encode_block(self._count, data, self._sync))
            self._buffer = io.BytesIO()
            self._count = 0

    def close(self) -> None:
        self._flush()


def _stored_type(dtype: pa.DataType, micros: bool) -> pa.DataType:
    """The Arrow type of the numbers Avro stores for ``dtype``: timestamps as microseconds
    (int64), dates as days (int32); nested types likewise. ``micros``: only timestamps made
    microseconds (what is cast first)."""
    t = pa.types
    if t.is_timestamp(dtype):
        return pa.timestamp("us", dtype.tz) if micros else pa.int64()
    if t.is_date32(dtype) and not micros:
        return pa.int32()
    if t.is_struct(dtype):
        return pa.struct(
            [pa.field(f.name, _stored_type(f.type, micros), f.nullable) for f in dtype]
        )
    if t.is_list(dtype) or t.is_large_list(dtype):
        item = dtype.value_field
        return pa.list_(pa.field(item.name, _stored_type(item.type, micros), item.nullable))
    if t.is_map(dtype):
        item = dtype.item_field
        return pa.map_(
            dtype.key_type, pa.field(item.name, _stored_type(item.type, micros), item.nullable)
        )
    return dtype


def _transform(dtype: pa.DataType) -> Transform | None:
    """What Python does to a value of ``dtype`` before fastavro takes it (None: nothing)."""
    t = pa.types
    if t.is_decimal(dtype):
        size, scale = min_bytes(dtype.precision), dtype.scale
        return lambda value: None if value is None else _decimal_bytes(value, size, scale)
    if t.is_struct(dtype):
        inner = [(f.name, tr) for f in dtype if (tr := _transform(f.type)) is not None]
        if not inner:
            return None

        def record(value: Any) -> Any:
            if value is not None:
                for name, transform in inner:
                    value[name] = transform(value[name])
            return value

        return record
    if t.is_list(dtype) or t.is_large_list(dtype):
        item = _transform(dtype.value_type)
        if item is None:
            return None
        return lambda value: None if value is None else [item(v) for v in value]
    if t.is_map(dtype):
        entry = _transform(dtype.item_type)
        if entry is None:
            return lambda value: None if value is None else dict(value)
        return lambda value: None if value is None else {k: entry(v) for k, v in value}
    return None


def _decimal_bytes(value: decimal.Decimal, size: int, scale: int) -> bytes:
    """A decimal as its fixed type stores it: the unscaled value, big-endian two's complement."""
    unscaled = int(value.scaleb(scale))  # exact: Arrow's values have the type's scale
    return unscaled.to_bytes(size, "big", signed=True)
