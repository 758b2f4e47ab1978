"""pyeventhub's options, source and sink: the one declaration the parser, defaults and docs use.

The connection options apply to every use (the same objects serve the reader and the writer);
the others to reads, to one kind of read, or to writes. The Scala connector's ``eventhubs.*``
names are aliases. Positions and partition lists have grammars of their own: their ``Option``
subclasses below parse them (with :mod:`_positions`).

:data:`TABLE` holds every option declared here, in this order (the docs' order). An option whose
value a config of ``config.py`` holds as parsed names its field (``config_field``), and the
parser copies it there.
"""

from __future__ import annotations

from dataclasses import dataclass

from pysparksources._core.option_table import (
    Choice,
    Duration,
    Flag,
    Integer,
    Option,
    OptionTable,
    Size,
    Text,
    Use,
)
from pysparksources.eventhubs import NAME
from pysparksources.eventhubs._positions import (
    ACCEPTED,
    Position,
    PositionError,
    parse_partition_ids,
    parse_position,
    parse_positions,
)


def _scala(name: str) -> tuple[str, ...]:
    """The Scala connector's name of an option, accepted as an alias for migration."""
    return (f"eventhubs.{name}",)


# -- values with a grammar of their own (PositionError is the ValueError Options expects) -----
@dataclass(frozen=True, kw_only=True)
class PositionOption(Option[Position]):
    """One position: a word (``start``, ``@latest``) or the Scala connector's JSON object."""

    def parse(self, text: str) -> Position:
        try:
            return parse_position(text)
        except PositionError as error:
            raise PositionError(f"{error}; expected {ACCEPTED}") from None


@dataclass(frozen=True, kw_only=True)
class PositionsOption(Option[dict[str, Position]]):
    """Per-partition positions: a JSON object keyed by partition id."""

    def parse(self, text: str) -> dict[str, Position]:
        try:
            return parse_positions(text)
        except PositionError as error:
            raise PositionError(
                f"{error}; expected a JSON object keyed by partition id, each value {ACCEPTED}"
            ) from None


@dataclass(frozen=True, kw_only=True)
class PartitionIdsOption(Option[tuple[str, ...]]):
    """Partition ids separated by commas (``0,2``), each once; sorted numerically."""

    def parse(self, text: str) -> tuple[str, ...]:
        return parse_partition_ids(text)


# -- where the hub is and how to authenticate (source and sink) ---------------------------
AUTH_KINDS = (
    "connectionString",
    "sasKey",
    "sasToken",
    "defaultAzureCredential",
    "servicePrincipal",
    "managedIdentity",
)

