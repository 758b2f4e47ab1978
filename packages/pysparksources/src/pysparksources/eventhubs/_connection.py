"""Where an Event Hub is and how to authenticate to it, shared by the pyeventhub source and sink.

The Scala connector required an *encrypted* connection string; users hated it. Here every way
Azure offers is a plain option, validated on the driver when the query starts
(``options.parse_options``). The result is a small picklable value that travels to executors
inside the reader's or writer's config, builds SDK clients there (credential objects are not
picklable, so they are made where they are used, once per process), and never shows a secret in
``repr``, errors or descriptions.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the SDK is an optional extra; import it only where clients are built
    from azure.eventhub import EventHubConsumerClient, EventHubProducerClient

__all__ = ["EventHubConnection"]


@dataclass(frozen=True)
class EventHubConnection:
    """A validated, picklable description of one Event Hub and its credentials.

    Secret fields are excluded from ``repr``; :meth:`describe` is the only text meant for logs,
    errors and query descriptions.
    """

    namespace: str  # host[:port], e.g. myns.servicebus.windows.net or 127.0.0.1:5672
    event_hub: str
    auth: str
    connection_string: str | None = field(repr=False)
    key_name: str | None
    key: str | None = field(repr=False)
    sas_token: str | None = field(repr=False)
    tenant_id: str | None
    client_id: str | None
    client_secret: str | None = field(repr=False)
    websockets: bool

    def describe(self) -> str:
        """``sb://namespace/hub``: safe to log."""
        return f"sb://{self.namespace}/{self.event_hub}"

    def pool_key(self) -> str:
        """Identity of a connection for executor-side client pools (secrets hashed, not kept)."""
        secret = "\0".join(
            s or "" for s in (self.connection_string, self.key, self.sas_token, self.client_secret)
        )
        digest = hashlib.sha256(secret.encode()).hexdigest()[:16]
        transport = "websockets" if self.websockets else "amqp"
        return (
            f"{self.describe()}|{self.auth}|{self.key_name}|{self.client_id}|{self.tenant_id}|"
            f"{transport}|{digest}"
        )

    def _client_kwargs(self, extra: dict[str, Any]) -> dict[str, Any]:
        from azure.eventhub import TransportType

        kwargs = dict(extra)
        if self.websockets:
            kwargs["transport_type"] = TransportType.AmqpOverWebsocket
        return kwargs

    def credential(self) -> Any:
        """This connection's credential, one per process for all its clients.

        An Entra ID credential caches its token: one per receiver would fetch a token (from
        the managed identity endpoint, say) for every receiver a worker opens.
        """
        key = self.pool_key()
        with _CREDENTIALS_LOCK:
            found = _CREDENTIALS.get(key)
            if found is None:
                found = _CREDENTIALS[key] = self._new_credential()
        return found

    def _new_credential(self) -> Any:
        if self.auth == "sasKey":
            from azure.core.credentials import AzureNamedKeyCredential

            return AzureNamedKeyCredential(self.key_name or "", self.key or "")
        if self.auth == "sasToken":
            from azure.core.credentials import AzureSasCredential

            return AzureSasCredential(self.sas_token or "")
        from azure import identity

        if self.auth == "servicePrincipal":
            return identity.ClientSecretCredential(
                self.tenant_id or "", self.client_id or "", self.client_secret or ""
            )
        if self.auth == "managedIdentity":
            return identity.ManagedIdentityCredential(client_id=self.client_id)
        return identity.DefaultAzureCredential()

    def consumer_client(
        self, consumer_group: str, partition_ids: tuple[str, ...] | None = None, **kwargs: Any
    ) -> EventHubConsumerClient:
        """A new synchronous consumer client; ``kwargs`` go to the SDK unchanged.

        With ``partition_ids`` the client answers ``get_partition_ids()`` with them instead of
        asking the service: the SDK's ``receive_batch`` asks before every receive, a management
        round trip (connection, token, link) of about 0.4 s that a read task, which already
        knows its partition, would pay for every new receiver.
        """
        from azure.eventhub import EventHubConsumerClient

        kwargs = self._client_kwargs(kwargs)
        client_class = EventHubConsumerClient
        if partition_ids is not None:
            client_class = _known_partitions_client(partition_ids)
        if self.connection_string is not None:
            return client_class.from_connection_string(
                self.connection_string,
                consumer_group=consumer_group,
                eventhub_name=self.event_hub,
                **kwargs,
            )
        return client_class(
            self.namespace, self.event_hub, consumer_group, self.credential(), **kwargs
        )

    def producer_client(self, **kwargs: Any) -> EventHubProducerClient:
        """A new synchronous producer client; ``kwargs`` go to the SDK unchanged."""
        from azure.eventhub import EventHubProducerClient

        kwargs = self._client_kwargs(kwargs)
        if self.connection_string is not None:
            return EventHubProducerClient.from_connection_string(
                self.connection_string, eventhub_name=self.event_hub, **kwargs
            )
        return EventHubProducerClient(self.namespace, self.event_hub, self.credential(), **kwargs)


_CREDENTIALS: dict[str, Any] = {}  # pool_key -> credential, for the life of the process
_CREDENTIALS_LOCK = threading.Lock()


@functools.cache
def _known_partitions_client(partition_ids: tuple[str, ...]) -> type[EventHubConsumerClient]:
    from azure.eventhub import EventHubConsumerClient

    class KnownPartitionsConsumerClient(EventHubConsumerClient):  # type: ignore[misc]
        def get_partition_ids(self) -> list[str]:
            return list(partition_ids)

    return KnownPartitionsConsumerClient
