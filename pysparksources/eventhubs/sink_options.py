"""pyeventhub sink options and input schema, validated once when the query starts.

Spark builds the writer on the driver before the first batch, so a bad option or an input
column the sink cannot send fails the query at its start, naming it, instead of inside a task.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pyarrow as pa

from pysparksources._options import OptionError, Options
from pysparksources.eventhubs._connection import (
    CONNECTION_OPTIONS,
    SECRET_OPTIONS,
    EventHubConnection,
    parse_connection,
)

__all__ = ["ALIASES", "COLUMNS", "OPTIONS", "SINK", "SinkConfig", "parse_sink_options"]

SINK = "pyeventhub"

# name -> (default shown in the docs, meaning). The README's sink section lists every one.
OPTIONS: dict[str, tuple[str, str]] = {
    **CONNECTION_OPTIONS,
    "maxBatchBytes": (
        "the hub's maximum message size",
        "most bytes per EventDataBatch (one AMQP message); smaller values send smaller batches",
    ),
    "maxRetries": ("5", "retries of a failed send (server busy, timeouts, lost connections)"),
    "retryBackoff": ("500ms", "first wait between retries; doubles each retry, at most 30s"),
    "sendTimeout": ("60s", "longest wait for one batch's acknowledgement"),
    "stampBatchId": (
        "false",
        "add properties spark.batchId, spark.partition and spark.row to every event so "
        "consumers can drop events a replayed batch sent again",
    ),
    "checkpointLocation": ("unset", "Spark's own option: the query's checkpoint (not read here)"),
}

# Scala connector name (lower case) -> ours, accepted for migration.
ALIASES = {"eventhubs.connectionstring": "connectionString"}

# Input column -> what it may hold.
COLUMNS: dict[str, str] = {
    "body": "required: string or binary",
    "partitionId": "optional (alias partition): the target partition, string or integer",
    "partitionKey": "optional: string; events with one key land in one partition",
    "properties": "optional: map<string,string> of application properties",
}


@dataclass(frozen=True)
class SinkConfig:
    """Everything a write task needs; picklable, secrets only inside ``connection``."""

    connection: EventHubConnection
    max_batch_bytes: int | None
    max_retries: int
    retry_backoff_s: float
    send_timeout_s: float
    stamp: bool
    partition_column: str | None
    key_column: str | None
    properties_column: str | None


def _canonical(raw: Mapping[str, str]) -> dict[str, str]:
    return {ALIASES.get(str(k).lower(), str(k)): str(v) for k, v in raw.items()}


def _column_error(name: str, value: str, accepted: str) -> OptionError:
    return OptionError(SINK, f"column {name}", value, accepted)


def _check_columns(schema: pa.Schema) -> tuple[str | None, str | None, str | None]:
    names = {field.name.lower(): field for field in schema}
    body = names.get("body")
    if body is None:
        raise _column_error("body", "missing", "the input needs a body column " + COLUMNS["body"])
    if not (pa.types.is_string(body.type) or pa.types.is_binary(body.type)):
        raise _column_error("body", str(body.type), COLUMNS["body"])
    partition = names.get("partitionid") or names.get("partition")
    if "partitionid" in names and "partition" in names:
        raise _column_error("partition", "given twice", "use one of partitionId or partition")
    if partition is not None and not (
        pa.types.is_string(partition.type) or pa.types.is_integer(partition.type)
    ):
        raise _column_error(partition.name, str(partition.type), COLUMNS["partitionId"])
    key = names.get("partitionkey")
    if key is not None and not pa.types.is_string(key.type):
        raise _column_error(key.name, str(key.type), COLUMNS["partitionKey"])
    props = names.get("properties")
    if props is not None and not (
        pa.types.is_map(props.type)
        and pa.types.is_string(props.type.key_type)
        and pa.types.is_string(props.type.item_type)
    ):
        raise _column_error(props.name, str(props.type), COLUMNS["properties"])
    known = {"body", "partitionid", "partition", "partitionkey", "properties"}
    for field in schema:
        if field.name.lower() not in known:
            raise _column_error(
                field.name,
                str(field.type),
                "unexpected input column; the sink takes body, partitionId (or partition), "
                "partitionKey and properties -- select only those",
            )
    return (
        partition.name if partition is not None else None,
        key.name if key is not None else None,
        props.name if props is not None else None,
    )


def parse_sink_options(raw: Mapping[str, str], schema: pa.Schema) -> SinkConfig:
    """Validate the options and the input schema; raise :class:`OptionError` on the first bad."""
    options = Options(SINK, _canonical(raw), OPTIONS, secrets=SECRET_OPTIONS)
    connection = parse_connection(options)
    max_bytes = options.integer("maxBatchBytes", None, minimum=1024)
    retries = options.integer("maxRetries", 5, minimum=0, maximum=100)
    backoff = options.duration_seconds("retryBackoff", 0.5)
    timeout = options.duration_seconds("sendTimeout", 60.0, minimum=1)
    stamp = options.boolean("stampBatchId", False)
    partition, key, props = _check_columns(schema)
    return SinkConfig(
        connection=connection,
        max_batch_bytes=max_bytes,
        max_retries=int(retries or 0),
        retry_backoff_s=backoff,
        send_timeout_s=timeout,
        stamp=stamp,
        partition_column=partition,
        key_column=key,
        properties_column=props,
    )