CONNECTION_STRING = Text(
    name="connectionString",
    doc="Namespace or hub connection string (Endpoint=sb://...;SharedAccessKeyName=...;"
    "SharedAccessKey=...[;EntityPath=hub]), plain text: never encrypted.",
    aliases=_scala("connectionString"),
    secret=True,
)
EVENT_HUB_NAME = Text(
    name="eventHubName",
    doc="The Event Hub; required unless the connection string has EntityPath. A hub the "
    "namespace does not have fails the query when it starts (the sink: its first send).",
    shown_default="EntityPath",
)
FULLY_QUALIFIED_NAMESPACE = Text(
    name="fullyQualifiedNamespace",
    doc="<namespace>.servicebus.windows.net, with a credential instead of a connection string.",
)
AUTH = Choice(
    name="auth",
    doc="connectionString, sasKey, sasToken, defaultAzureCredential, servicePrincipal or "
    "managedIdentity.",
    shown_default="inferred from the options given",
    choices=AUTH_KINDS,
)
SHARED_ACCESS_KEY_NAME = Text(name="sharedAccessKeyName", doc="SAS policy name (auth=sasKey).")
SHARED_ACCESS_KEY = Text(name="sharedAccessKey", doc="SAS key (auth=sasKey).", secret=True)
SHARED_ACCESS_SIGNATURE = Text(
    name="sharedAccessSignature",
    doc="A ready SAS token 'SharedAccessSignature sr=...' (auth=sasToken).",
    secret=True,
)
TENANT_ID = Text(name="tenantId", doc="Entra ID tenant (auth=servicePrincipal).")
CLIENT_ID = Text(
    name="clientId",
    doc="Application id (servicePrincipal) or user-assigned identity (managedIdentity).",
)
CLIENT_SECRET = Text(
    name="clientSecret", doc="Application secret (auth=servicePrincipal).", secret=True
)
AUTHORITY_HOST = Text(
    name="authorityHost",
    doc="Entra ID authority for auth=servicePrincipal or defaultAzureCredential: sovereign "
    "clouds (https://login.chinacloudapi.cn), private authorities; instance discovery is off.",
    shown_default="login.microsoftonline.com",
)
TRANSPORT_TYPE = Choice(
    name="transportType",
    doc="amqp (port 5671) or amqpWebSockets (port 443, through proxies).",
    default="amqp",
    choices=("amqp", "amqpWebSockets"),
)
USE_DEVELOPMENT_EMULATOR = Flag(
    name="useDevelopmentEmulator",
    doc="With fullyQualifiedNamespace: plain AMQP (no TLS) to the host:port given, as a "
    "connection string's UseDevelopmentEmulator=true; local emulators only.",
    default="false",
)
CONNECTION_OPTIONS = (
    CONNECTION_STRING,
    EVENT_HUB_NAME,
    FULLY_QUALIFIED_NAMESPACE,
    AUTH,
    SHARED_ACCESS_KEY_NAME,
    SHARED_ACCESS_KEY,
    SHARED_ACCESS_SIGNATURE,
    TENANT_ID,
    CLIENT_ID,
    CLIENT_SECRET,
    AUTHORITY_HOST,
    TRANSPORT_TYPE,
    USE_DEVELOPMENT_EMULATOR,
)

