"""The read schema, identical to the Scala azure-event-hubs-spark connector's, for migration."""

from __future__ import annotations

import pyarrow as pa

__all__ = ["ARROW_SCHEMA", "READ_SCHEMA_DDL", "STRIPPED_SYSTEM_PROPERTIES"]

READ_SCHEMA_DDL = (
    "body binary, partition string, offset string, sequenceNumber long, "
    "enqueuedTime timestamp, publisher string, partitionKey string, "
    "properties map<string,string>, systemProperties map<string,string>"
)

_STRING_MAP = pa.map_(pa.string(), pa.string())

# Spark checks the first RecordBatch's schema against this exactly (timestamps in us, UTC).
ARROW_SCHEMA = pa.schema(
    [
        ("body", pa.binary()),
        ("partition", pa.string()),
        ("offset", pa.string()),
        ("sequenceNumber", pa.int64()),
        ("enqueuedTime", pa.timestamp("us", tz="UTC")),
        ("publisher", pa.string()),
        ("partitionKey", pa.string()),
        ("properties", _STRING_MAP),
        ("systemProperties", _STRING_MAP),
    ]
)

# Already columns of their own; the Scala connector left them out of systemProperties too.
STRIPPED_SYSTEM_PROPERTIES = frozenset(
    {"x-opt-offset", "x-opt-sequence-number", "x-opt-enqueued-time"}
)
