"""pyeventhub's option parser: the raw options of one use in, a SourceConfig or SinkConfig out.

Only the driver imports this module (through the data source); readers, writers and tasks get
the config. The data source parses at one moment for every use (``load()`` for reads without
``.schema(...)``, else just before the reader or writer is built), so a bad option, or an input
column the sink cannot send, fails the query at its start, naming it, instead of inside a task.
The Scala connector's ``eventhubs.*`` names are aliases (see the option table). An option that
names a config field (``config_field``) is copied there by ``opts.fill``: this module holds only
what needs more than that copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Literal, overload
from urllib.parse import urlparse

from pysparksources._core.arrow import spark_arrow_schema
from pysparksources._core.option_table import Use
from pysparksources._core.options import Options
from pysparksources.errors import ArgumentError, SchemaError
from pysparksources.eventhubs import NAME
from pysparksources.eventhubs._body_format import parse_body_format, read_schema_ddl
from pysparksources.eventhubs._connection import EventHubConnection
from pysparksources.eventhubs._option_table import (
    AUTH,
    AUTHORITY_HOST,
    CLIENT_ID,
    CLIENT_SECRET,
    CONNECTION_STRING,
    CONSUMER_GROUP,
    ENDING_POSITIONS,
    EVENT_HUB_NAME,
    FULLY_QUALIFIED_NAMESPACE,
    MAX_EVENTS_PER_PARTITION,
    MAX_EVENTS_PER_TRIGGER,
    MAX_TRIGGER_DELAY,
    MIN_EVENTS_PER_TASK,
    MIN_EVENTS_PER_TRIGGER,
    MIN_PARTITIONS,
    PARTITION_INFO_CACHE_INTERVAL,
    SHARED_ACCESS_KEY,
    SHARED_ACCESS_KEY_NAME,
    SHARED_ACCESS_SIGNATURE,
    STARTING_POSITIONS,
    TABLE,
    TENANT_ID,
    TRANSPORT_TYPE,
    USE_DEVELOPMENT_EMULATOR,
)
from pysparksources.eventhubs._store_options import parse_checkpoint_store
from pysparksources.eventhubs.config import BodyFormat, SinkConfig, SourceConfig

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.types import StructType

__all__ = ["SINK_COLUMNS", "parse_options", "read_schema"]

ReadUse = Literal[Use.STREAM_READ, Use.BATCH_READ, Use.READ]
WriteUse = Literal[Use.STREAM_WRITE, Use.BATCH_WRITE, Use.WRITE]


@overload
def parse_options(
    raw: Mapping[str, str], use: ReadUse, schema: StructType | None = None
) -> SourceConfig: ...
@overload
def parse_options(raw: Mapping[str, str], use: WriteUse, schema: StructType) -> SinkConfig: ...
@overload
def parse_options(
    raw: Mapping[str, str], use: Use, schema: StructType | None = None
) -> SourceConfig | SinkConfig: ...
def parse_options(
    raw: Mapping[str, str], use: Use, schema: StructType | None = None
) -> SourceConfig | SinkConfig:
    """Validate pyeventhub's options for ``use``; raise :class:`OptionError` on the first bad one.

    Reads (``use`` within ``Use.READ``) give a :class:`SourceConfig`; ``schema`` is the query's
    ``.schema(...)``, None when Spark asks for the read's schema (``Use.READ``, where a stream
    and a batch read look the same: the reader checks the options again for its own kind).
    Writes give a :class:`SinkConfig` and need the input's ``schema``, whose columns are checked
    (:class:`SchemaError` for one the sink cannot send).
    """
    opts = Options(TABLE, raw, use)
    if use & Use.WRITE:
        if schema is None:
            raise ArgumentError(NAME, "a writer's options are checked with the input's schema")
        return _sink(opts, schema)
    return _source(opts, schema)


def read_schema(config: SourceConfig) -> str:
    """The read schema (DDL): the Scala connector's columns, ``body`` as ``bodyFormat`` says."""
    return read_schema_ddl(config.body)