# -- the reader ---------------------------------------------------------------------------
CONSUMER_GROUP = Text(
    name="consumerGroup",
    doc="Consumer group to read as; one the hub does not have fails the query when it starts.",
    default="$Default",
    aliases=_scala("consumerGroup"),
    uses=Use.READ,
)
STARTING_POSITION = PositionOption(
    name="startingPosition",
    doc="Where a NEW query starts in every partition; ignored once the checkpoint exists.",
    default={Use.STREAM_READ: "@latest", Use.BATCH_READ: "start"},
    aliases=_scala("startingPosition"),
    uses=Use.READ,
    config_field="SourceConfig.starting",
)
STARTING_POSITIONS = PositionsOption(
    name="startingPositions",
    doc='Per-partition starting positions, JSON keyed by partition id: {"0": {"seqNo": 5}}.',
    aliases=_scala("startingPositions"),
    uses=Use.READ,
)
ENDING_POSITION = PositionOption(
    name="endingPosition",
    doc="Where to stop in every partition (the first event not read).",
    default="@latest",
    aliases=_scala("endingPosition"),
    uses=Use.BATCH_READ,
    config_field="SourceConfig.ending",
)
ENDING_POSITIONS = PositionsOption(
    name="endingPositions",
    doc="Per-partition ending positions, JSON keyed by partition id.",
    aliases=_scala("endingPositions"),
    uses=Use.BATCH_READ,
)
MAX_EVENTS_PER_TRIGGER = Integer(
    name="maxEventsPerTrigger",
    doc="Most events per micro-batch, split across partitions by backlog.",
    shown_default="unset (all available)",
    minimum=1,
    aliases=_scala("maxEventsPerTrigger"),
    uses=Use.STREAM_READ,
    config_field="SourceConfig.max_events_per_trigger",
)
MIN_EVENTS_PER_TRIGGER = Integer(
    name="minEventsPerTrigger",
    doc="Hold a micro-batch back until this many events wait (over the read partitions) or "
    "maxTriggerDelay has passed since the previous batch; ignored by AvailableNow.",
    minimum=1,
    uses=Use.STREAM_READ,
    config_field="SourceConfig.min_events_per_trigger",
)
MAX_TRIGGER_DELAY = Duration(
    name="maxTriggerDelay",
    doc="With minEventsPerTrigger: the longest a waiting event is held back after the "
    "previous batch.",
    default="15m",
    uses=Use.STREAM_READ,
    config_field="SourceConfig.max_trigger_delay_s",
)
PARTITIONS = PartitionIdsOption(
    name="partitions",
    doc="Read only these partition ids, comma-separated: 0,2; fixed for the life of a checkpoint.",
    shown_default="unset (every partition)",
    uses=Use.READ,
    config_field="SourceConfig.partitions",
)
MAX_EVENTS_PER_PARTITION = Integer(
    name="maxEventsPerPartition",
    doc="Split a partition's range into Spark partitions of at most this many events "
    "(Kafka's maxRecordsPerPartition).",
    minimum=1,
    uses=Use.READ,
    config_field="SourceConfig.max_events_per_partition",
)
MIN_PARTITIONS = Integer(
    name="minPartitions",
    doc="Split the largest ranges so a batch has about this many Spark partitions (Kafka's "
    "minPartitions).",
    minimum=1,
    maximum=100_000,
    uses=Use.READ,
    config_field="SourceConfig.min_partitions",
)
MIN_EVENTS_PER_TASK = Integer(
    name="minEventsPerTask",
    doc="Pack the ranges of several partitions into one read task, which reads them at once "
    "(a receiver thread each), until it holds at least this many events: a task's fixed cost "
    "(Python worker hand-off, receiver look-up) is then paid once per group, not once per "
    "partition, when partitions outnumber cores. 1 gives every partition a task of its own; "
    "so does setting maxEventsPerPartition or minPartitions.",
    default="20000",
    minimum=1,
    uses=Use.READ,
    config_field="SourceConfig.min_events_per_task",
)
MAX_PARTITIONS_PER_TASK = Integer(
    name="maxPartitionsPerTask",
    doc="Most partitions one read task packs (minEventsPerTask): each is a receiver, an AMQP "
    "connection and a thread in that task's Python worker.",
    default="16",
    minimum=1,
    maximum=1024,
    uses=Use.READ,
    config_field="SourceConfig.max_partitions_per_task",
)
FAIL_ON_DATA_LOSS = Flag(
    name="failOnDataLoss",
    doc="Fail when events expired before being read; false: skip to the first retained event.",
    default="true",
    uses=Use.READ,
    config_field="SourceConfig.fail_on_data_loss",
)
RECEIVER_TIMEOUT = Duration(
    name="receiverTimeout",
    doc="Longest wait for the next event a task knows exists; refused, dropped or silent "
    "links are retried on new links until then (see Partial outages).",
    default="60s",
    minimum=0.1,
    iso=True,
    aliases=_scala("receiverTimeout"),
    uses=Use.READ,
    config_field="SourceConfig.receiver_timeout_s",
)
OPERATION_TIMEOUT = Duration(
    name="operationTimeout",
    doc="Bound on metadata calls (partition ids and properties) and on finding an offset or "
    "enqueuedTime position; past it the query fails.",
    default="300s",
    minimum=0.1,
    iso=True,
    aliases=_scala("operationTimeout"),
    uses=Use.READ,
    config_field="SourceConfig.operation_timeout_s",
)
PREFETCH_COUNT = Integer(
    name="prefetchCount",
    doc="Events the SDK prefetches per receiver; it also hands events over only after this "
    "many arrived or the link went quiet for 20 ms, so under a steady trickle a lower value "
    "means earlier batches (the Scala connector's 500 held events up to a second at 500 "
    "events/s a partition). Capped so that two prefetches of 1 MiB events fit "
    "receiverBufferBytes: 31 with the default 64m.",
    default="100",
    minimum=1,
    maximum=100_000,
    aliases=_scala("prefetchCount"),
    uses=Use.READ,
    config_field="SourceConfig.prefetch",
)
RECEIVE_BATCH_SIZE = Integer(
    name="receiveBatchSize",
    doc="Most events per SDK receive_batch call.",
    default="500",
    minimum=1,
    maximum=100_000,
    uses=Use.READ,
    config_field="SourceConfig.receive_batch_size",
)
USE_EXCLUSIVE_RECEIVER = Flag(
    name="useExclusiveReceiver",
    doc="Epoch (owner_level) receivers: exclusive per consumer group and partition.",
    default="false",
    aliases=_scala("useExclusiveReceiver"),
    uses=Use.READ,
    config_field="SourceConfig.exclusive",
)
PARTITION_PREFERRED_LOCATION_STRATEGY = Choice(
    name="partitionPreferredLocationStrategy",
    doc="Hash or BalancedHash: the executor-slot key used to order the planned partitions.",
    default="Hash",
    choices=("Hash", "BalancedHash"),
    uses=Use.READ,
    config_field="SourceConfig.locality",
)
RECEIVER_IDLE_TIMEOUT = Duration(
    name="receiverIdleTimeout",
    doc="Close an executor's cached receiver unused this long.",
    default="120s",
    minimum=0.1,
    iso=True,
    uses=Use.READ,
    config_field="SourceConfig.idle_timeout_s",
)
MAX_PARKED_RECEIVERS = Integer(
    name="maxParkedReceivers",
    doc="Most receivers one machine keeps parked per partition between tasks, all its Python "
    "workers together; a worker opening a new link asks the most recently parked beyond this "
    "to close. Event Hubs allows 5 readers per partition and consumer group, and Spark hands "
    "a partition's batches to any idle worker, so without a limit each worker parks its own. "
    "With N executors reading one consumer group, (N - 1) x this + 1 must stay within 5.",
    default="3",
    minimum=0,
    maximum=4,
    uses=Use.READ,
    config_field="SourceConfig.max_parked",
)
RECEIVER_BUFFER_BYTES = Size(
    name="receiverBufferBytes",
    doc="Most bytes of received events the cached receivers of one Python worker hold ahead "
    "of its tasks, all partitions together (body + ~1.5 KB per event); parked receivers fill "
    "at most half; an event larger than this is still read, one at a time. Also caps "
    "prefetchCount at this / 2 MiB, so that what the SDK fetches ahead stays within it.",
    default="64m",
    uses=Use.READ,
    config_field="SourceConfig.buffer_bytes",
)
PARTITION_INFO_CACHE_INTERVAL = Duration(
    name="partitionInfoCacheInterval",
    doc="Reuse partition properties this long on the driver (Spark polls latestOffset often): "
    "new events wait up to this long before a batch can take them. Unset, it is also at "
    "least partitions / 40 seconds, so the driver makes at most 40 management calls a second "
    "(each a new connection and token against Azure); a value you set is used as is.",
    default="100ms",
    iso=True,
    uses=Use.READ,
    config_field="SourceConfig.info_cache_s",
)
PARTITION_DISCOVERY_INTERVAL = Duration(
    name="partitionDiscoveryInterval",
    doc="Re-read the hub's partition ids this often on the driver: a partition added to a "
    "Premium/Dedicated hub is read from its first event within about this long, plus "
    "partitionInfoCacheInterval and two triggers.",
    default="30s",
    iso=True,
    uses=Use.READ,
    config_field="SourceConfig.discovery_s",
)
# -- the Event Hubs checkpoint store (Azure Blob), as EventProcessorClient keeps it ----------
STORE_CONTAINER = Text(
    name="checkpointStore.container",
    doc="Blob container of the consumer group's Event Hubs checkpoint store (the layout of "
    "azure-eventhub-checkpointstoreblob): each committed batch's positions are written there, "
    "and startingPosition=checkpointStore starts after its checkpoints.",
    uses=Use.READ,
)
STORE_CONNECTION_STRING = Text(
    name="checkpointStore.connectionString",
    doc="Storage account connection string of the checkpoint store.",
    uses=Use.READ,
    secret=True,
    config_field="CheckpointStoreConfig.connection_string",
)
STORE_ACCOUNT_URL = Text(
    name="checkpointStore.accountUrl",
    doc="Blob endpoint of the checkpoint store (https://<account>.blob.core.windows.net), "
    "reached with the query's Entra ID credential (auth=servicePrincipal, managedIdentity "
    "or defaultAzureCredential; the identity needs Storage Blob Data Contributor).",
    uses=Use.READ,
    config_field="CheckpointStoreConfig.account_url",
)
STORE_UPDATE = Flag(
    name="checkpointStore.update",
    doc="Write each committed batch's positions to the checkpoint store (false: only read "
    "it, for startingPosition=checkpointStore).",
    default="true",
    uses=Use.STREAM_READ,
)

