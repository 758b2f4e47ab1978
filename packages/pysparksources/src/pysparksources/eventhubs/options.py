"""pyeventhub's options, validated once when the query starts: the reader's, then the writer's.

Both share the connection options (names, secrets, authentication) of ``_connection``. Spark
builds readers and writers on the driver before the first batch, so a bad option, or an input
column the sink cannot send, fails the query at its start, naming it, instead of inside a task.
Scala connector names are accepted as aliases, for migration.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyarrow as pa

from pysparksources._core.legacy_options import Options
from pysparksources.errors import OptionError
from pysparksources.eventhubs._body_format import (
    BINARY,
    BODY_SINK_OPTIONS,
    BODY_SOURCE_OPTIONS,
    BodyFormat,
    parse_body_format,
    read_schema_ddl,
)
from pysparksources.eventhubs._connection import (
    CONNECTION_OPTIONS,
    SECRET_OPTIONS,
    EventHubConnection,
    parse_connection,
)
from pysparksources.eventhubs._positions import (
    ACCEPTED,
    END,
    START,
    Position,
    PositionError,
    parse_position,
    parse_positions,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "NAME",
    "SINK_ALIASES",
    "SINK_COLUMNS",
    "SINK_OPTIONS",
    "SOURCE_ALIASES",
    "SOURCE_OPTIONS",
    "SinkConfig",
    "SourceConfig",
    "parse_sink_options",
    "parse_source_options",
    "read_schema",
]

NAME = "pyeventhub"

# -- the reader ---------------------------------------------------------------------------
# name -> (default shown in the docs, meaning). docs/pyeventhub-source.md lists every one.
SOURCE_OPTIONS: dict[str, tuple[str, str]] = {
    **CONNECTION_OPTIONS,
    "consumerGroup": ("$Default", "consumer group to read as"),
    "startingPosition": (
        "@latest (streaming), start (batch)",
        "where a NEW query starts in every partition; ignored once the checkpoint exists",
    ),
    "startingPositions": (
        "unset",
        'per-partition starting positions, JSON keyed by partition id: {"0": {"seqNo": 5}}',
    ),
    "endingPosition": ("@latest", "batch reads only: where to stop in every partition"),
    "endingPositions": ("unset", "batch reads only: per-partition ending positions"),
    "maxEventsPerTrigger": (
        "unset (all available)",
        "most events per micro-batch, split across partitions by backlog",
    ),
    "minEventsPerTrigger": (
        "unset",
        "hold a micro-batch back until this many events wait (over the read partitions) or "
        "maxTriggerDelay has passed since the previous batch; ignored by AvailableNow",
    ),
    "maxTriggerDelay": (
        "15m",
        "with minEventsPerTrigger: the longest a waiting event is held back after the previous "
        "batch",
    ),
    "partitions": (
        "unset (every partition)",
        "read only these partition ids, comma-separated: 0,2; fixed for the life of a checkpoint",
    ),
    "maxEventsPerPartition": (
        "unset",
        "split a partition's range into Spark partitions of at most this many events "
        "(Kafka's maxRecordsPerPartition)",
    ),
    "minPartitions": (
        "unset",
        "split the largest ranges so a batch has about this many Spark partitions (Kafka's "
        "minPartitions)",
    ),
    "failOnDataLoss": (
        "true",
        "fail when events expired before being read; false: skip to the first retained event",
    ),
    "receiverTimeout": ("60s", "longest wait for the next event a task knows exists"),
    "operationTimeout": (
        "300s",
        "bound on metadata calls (partition ids and properties) and on finding an offset or "
        "enqueuedTime position; past it the query fails",
    ),
    "prefetchCount": ("500", "events the SDK prefetches per receiver"),
    "receiveBatchSize": ("500", "most events per SDK receive_batch call"),
    "useExclusiveReceiver": (
        "false",
        "epoch (owner_level) receivers: exclusive per consumer group and partition",
    ),
    "partitionPreferredLocationStrategy": (
        "Hash",
        "Hash or BalancedHash: executor-slot key used to order the planned partitions",
    ),
    "receiverIdleTimeout": ("120s", "close an executor's cached receiver unused this long"),
    "receiverBufferBytes": (
        "67108864 (64 MiB)",
        "most bytes of received events the cached receivers of one Python worker hold ahead "
        "of its tasks, all partitions together (body + ~1.5 KB per event); parked receivers "
        "fill at most half; an event larger than this is still read, one at a time",
    ),
    "partitionInfoCacheInterval": (
        "1s",
        "reuse partition properties this long on the driver (Spark polls latestOffset often); "
        "partition ids are re-read every 30s, so a partition added to the hub is read within "
        "half a minute",
    ),
    "taskStatsPath": (
        "unset",
        "diagnostics folder: each read task appends one JSON line (batch, partition, cache hit)",
    ),
    **BODY_SOURCE_OPTIONS,
}

# Scala connector name -> our name, accepted for migration (one option: giving both is an error).
SOURCE_ALIASES: dict[str, str] = {
    f"eventhubs.{name}": name
    for name in (
        "connectionString",
        "consumerGroup",
        "startingPosition",
        "startingPositions",
        "endingPosition",
        "endingPositions",
        "receiverTimeout",
        "operationTimeout",
        "prefetchCount",
        "useExclusiveReceiver",
        "maxEventsPerTrigger",
    )
}

_BUFFER_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class SourceConfig:
    """Everything a reader needs, validated; picklable (executors get it inside partitions)."""

    connection: EventHubConnection
    consumer_group: str
    starting: Position
    starting_per_partition: dict[str, Position] = field(default_factory=dict)
    ending: Position = END
    ending_per_partition: dict[str, Position] = field(default_factory=dict)
    max_events_per_trigger: int | None = None
    min_events_per_trigger: int | None = None
    max_trigger_delay_s: float = 900.0
    partitions: tuple[str, ...] | None = None
    max_events_per_partition: int | None = None
    min_partitions: int | None = None
    fail_on_data_loss: bool = True
    receiver_timeout_s: float = 60.0
    operation_timeout_s: float = 300.0
    prefetch: int = 500
    receive_batch_size: int = 500
    exclusive: bool = False
    locality: str = "Hash"
    idle_timeout_s: float = 120.0
    buffer_bytes: int = _BUFFER_BYTES
    info_cache_s: float = 1.0
    task_stats_path: str | None = None
    body: BodyFormat = BINARY

    def describe(self) -> str:
        return f"pyeventhub[{self.connection.describe()}, group {self.consumer_group}]"


def _position(options: Options, name: str, default: Position) -> Position:
    text = options.raw(name)
    if text is None:
        return default
    try:
        return parse_position(text)
    except PositionError as e:
        raise options.error(name, f"{e}; expected {ACCEPTED}") from None


def _positions(options: Options, name: str) -> dict[str, Position]:
    text = options.raw(name)
    if text is None:
        return {}
    try:
        return parse_positions(text)
    except PositionError as e:
        raise options.error(
            name, f"{e}; expected a JSON object keyed by partition id, each value {ACCEPTED}"
        ) from None


def _partition_ids(options: Options) -> tuple[str, ...] | None:
    text = options.raw("partitions")
    if text is None:
        return None
    accepted = "expected partition ids separated by commas, such as 0,2"
    items = [item.strip() for item in text.split(",")]
    if not items or not all(item.isdigit() for item in items):
        raise options.error("partitions", accepted)
    ids = [str(int(item)) for item in items]
    if len(set(ids)) != len(ids):
        raise options.error("partitions", accepted + ", each once")
    return tuple(sorted(ids, key=int))


def _trigger_bounds(
    options: Options, streaming: bool | None
) -> tuple[int | None, int | None, float]:
    """maxEventsPerTrigger, minEventsPerTrigger and maxTriggerDelay, checked together."""
    per_trigger = options.integer("maxEventsPerTrigger", minimum=1)
    min_per_trigger = options.integer("minEventsPerTrigger", minimum=1)
    for name in ("maxEventsPerTrigger", "minEventsPerTrigger", "maxTriggerDelay"):
        if options.has(name) and streaming is False:
            raise options.error(name, "only for readStream")
    if options.has("maxTriggerDelay") and min_per_trigger is None:
        raise options.error("maxTriggerDelay", "only with minEventsPerTrigger")
    if min_per_trigger is not None and per_trigger is not None and min_per_trigger > per_trigger:
        raise options.error(
            "minEventsPerTrigger",
            f"expected at most maxEventsPerTrigger ({per_trigger}): a batch holds between the two",
        )
    delay = options.duration_seconds("maxTriggerDelay", 900.0)
    return per_trigger, min_per_trigger, delay


def parse_source_options(raw: Mapping[str, str], streaming: bool | None) -> SourceConfig:
    """Validate every reader option; raise OptionError naming the first bad one.

    ``streaming`` is None when Spark asks for the schema at ``load()``, where a stream and a
    batch read look the same: the checks that depend on it wait for the reader.
    """
    options = Options(NAME, raw, SOURCE_OPTIONS, aliases=SOURCE_ALIASES, secrets=SECRET_OPTIONS)
    connection = parse_connection(options)
    group = options.string("consumerGroup", "$Default")
    if not group.strip():
        raise options.error("consumerGroup", "expected a consumer group name")
    if streaming is True:
        for name in ("endingPosition", "endingPositions"):
            if options.has(name):
                raise options.error(name, "only for batch reads (spark.read), not readStream")
    per_trigger, min_per_trigger, trigger_delay = _trigger_bounds(options, streaming)
    return SourceConfig(
        connection=connection,
        consumer_group=group.strip(),
        starting=_position(options, "startingPosition", END if streaming else START),
        starting_per_partition=_positions(options, "startingPositions"),
        ending=_position(options, "endingPosition", END),
        ending_per_partition=_positions(options, "endingPositions"),
        max_events_per_trigger=per_trigger,
        min_events_per_trigger=min_per_trigger,
        max_trigger_delay_s=trigger_delay,
        partitions=_partition_ids(options),
        max_events_per_partition=options.integer("maxEventsPerPartition", minimum=1),
        min_partitions=options.integer("minPartitions", minimum=1, maximum=100_000),
        fail_on_data_loss=options.boolean("failOnDataLoss", True),
        receiver_timeout_s=options.duration_seconds("receiverTimeout", 60.0, 0.1, iso=True),
        operation_timeout_s=options.duration_seconds("operationTimeout", 300.0, 0.1, iso=True),
        prefetch=options.integer("prefetchCount", 500, minimum=1, maximum=100_000),
        receive_batch_size=options.integer("receiveBatchSize", 500, minimum=1, maximum=100_000),
        exclusive=options.boolean("useExclusiveReceiver", False),
        locality=options.choice(
            "partitionPreferredLocationStrategy", "Hash", ("Hash", "BalancedHash")
        ),
        idle_timeout_s=options.duration_seconds("receiverIdleTimeout", 120.0, 0.1, iso=True),
        buffer_bytes=options.size("receiverBufferBytes", _BUFFER_BYTES),
        info_cache_s=options.duration_seconds("partitionInfoCacheInterval", 1.0, iso=True),
        task_stats_path=options.string("taskStatsPath"),
        body=parse_body_format(options, sink=False),
    )


def read_schema(options: Mapping[str, str]) -> str:
    """Validate the read options at ``load()`` (no network) and give the fixed schema."""
    config = parse_source_options(options, streaming=None)
    return read_schema_ddl(config.body)


# -- the writer ---------------------------------------------------------------------------
# name -> (default shown in the docs, meaning). The README's sink section lists every one.
SINK_OPTIONS: dict[str, tuple[str, str]] = {
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
    **BODY_SINK_OPTIONS,
    "queryName": ("unset", "Spark passes writeStream.queryName(...) as an option (not read here)"),
}

# Scala connector name -> ours, accepted for migration.
SINK_ALIASES = {"eventhubs.connectionString": "connectionString"}

# Input column -> what it may hold.
SINK_COLUMNS: dict[str, str] = {
    "body": "required: string or binary; with bodyFormat=avro any type the Avro schema encodes",
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
    body: BodyFormat = BINARY


def _column_error(name: str, value: str, accepted: str) -> OptionError:
    return OptionError.invalid(NAME, f"column {name}", accepted, value)


def _check_columns(
    schema: pa.Schema, avro: bool = False
) -> tuple[str | None, str | None, str | None]:
    names = {column.name.lower(): column for column in schema}
    body = names.get("body")
    if body is None:
        needed = "the input needs a body column " + SINK_COLUMNS["body"]
        raise _column_error("body", "missing", needed)
    if not avro and not (pa.types.is_string(body.type) or pa.types.is_binary(body.type)):
        raise _column_error("body", str(body.type), SINK_COLUMNS["body"])
    partition = names.get("partitionid") or names.get("partition")
    if "partitionid" in names and "partition" in names:
        raise _column_error("partition", "given twice", "use one of partitionId or partition")
    if partition is not None and not (
        pa.types.is_string(partition.type) or pa.types.is_integer(partition.type)
    ):
        raise _column_error(partition.name, str(partition.type), SINK_COLUMNS["partitionId"])
    key = names.get("partitionkey")
    if key is not None and not pa.types.is_string(key.type):
        raise _column_error(key.name, str(key.type), SINK_COLUMNS["partitionKey"])
    props = names.get("properties")
    if props is not None and not (
        pa.types.is_map(props.type)
        and pa.types.is_string(props.type.key_type)
        and pa.types.is_string(props.type.item_type)
    ):
        raise _column_error(props.name, str(props.type), SINK_COLUMNS["properties"])
    known = {"body", "partitionid", "partition", "partitionkey", "properties"}
    for column in schema:
        if column.name.lower() not in known:
            raise _column_error(
                column.name,
                str(column.type),
                "unexpected input column; the sink takes body, partitionId (or partition), "
                "partitionKey and properties -- select only those",
            )
    return (
        partition.name if partition is not None else None,
        key.name if key is not None else None,
        props.name if props is not None else None,
    )


def _avro_body(options: Options, body: BodyFormat, schema: pa.Schema) -> BodyFormat:
    """The schema to encode with: avroSchema checked against the body column, or derived."""
    from dataclasses import replace

    from pysparksources.eventhubs._avro_write import derive_avro_schema, schema_mismatch

    column = next(c for c in schema if c.name.lower() == "body")
    if body.schema_json is None:
        try:
            return replace(body, schema_json=derive_avro_schema(column.type))
        except ValueError as e:
            raise _column_error(column.name, str(column.type), str(e)) from None
    mismatch = schema_mismatch(body.schema_json, column.type)
    if mismatch is not None:
        raise options.error("avroSchema", mismatch)
    return body


def parse_sink_options(raw: Mapping[str, str], schema: pa.Schema) -> SinkConfig:
    """Validate the options and the input schema; raise :class:`OptionError` on the first bad."""
    options = Options(NAME, raw, SINK_OPTIONS, aliases=SINK_ALIASES, secrets=SECRET_OPTIONS)
    connection = parse_connection(options)
    max_bytes = options.size("maxBatchBytes", None, minimum=1024)
    retries = options.integer("maxRetries", 5, minimum=0, maximum=100)
    backoff = options.duration_seconds("retryBackoff", 0.5, iso=True)
    timeout = options.duration_seconds("sendTimeout", 60.0, minimum=1, iso=True)
    stamp = options.boolean("stampBatchId", False)
    body = parse_body_format(options, sink=True)
    partition, key, props = _check_columns(schema, body.avro)
    if body.avro:
        body = _avro_body(options, body, schema)
    return SinkConfig(
        connection=connection,
        max_batch_bytes=max_bytes,
        max_retries=retries,
        retry_backoff_s=backoff,
        send_timeout_s=timeout,
        stamp=stamp,
        partition_column=partition,
        key_column=key,
        properties_column=props,
        body=body,
    )