# -- where the hub is and how to authenticate ---------------------------------------------
def _connection(opts: Options) -> EventHubConnection:
    """Validate the connection options; raise :class:`OptionError` naming the bad one."""
    connection_string = opts.get(CONNECTION_STRING)
    namespace_option = opts.get(FULLY_QUALIFIED_NAMESPACE)
    hub_option = opts.get(EVENT_HUB_NAME)
    websockets = opts.value(TRANSPORT_TYPE) != "amqp"
    auth = opts.get(AUTH)

    if connection_string is not None:
        if namespace_option is not None:
            raise opts.error(
                FULLY_QUALIFIED_NAMESPACE,
                "give either connectionString or fullyQualifiedNamespace with a credential, "
                "not both",
            )
        if auth not in (None, "connectionString"):
            raise opts.error(AUTH, "must be connectionString (or unset) with connectionString")
        if opts.has(USE_DEVELOPMENT_EMULATOR):
            raise opts.error(
                USE_DEVELOPMENT_EMULATOR,
                "only with fullyQualifiedNamespace: a connection string says "
                "UseDevelopmentEmulator=true itself",
            )
        return _from_connection_string(opts, connection_string, hub_option, websockets)

    if namespace_option is None:
        raise opts.required(
            CONNECTION_STRING,
            "set connectionString, or fullyQualifiedNamespace with a credential "
            "(sharedAccessKeyName + sharedAccessKey, sharedAccessSignature, "
            "auth=defaultAzureCredential, servicePrincipal or managedIdentity)",
        )
    namespace = _namespace_host(opts, namespace_option)
    if hub_option is None or not hub_option.strip():
        raise opts.required(EVENT_HUB_NAME, "the Event Hub to use with fullyQualifiedNamespace")
    connection = EventHubConnection(
        namespace=namespace,
        event_hub=hub_option.strip(),
        auth=auth or _infer_auth(opts),
        connection_string=None,
        key_name=opts.get(SHARED_ACCESS_KEY_NAME),
        key=opts.get(SHARED_ACCESS_KEY),
        sas_token=opts.get(SHARED_ACCESS_SIGNATURE),
        tenant_id=opts.get(TENANT_ID),
        client_id=opts.get(CLIENT_ID),
        client_secret=opts.get(CLIENT_SECRET),
        websockets=websockets,
        authority_host=_authority_host(opts),
        development_emulator=opts.value(USE_DEVELOPMENT_EMULATOR),
    )
    _check_credential_options(opts, connection)
    if connection.authority_host and connection.auth not in (
        "servicePrincipal",
        "defaultAzureCredential",
    ):
        raise opts.error(
            AUTHORITY_HOST,
            f"applies to auth=servicePrincipal or defaultAzureCredential, not {connection.auth}",
        )
    return connection


def _authority_host(opts: Options) -> str | None:
    """authorityHost as azure-identity takes it: an https:// URL (the scheme added if left out)."""
    value = (opts.get(AUTHORITY_HOST) or "").strip().rstrip("/")
    if not value:
        return None
    if "://" not in value:
        value = "https://" + value
    if not value.startswith("https://") or not _netloc(value):
        raise opts.error(
            AUTHORITY_HOST, "expected https://<host>, e.g. https://login.microsoftonline.us"
        )
    return value


def _split_connection_string(text: str) -> dict[str, str] | None:
    """``Name=value;...`` as a dict with lower-case names; None when an item has no ``=``."""
    parts: dict[str, str] = {}
    for item in text.split(";"):
        if not item.strip():
            continue
        name, sep, value = item.partition("=")
        if not sep:
            return None
        parts[name.strip().lower()] = value.strip()
    return parts


def _from_connection_string(
    opts: Options, text: str, hub_option: str | None, websockets: bool
) -> EventHubConnection:
    parts = _split_connection_string(text) or {}
    host = _netloc(parts.get("endpoint", ""))
    has_key = bool(parts.get("sharedaccesskeyname")) and bool(parts.get("sharedaccesskey"))
    if not host or not (has_key or parts.get("sharedaccesssignature")):
        raise opts.error(
            CONNECTION_STRING,
            "expected 'Endpoint=sb://<namespace>/;SharedAccessKeyName=<name>;"
            "SharedAccessKey=<key>[;EntityPath=<hub>]' or one with SharedAccessSignature=<token>",
        )
    entity = parts.get("entitypath")
    hub = hub_option.strip() if hub_option else entity
    if not hub:
        raise opts.required(
            EVENT_HUB_NAME, "the connection string has no EntityPath to take the hub from"
        )
    if entity and hub_option and entity != hub:
        raise opts.error(
            EVENT_HUB_NAME,
            f"the connection string's EntityPath names hub {entity!r}; they must agree",
        )
    return EventHubConnection(
        namespace=host,
        event_hub=hub,
        auth="connectionString",
        connection_string=text,
        key_name=parts.get("sharedaccesskeyname"),
        key=None,
        sas_token=None,
        tenant_id=None,
        client_id=None,
        client_secret=None,
        websockets=websockets,
    )


def _namespace_host(opts: Options, text: str) -> str:
    value = text.strip()
    host = _netloc(value) if "://" in value else value.rstrip("/")
    if not host or "/" in host or ";" in host:
        raise opts.error(
            FULLY_QUALIFIED_NAMESPACE, "expected a host name such as myns.servicebus.windows.net"
        )
    return host