TASK_STATS_PATH = Text(
    name="taskStatsPath",
    doc="Diagnostics folder: one JSON line per read task (batch, partition, cache hit, ...).",
    uses=Use.READ,
    config_field="SourceConfig.task_stats_path",
)

# -- the writer ---------------------------------------------------------------------------
MAX_BATCH_BYTES = Size(
    name="maxBatchBytes",
    doc="Most bytes per EventDataBatch (one AMQP message); smaller values send smaller batches.",
    shown_default="the hub's maximum message size",
    minimum=1024,
    uses=Use.WRITE,
    config_field="SinkConfig.max_batch_bytes",
)
MAX_RETRIES = Integer(
    name="maxRetries",
    doc="Retries of a failed send (server busy, timeouts, lost connections).",
    default="5",
    minimum=0,
    maximum=100,
    uses=Use.WRITE,
    config_field="SinkConfig.max_retries",
)
RETRY_BACKOFF = Duration(
    name="retryBackoff",
    doc="First wait between retries; doubles each retry, at most 30s.",
    default="500ms",
    iso=True,
    uses=Use.WRITE,
    config_field="SinkConfig.retry_backoff_s",
)
SEND_TIMEOUT = Duration(
    name="sendTimeout",
    doc="Longest wait for one batch's acknowledgement.",
    default="60s",
    minimum=1,
    iso=True,
    uses=Use.WRITE,
    config_field="SinkConfig.send_timeout_s",
)
STAMP_BATCH_ID = Flag(
    name="stampBatchId",
    doc="Add properties spark.batchId, spark.partition and spark.row to every event so "
    "consumers can drop events a replayed batch sent again.",
    default="false",
    uses=Use.WRITE,
    config_field="SinkConfig.stamp",
)
CHECKPOINT_LOCATION = Text(
    name="checkpointLocation",
    doc="Spark's own option: the query's checkpoint (not read here).",
    uses=Use.WRITE,
)

