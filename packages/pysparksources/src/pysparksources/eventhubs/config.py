"""What pyeventhub's planners, tasks and writers know of the options: frozen, picklable values.

``options.parse_options`` builds them on the driver and fills every field; executors get them
inside partitions and writers, and import this module, never the parser or the option table.
Secrets live only in fields kept out of ``repr`` (in :class:`EventHubConnection` and
:class:`RegistryConfig`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pysparksources.eventhubs import NAME
from pysparksources.eventhubs._connection import EventHubConnection
from pysparksources.eventhubs._positions import Position

__all__ = [
    "BodyFormat",
    "CheckpointStoreConfig",
    "EventHubConnection",
    "RegistryConfig",
    "SinkConfig",
    "SourceConfig",
]


@dataclass(frozen=True)
class RegistryConfig:
    """One Azure Schema Registry and its Entra ID credential; secrets kept out of ``repr``."""

    namespace: str
    group: str | None
    auth: str
    tenant_id: str | None
    client_id: str | None
    client_secret: str | None = field(repr=False)
    authority_host: str | None
    connection_verify: str | None
    auto_register: bool

    def describe(self) -> str:
        return f"schema registry {self.namespace}" + (f" group {self.group}" if self.group else "")


@dataclass(frozen=True)
class CheckpointStoreConfig:
    """The Blob container of an Event Hubs checkpoint store (the layout EventProcessorClient
    and azure-eventhub-checkpointstoreblob use); the connection string kept out of ``repr``."""

    container: str
    connection_string: str | None = field(repr=False)
    account_url: str | None  # authenticated with the query's Entra ID credential
    update: bool  # write each committed batch's positions
    account: str  # the storage account's name or URL host: safe to log

    def describe(self) -> str:
        return f"checkpoint store container '{self.container}' of storage account {self.account}"


@dataclass(frozen=True)
class BodyFormat:
    """What the body column holds and, for Avro, how bad events are handled."""

    avro: bool
    schema_json: str | None  # compact JSON of avroSchema (the sink's: given or derived)
    mode: str
    corrupt_column: str
    bad_records_path: str | None
    registry: RegistryConfig | None
    # The sink's avro/binary+<schema id>: looked up in the registry when the writer is built.
    content_type: str | None = None

    @property
    def drops_bad(self) -> bool:
        return self.bad_records_path is not None or self.mode == "DROPMALFORMED"


@dataclass(frozen=True)
class SourceConfig:
    """Everything a reader needs, validated; picklable (executors get it inside partitions)."""

    connection: EventHubConnection
    consumer_group: str
    starting: Position
    starting_per_partition: dict[str, Position]
    ending: Position
    ending_per_partition: dict[str, Position]
    max_events_per_trigger: int | None
    min_events_per_trigger: int | None
    max_trigger_delay_s: float
    partitions: tuple[str, ...] | None
    max_events_per_partition: int | None
    min_partitions: int | None
    min_events_per_task: int
    max_partitions_per_task: int
    fail_on_data_loss: bool
    receiver_timeout_s: float
    operation_timeout_s: float
    prefetch: int
    receive_batch_size: int
    exclusive: bool
    locality: str
    idle_timeout_s: float
    max_parked: int
    buffer_bytes: int
    info_cache_s: float
    info_cache_given: bool  # partitionInfoCacheInterval set by the user: no call budget
    discovery_s: float
    task_stats_path: str | None
    body: BodyFormat
    checkpoint_store: CheckpointStoreConfig | None = None

    def describe(self) -> str:
        return f"{NAME}[{self.connection.describe()}, group {self.consumer_group}]"


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
    body: BodyFormat