def _netloc(url: str) -> str:
    """The host[:port] of ``url``; empty when it has none or cannot be parsed (``sb://[::1``)."""
    try:
        parsed = urlparse(url)
        parsed.port  # noqa: B018 -- raises ValueError for a port out of range
    except ValueError:
        return ""
    return parsed.netloc


def _infer_auth(opts: Options) -> str:
    if opts.has(SHARED_ACCESS_SIGNATURE):
        return "sasToken"
    if opts.has(SHARED_ACCESS_KEY) or opts.has(SHARED_ACCESS_KEY_NAME):
        return "sasKey"
    if opts.has(CLIENT_SECRET) or opts.has(TENANT_ID):
        return "servicePrincipal"
    return "defaultAzureCredential"


def _check_credential_options(opts: Options, connection: EventHubConnection) -> None:
    required = {
        "sasKey": (SHARED_ACCESS_KEY_NAME, SHARED_ACCESS_KEY),
        "sasToken": (SHARED_ACCESS_SIGNATURE,),
        "servicePrincipal": (TENANT_ID, CLIENT_ID, CLIENT_SECRET),
    }.get(connection.auth, ())
    for option in required:
        if not opts.has(option):
            raise opts.required(option, f"auth={connection.auth} needs it")


# -- the reader ---------------------------------------------------------------------------
def _check_trigger_bounds(opts: Options) -> None:
    """maxEventsPerTrigger, minEventsPerTrigger and maxTriggerDelay, checked together."""
    per_trigger = opts.get(MAX_EVENTS_PER_TRIGGER)
    min_per_trigger = opts.get(MIN_EVENTS_PER_TRIGGER)
    if opts.has(MAX_TRIGGER_DELAY) and min_per_trigger is None:
        raise opts.error(MAX_TRIGGER_DELAY, "only with minEventsPerTrigger")
    if min_per_trigger is not None and per_trigger is not None and min_per_trigger > per_trigger:
        raise opts.error(
            MIN_EVENTS_PER_TRIGGER,
            f"expected at most maxEventsPerTrigger ({per_trigger}): a batch holds between the two",
        )


def _check_task_shape(opts: Options) -> None:
    """minEventsPerTask packs partitions into fewer tasks; maxEventsPerPartition and
    minPartitions split them into more: asking for both is a contradiction, said at once."""
    if not opts.has(MIN_EVENTS_PER_TASK):
        return
    for splitter in (MAX_EVENTS_PER_PARTITION, MIN_PARTITIONS):
        if opts.has(splitter):
            raise opts.error(
                MIN_EVENTS_PER_TASK,
                f"packs partitions into fewer read tasks, while {splitter.name} splits them "
                "into more: set one or the other",
            )


def _source(opts: Options, schema: StructType | None) -> SourceConfig:
    connection = _connection(opts)
    group = opts.value(CONSUMER_GROUP)
    if not group.strip():
        raise opts.error(CONSUMER_GROUP, "expected a consumer group name")
    _check_trigger_bounds(opts)
    _check_task_shape(opts)
    config = opts.fill(
        SourceConfig,
        connection=connection,
        consumer_group=group.strip(),
        starting_per_partition=opts.get(STARTING_POSITIONS) or {},
        ending_per_partition=opts.get(ENDING_POSITIONS) or {},
        info_cache_given=opts.has(PARTITION_INFO_CACHE_INTERVAL),
        body=parse_body_format(opts, sink=False),
        checkpoint_store=parse_checkpoint_store(opts, connection),
    )
    if schema is not None and config.body.avro:
        _check_read_schema(config.body, schema)
    return config


def _check_read_schema(body: BodyFormat, schema: StructType) -> None:
    """A ``.schema(...)`` given to an Avro read must be the one avroSchema gives (Spark does
    not show a user schema to the data source at load(), so this waits for the reader)."""
    from pysparksources._core.compat import spark_schema_of
    from pysparksources.eventhubs.avro.decode import read_arrow_schema

    expected = spark_schema_of(read_arrow_schema(body)).simpleString()
    if schema.simpleString() != expected:
        raise SchemaError(
            NAME,
            f"the read schema given with .schema() is {schema.simpleString()}, but avroSchema "
            f"reads as {expected}; drop .schema() or make them match",
        )