# -- event bodies (bodyFormat and avroSchema mean one thing to readers, another to writers) --
MODES = ("FAILFAST", "PERMISSIVE", "DROPMALFORMED")
REGISTRY_AUTH_KINDS = ("servicePrincipal", "managedIdentity", "defaultAzureCredential")

READ_BODY_FORMAT = Choice(
    name="bodyFormat",
    doc="binary (body column as bytes) or avro (body decoded into a struct).",
    default="binary",
    choices=("binary", "avro"),
    uses=Use.READ,
)
WRITE_BODY_FORMAT = Choice(
    name="bodyFormat",
    doc="binary (body column is string or binary) or avro (body encoded as Avro).",
    default="binary",
    choices=("binary", "avro"),
    uses=Use.WRITE,
)
READ_AVRO_SCHEMA = Text(
    name="avroSchema",
    doc="Avro schema (JSON) of the bodies; the reader's schema when the registry names the "
    "writer's; required with bodyFormat=avro.",
    uses=Use.READ,
)
WRITE_AVRO_SCHEMA = Text(
    name="avroSchema",
    doc="Avro schema (JSON) to encode with; unset: derived from the body column like to_avro.",
    shown_default="derived from the body column",
    uses=Use.WRITE,
)
MODE = Choice(
    name="mode",
    doc="An event whose body does not decode: FAILFAST fails the query naming hub, partition "
    "and sequence number; PERMISSIVE keeps it with a null body and fills "
    "columnNameOfCorruptRecord; DROPMALFORMED drops it.",
    default="FAILFAST",
    choices=MODES,
    uses=Use.READ,
    config_field="BodyFormat.mode",
)
COLUMN_NAME_OF_CORRUPT_RECORD = Text(
    name="columnNameOfCorruptRecord",
    doc="PERMISSIVE only: column struct<body binary, error string>, null for good events.",
    default="_corrupt_record",
    uses=Use.READ,
)
BAD_RECORDS_PATH = Text(
    name="badRecordsPath",
    doc="Folder (any fsspec URL) where events that do not decode are written as JSON lines "
    "(metadata, base64 body, error) and skipped; overrides mode.",
    uses=Use.READ,
)
REGISTRY_NAMESPACE = Text(
    name="schemaRegistry.fullyQualifiedNamespace",
    doc="Azure Schema Registry namespace (<namespace>.servicebus.windows.net): event content "
    "types avro/binary+<schema id> name the writer's schema, fetched once per id.",
)
REGISTRY_GROUP = Text(
    name="schemaRegistry.group",
    doc="The registry's schema group (required for the sink).",
)
REGISTRY_AUTH = Choice(
    name="schemaRegistry.auth",
    doc="servicePrincipal, managedIdentity or defaultAzureCredential (the registry takes Entra "
    "ID only); default: auth if it is one of these, servicePrincipal with clientSecret, else "
    "defaultAzureCredential; uses tenantId, clientId, clientSecret.",
    shown_default="inferred",
    choices=REGISTRY_AUTH_KINDS,
)
REGISTRY_AUTHORITY_HOST = Text(
    name="schemaRegistry.authorityHost",
    doc="Entra ID authority for the registry's credential (sovereign or private clouds).",
    shown_default="authorityHost",
)
REGISTRY_CONNECTION_VERIFY = Text(
    name="schemaRegistry.connectionVerify",
    doc="Path to a PEM CA bundle that verifies the registry's and the authority's TLS "
    "certificates (TLS-inspecting proxies, private CAs).",
    shown_default="the system's CA certificates",
    config_field="RegistryConfig.connection_verify",
)
REGISTRY_AUTO_REGISTER = Flag(
    name="schemaRegistry.autoRegisterSchemas",
    doc="Register the schema in the group when it is not there yet (else the query fails).",
    default="false",
    uses=Use.WRITE,
)
REGISTRY_OPTIONS = (
    REGISTRY_NAMESPACE,
    REGISTRY_GROUP,
    REGISTRY_AUTH,
    REGISTRY_AUTHORITY_HOST,
    REGISTRY_CONNECTION_VERIFY,
)
# Given with bodyFormat=binary, these are an error (in this order), not silently ignored.
AVRO_ONLY_READ = (
    READ_AVRO_SCHEMA,
    MODE,
    COLUMN_NAME_OF_CORRUPT_RECORD,
    BAD_RECORDS_PATH,
    *REGISTRY_OPTIONS,
)
AVRO_ONLY_WRITE = (WRITE_AVRO_SCHEMA, *REGISTRY_OPTIONS, REGISTRY_AUTO_REGISTER)

# Spark passes it to every writer; last in the docs' tables.
QUERY_NAME = Text(
    name="queryName",
    doc="Spark passes writeStream.queryName(...) as an option (not read here).",
    uses=Use.WRITE,
)

TABLE = OptionTable.declared(NAME, globals())
SECRET_OPTIONS = tuple(option for option in TABLE.options if option.secret)
