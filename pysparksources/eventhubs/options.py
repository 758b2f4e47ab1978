"""pyeventhub's options, validated once when the query starts: the reader's, then the writer's.

Both share the connection options (names, secrets, authentication) of ``_connection``. Spark
builds readers and writers on the driver before the first batch, so a bad option, or an input
column the sink cannot send, fails the query at its start, naming it, instead of inside a task.
Scala connector names are accepted as aliases, for migration.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyarrow as pa

from pysparksources._options import OptionError, Options
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
    "operationTimeout": ("300s", "bound on metadata calls (partition ids and properties)"),
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
}

# Scala connector name (lower case) -> our name, accepted for migration.
SOURCE_ALIASES: dict[str, str] = {
    f"eventhubs.{name.lower()}": name
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

_ISO = re.compile(r"^\s*PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?\s*$", re.IGNORECASE)


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
    info_cache_s: float = 1.0
    task_stats_path: str | None = None

    def describe(self) -> str:
        return f"pyeventhub[{self.connection.describe()}, group {self.consumer_group}]"


def _normalize(raw: Mapping[str, str]) -> dict[str, str]:
    """Map Scala aliases to our names; both spellings of one option is an error."""
    result: dict[str, str] = {}
    for key, value in raw.items():
        name = SOURCE_ALIASES.get(str(key).lower(), str(key))
        if name.lower() in {k.lower() for k in result}:
            shown = "<redacted>" if name in SECRET_OPTIONS else str(value)
            raise OptionError(NAME, str(key), shown, f"{name} is given twice; give it once")
        result[name] = str(value)
    return result


def _duration(options: Options, name: str, default: float, minimum: float = 0.0) -> float:
    text = options.raw(name)
    if text is not None:
        match = _ISO.match(text)  # the Scala connector's ISO-8601 form, PT60S
        if match and any(match.groups()):
            h, m, s = match.groups()
            value = int(h or 0) * 3600 + int(m or 0) * 60 + float(s or 0)
            if value < minimum:
                raise options.error(name, f"expected a duration of at least {minimum}s")
            return value
    return options.duration_seconds(name, default, minimum)


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


def _trigger_bounds(options: Options, streaming: bool) -> tuple[int | None, int | None, float]:
    """maxEventsPerTrigger, minEventsPerTrigger and maxTriggerDelay, checked together."""
    per_trigger = options.integer("maxEventsPerTrigger", None, minimum=1)
    min_per_trigger = options.integer("minEventsPerTrigger", None, minimum=1)
    for name in ("maxEventsPerTrigger", "minEventsPerTrigger", "maxTriggerDelay"):
        if options.has(name) and not streaming:
            raise options.error(name, "only for readStream")
    if options.has("maxTriggerDelay") and min_per_trigger is None:
        raise options.error("maxTriggerDelay", "only with minEventsPerTrigger")
    if min_per_trigger is not None and per_trigger is not None and min_per_trigger > per_trigger:
        raise options.error(
            "minEventsPerTrigger",
            f"expected at most maxEventsPerTrigger ({per_trigger}): a batch holds between the two",
        )
    delay = _duration(options, "maxTriggerDelay", 900.0, minimum=0.0)
    return per_trigger, min_per_trigger, delay


def parse_source_options(raw: Mapping[str, str], streaming: bool) -> SourceConfig:
    """Validate every reader option; raise OptionError naming the first bad one."""
    normalized = _normalize(raw)
    options = Options(NAME, normalized, SOURCE_OPTIONS, secrets=SECRET_OPTIONS)
    connection = parse_connection(options)
    group = options.string("consumerGroup", "$Default") or ""
    if not group.strip():
        raise options.error("consumerGroup", "expected a consumer group name")
    if streaming:
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
        max_events_per_partition=options.integer("maxEventsPerPartition", None, minimum=1),
        min_partitions=options.integer("minPartitions", None, minimum=1, maximum=100_000),
        fail_on_data_loss=options.boolean("failOnDataLoss", True),
        receiver_timeout_s=_duration(options, "receiverTimeout", 60.0, minimum=0.1),
        operation_timeout_s=_duration(options, "operationTimeout", 300.0, minimum=0.1),
        prefetch=options.integer("prefetchCount", 500, minimum=1, maximum=100_000) or 500,
        receive_batch_size=options.integer("receiveBatchSize", 500, minimum=1, maximum=100_000)
        or 500,
        exclusive=options.boolean("useExclusiveReceiver", False),
        locality=options.choice(
            "partitionPreferredLocationStrategy", "Hash", ("Hash", "BalancedHash")
        ),
        idle_timeout_s=_duration(options, "receiverIdleTimeout", 120.0, minimum=0.1),
        info_cache_s=_duration(options, "partitionInfoCacheInterval", 1.0),
        task_stats_path=options.string("taskStatsPath"),
    )


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
}

# Scala connector name (lower case) -> ours, accepted for migration.
SINK_ALIASES = {"eventhubs.connectionstring": "connectionString"}

# Input column -> what it may hold.
SINK_COLUMNS: dict[str, str] = {
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
    return {SINK_ALIASES.get(str(k).lower(), str(k)): str(v) for k, v in raw.items()}


def _column_error(name: str, value: str, accepted: str) -> OptionError:
    return OptionError(NAME, f"column {name}", value, accepted)


def _check_columns(schema: pa.Schema) -> tuple[str | None, str | None, str | None]:
    names = {column.name.lower(): column for column in schema}
    body = names.get("body")
    if body is None:
        needed = "the input needs a body column " + SINK_COLUMNS["body"]
        raise _column_error("body", "missing", needed)
    if not (pa.types.is_string(body.type) or pa.types.is_binary(body.type)):
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


def parse_sink_options(raw: Mapping[str, str], schema: pa.Schema) -> SinkConfig:
    """Validate the options and the input schema; raise :class:`OptionError` on the first bad."""
    options = Options(NAME, _canonical(raw), SINK_OPTIONS, secrets=SECRET_OPTIONS)
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