# -- the writer ---------------------------------------------------------------------------
# Input column -> what it may hold (the sink's documentation lists each one).
SINK_COLUMNS: dict[str, str] = {
    "body": "required: string or binary; with bodyFormat=avro any type the Avro schema encodes",
    "partitionId": "optional (alias partition): the target partition, string or integer",
    "partitionKey": "optional: string; events with one key land in one partition",
    "properties": "optional: map<string,string> of application properties",
}
_KNOWN_COLUMNS = {"body", "partitionid", "partition", "partitionkey", "properties"}
_LISTED_COLUMNS = 8


def _columns_listing(schema: StructType) -> str:
    """``text string, value bigint``: the input's first columns, as DDL."""
    shown = [f"{f.name} {f.dataType.simpleString()}" for f in schema.fields[:_LISTED_COLUMNS]]
    more = len(schema.fields) - _LISTED_COLUMNS
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "") or "none"


def _check_columns(
    schema: StructType, arrow: pa.Schema, avro: bool
) -> tuple[str | None, str | None, str | None]:
    """The partition, key and properties columns; SchemaError for a column the sink refuses."""
    import pyarrow as pa

    spark_types = {f.name: f.dataType.simpleString() for f in schema.fields}
    names = {column.name.lower(): column for column in arrow}

    def refuse(column: pa.Field, accepted: str) -> SchemaError:
        kind = spark_types.get(column.name, str(column.type))
        return SchemaError(NAME, f"input column '{column.name}' is {kind}; expected {accepted}")

    body = names.get("body")
    if body is None:
        raise SchemaError(
            NAME,
            f"the input has no column 'body' (its columns: {_columns_listing(schema)}); the sink "
            "sends it as the events' bodies: string or binary, or with bodyFormat=avro any type "
            "the Avro schema encodes",
        )
    if not avro and not (pa.types.is_string(body.type) or pa.types.is_binary(body.type)):
        raise refuse(body, "string or binary, or bodyFormat=avro to send other types as Avro")
    if "partitionid" in names and "partition" in names:
        first, second = names["partitionid"].name, names["partition"].name
        raise SchemaError(
            NAME,
            f"input columns '{first}' and '{second}' both name the target partition; keep one",
        )
    partition = names.get("partitionid") or names.get("partition")
    if partition is not None and not (
        pa.types.is_string(partition.type) or pa.types.is_integer(partition.type)
    ):
        raise refuse(partition, "the target partition id as string or integer")
    key = names.get("partitionkey")
    if key is not None and not pa.types.is_string(key.type):
        raise refuse(key, "a string partition key")
    props = names.get("properties")
    if props is not None and not (
        pa.types.is_map(props.type)
        and pa.types.is_string(props.type.key_type)
        and pa.types.is_string(props.type.item_type)
    ):
        raise refuse(props, "map<string,string> of application properties")
    for column in arrow:
        if column.name.lower() not in _KNOWN_COLUMNS:
            kind = spark_types.get(column.name, str(column.type))
            raise SchemaError(
                NAME,
                f"input column '{column.name}' ({kind}) is not one the sink takes: it takes "
                "body, partitionId (or partition), partitionKey and properties; select only "
                "those",
            )
    return (
        partition.name if partition is not None else None,
        key.name if key is not None else None,
        props.name if props is not None else None,
    )


def _avro_body(body: BodyFormat, schema: StructType, arrow: pa.Schema) -> BodyFormat:
    """The schema to encode with: avroSchema checked against the body column, or derived."""
    from pysparksources.eventhubs.avro.encode import derive_avro_schema, schema_mismatch

    column = next(c for c in arrow if c.name.lower() == "body")
    if body.schema_json is None:
        try:
            return replace(body, schema_json=derive_avro_schema(column.type))
        except SchemaError as error:
            kind = next(f.dataType.simpleString() for f in schema.fields if f.name == column.name)
            raise SchemaError(
                NAME,
                f"input column '{column.name}' is {kind}, which has no Avro schema "
                f"({error.detail}); cast it, or give avroSchema",
            ) from None
    mismatch = schema_mismatch(body.schema_json, column.type)
    if mismatch is not None:
        raise SchemaError(NAME, f"{mismatch}; cast the column to that type or change avroSchema")
    return body


def _sink(opts: Options, schema: StructType) -> SinkConfig:
    config = opts.fill(
        SinkConfig,
        connection=_connection(opts),
        body=parse_body_format(opts, sink=True),
        # The input's columns, below: looked at once every option is checked.
        partition_column=None,
        key_column=None,
        properties_column=None,
    )
    arrow = spark_arrow_schema(schema)
    partition, key, props = _check_columns(schema, arrow, config.body.avro)
    return replace(
        config,
        body=_avro_body(config.body, schema, arrow) if config.body.avro else config.body,
        partition_column=partition,
        key_column=key,
        properties_column=props,
    )
