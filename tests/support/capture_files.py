"""Event Hubs Capture's Avro files, as Capture writes them: its schema, its folder layout
``{Namespace}/{EventHub}/{PartitionId}/{Year}/{Month}/{Day}/{Hour}/{Minute}/{Second}.avro``
(Capture's default archive name format), deflate blocks."""

from __future__ import annotations

import datetime as dt
import io
import json
from typing import Any

import fastavro

# The schema of every Capture file (Azure's documentation, "Capture Event Hubs data in Avro").
CAPTURE_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "EventData",
    "namespace": "Microsoft.ServiceBus.Messaging",
    "fields": [
        {"name": "SequenceNumber", "type": "long"},
        {"name": "Offset", "type": "string"},
        {"name": "EnqueuedTimeUtc", "type": "string"},
        {
            "name": "SystemProperties",
            "type": {"type": "map", "values": ["long", "double", "string", "bytes"]},
        },
        {
            "name": "Properties",
            "type": {"type": "map", "values": ["long", "double", "string", "bytes", "null"]},
        },
        {"name": "Body", "type": ["null", "bytes"]},
    ],
}
# What pyfile infers from it (spark-avro's mapping): unions of several types are structs.
MEMBERS = "struct<member0:bigint,member1:double,member2:string,member3:binary>"
CAPTURE_DDL = (
    "struct<SequenceNumber:bigint,Offset:string,EnqueuedTimeUtc:string,"
    f"SystemProperties:map<string,{MEMBERS}>,Properties:map<string,{MEMBERS}>,Body:binary>"
)


def capture_path(namespace: str, hub: str, partition: int, at: dt.datetime) -> str:
    """Where Capture puts the file of ``partition`` written at ``at`` (relative)."""
    return f"{namespace}/{hub}/{partition}/{at:%Y}/{at:%m}/{at:%d}/{at:%H}/{at:%M}/{at:%S}.avro"


def hive_capture_path(namespace: str, hub: str, partition: int, at: dt.datetime) -> str:
    """The same, with Capture's archive name format written Hive style
    (``PartitionId={PartitionId}/Year={Year}/...``): the folders become columns."""
    return (
        f"{namespace}/{hub}/PartitionId={partition}/Year={at:%Y}/Month={at:%m}/Day={at:%d}/"
        f"Hour={at:%H}/Minute={at:%M}/{at:%S}.avro"
    )


def capture_file(partition: int, first: int, count: int, start: dt.datetime) -> bytes:
    """A Capture file of ``count`` JSON events, sequence numbers from ``first``."""
    records = []
    for seq in range(first, first + count):
        enqueued = start + dt.timedelta(milliseconds=seq)
        body = {"id": seq, "partition": partition, "reading": seq / 4}
        records.append(
            {
                "SequenceNumber": seq,
                "Offset": str(seq * 512),
                "EnqueuedTimeUtc": f"{enqueued:%m/%d/%Y %I:%M:%S %p}",
                "SystemProperties": {"x-opt-enqueued-time": int(enqueued.timestamp() * 1000)},
                "Properties": {"source": "sensor", "weight": 1.5, "none": None},
                "Body": json.dumps(body).encode(),
            }
        )
    buffer = io.BytesIO()
    fastavro.writer(buffer, fastavro.parse_schema(CAPTURE_SCHEMA), records, codec="deflate")
    return buffer.getvalue()
