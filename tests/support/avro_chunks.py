"""Chunks of received events as a pyeventhub read task hands them to the Avro decoder."""

from __future__ import annotations

import io
import json
from typing import Any

import fastavro
import pyarrow as pa

from pysparksources._core.option_table import Use
from pysparksources.eventhubs._schema import ARROW_SCHEMA
from pysparksources.eventhubs.config import SourceConfig
from pysparksources.eventhubs.options import parse_options

CONN = "Endpoint=sb://ns.example/;SharedAccessKeyName=p;SharedAccessKey=SECRETKEY;EntityPath=h"


def avro_bytes(schema: Any, record: Any) -> bytes:
    stream = io.BytesIO()
    fastavro.schemaless_writer(stream, fastavro.parse_schema(schema), record)
    return stream.getvalue()


def received(bodies: list[bytes | None], first: int = 40) -> pa.RecordBatch:
    """A chunk in the plain read schema of partition 3, sequence numbers from ``first``."""
    n = len(bodies)
    columns = [
        pa.array(bodies, pa.binary()),
        pa.array(["3"] * n),
        pa.array([str(100 * i) for i in range(n)]),
        pa.array(range(first, first + n), pa.int64()),
        pa.array([1_700_000_000_000_000] * n, pa.timestamp("us", tz="UTC")),
        pa.array([None] * n, pa.string()),
        pa.array(["k"] * n),
        pa.array([[]] * n, ARROW_SCHEMA.field(7).type),
        pa.array([[]] * n, ARROW_SCHEMA.field(8).type),
    ]
    return pa.RecordBatch.from_arrays(columns, schema=ARROW_SCHEMA)


def avro_source(schema: Any, **options: str) -> SourceConfig:
    """A stream read's config with bodyFormat=avro and ``schema`` as avroSchema."""
    raw = {"connectionString": CONN, "bodyFormat": "avro", "avroSchema": json.dumps(schema)}
    return parse_options({**raw, **options}, Use.STREAM_READ)
