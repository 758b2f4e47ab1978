"""Where an Event Hub is and how to authenticate to it, shared by the pyeventhub source and sink.

The Scala connector required an *encrypted* connection string; users hated it. Here every way
Azure offers is a plain option, validated on the driver when the query starts
(``options.parse_options``). The result is a small picklable value that travels to executors
inside the reader's or writer's config, builds SDK clients there (credential objects are not
picklable, so they are made where they are used, once per process), and never shows a secret in
``repr``, errors or descriptions.

A query's first calls use clients built with ``first_contact`` (the SDK's documented retry
keywords set to no retry, :data:`._refusals.GIVE_UP_AT_ONCE`), so a hub, consumer group or
namespace that does not exist fails at once, not after the SDK's retries (or never);
:meth:`refused` turns that failure into an :class:`~pysparksources.errors.OptionError` naming
the option.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pysparksources._core.process_caches import PROCESS, ProcessCache
from pysparksources.errors import OptionError
from pysparksources.eventhubs import NAME
from pysparksources.eventhubs._handshake import prompt
from pysparksources.eventhubs._refusals import (
    GIVE_UP_AT_ONCE,
    auth_refusal,
    refusal,
    resolver_error,
)

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
    authority_host: str | None = None  # Entra ID authority (servicePrincipal, default...)
    development_emulator: bool = False  # plain AMQP to host:port (useDevelopmentEmulator)

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
        if self.development_emulator:
            transport += "-plain"
        return (
            f"{self.describe()}|{self.auth}|{self.key_name}|{self.client_id}|{self.tenant_id}|"
            f"{self.authority_host}|{transport}|{digest}"
        )

    def _client_kwargs(self, extra: dict[str, Any], first_contact: bool) -> dict[str, Any]:
        from azure.eventhub import TransportType

        kwargs = {**GIVE_UP_AT_ONCE, **extra} if first_contact else dict(extra)
        if self.websockets:
            kwargs["transport_type"] = TransportType.AmqpOverWebsocket
        if self.development_emulator:  # what UseDevelopmentEmulator=true makes the SDK do
            kwargs["use_tls"] = False
        return kwargs

    @property
    def _namespace_option(self) -> str:
        """The option that named the namespace."""
        if self.connection_string is not None:
            return "connectionString"
        return "fullyQualifiedNamespace"

    def refused(
        self, error: BaseException, consumer_group: str | None = None
    ) -> OptionError | None:
        """The error naming what ``error`` says does not exist, else None.

        ``amqp:not-found`` means the consumer group when ``consumer_group`` is given (a
        receiver was refused: the driver checked the hub at the query's start), else the hub
        (a management request or a producer). No secret is quoted: the namespace, hub and
        group are not secrets, the connection string's value never appears.
        """
        found = refusal(error)
        if found is None:
            return self._auth_refused(error)
        if found == "not-found" and consumer_group is not None:
            return OptionError(
                NAME,
                "consumerGroup",
                f"consumer group '{consumer_group}' does not exist in hub '{self.event_hub}' "
                f"of namespace {self.namespace} (a receiver was refused with amqp:not-found): "
                "create it in the hub, set option 'consumerGroup' to one that exists "
                f"($Default always does), or start the emulator with --consumer-group "
                f"{consumer_group}",
            )
        if found == "not-found":
            where = "option 'eventHubName'"
            if self.connection_string is not None:
                where += " (or the connection string's EntityPath)"
            return OptionError(
                NAME,
                "eventHubName",
                f"event hub '{self.event_hub}' does not exist in namespace {self.namespace} "
                f"(the service answered amqp:not-found): check {where}, or create the hub "
                f"(the emulator: --hub {self.event_hub}:PARTITIONS)",
            )
        option = self._namespace_option
        where = f"option '{option}'" + (" (its Endpoint)" if option == "connectionString" else "")
        if found == "refused":
            return OptionError(
                NAME,
                option,
                f"nothing accepts connections at namespace {self.namespace} (connection "
                f"refused): check the namespace and port in {where}, or start the service "
                "there (the emulator: pysparksources-emulator --port PORT)",
            )
        resolver = resolver_error(error)
        reason = resolver.strerror if resolver is not None and resolver.strerror else "no address"
        return OptionError(
            NAME,
            option,
            f"namespace {self.namespace} does not resolve ({reason}): check the namespace in "
            f"{where}",
        )

    def _auth_refused(self, error: BaseException) -> OptionError | None:
        """The error naming the credential option to fix, when authentication failed for good
        (the texts quoted are Entra ID's and the SDK's, which never hold the secret)."""
        found = auth_refusal(error)
        if found is None:
            return None
        if found.by_service:
            option = {
                "connectionString": "connectionString",
                "sasKey": "sharedAccessKey",
                "sasToken": "sharedAccessSignature",
            }.get(self.auth, "auth")
            if option != "auth":
                advice = "check the key or token, its policy's claims and its expiry"
            else:
                advice = (
                    "the identity needs a data role on the namespace or hub (Azure Event Hubs "
                    "Data Receiver to read, Data Sender to write), and tokens of its tenant for "
                    "https://eventhubs.azure.net/"
                )
            return OptionError(
                NAME,
                option,
                f"{self.describe()} refused the token of auth={self.auth} ({found.reason}): "
                f"{advice}",
            )
        option = found.option if self.auth == "servicePrincipal" else "auth"
        return OptionError(
            NAME,
            option,
            f"Entra ID issued no token for auth={self.auth} ({found.reason}): check option "
            f"'{option}'" + (" (and authorityHost)" if option == "tenantId" else ""),
        )

    def credential(self) -> Any:
        """This connection's credential, one per process for all its clients.

        An Entra ID credential caches its token: one per receiver would fetch a token (from
        the managed identity endpoint, say) for every receiver a worker opens.
        """
        return _CREDENTIALS.get_or_make(self.pool_key(), self._new_credential)

    def _new_credential(self) -> Any:
        if self.auth == "sasKey":
            from azure.core.credentials import AzureNamedKeyCredential

            return AzureNamedKeyCredential(self.key_name or "", self.key or "")
        if self.auth == "sasToken":
            from azure.core.credentials import AzureSasCredential

            return AzureSasCredential(self.sas_token or "")
        from azure import identity

        authority: dict[str, Any] = {}
        if self.authority_host:
            # A sovereign or private authority: azure-identity would otherwise ask
            # login.microsoftonline.com whether this host is a known one.
            authority = {"authority": self.authority_host, "disable_instance_discovery": True}
        if self.auth == "servicePrincipal":
            return identity.ClientSecretCredential(
                self.tenant_id or "", self.client_id or "", self.client_secret or "", **authority
            )
        if self.auth == "managedIdentity":
            return identity.ManagedIdentityCredential(client_id=self.client_id)
        return identity.DefaultAzureCredential(**authority)

    def consumer_client(
        self,
        consumer_group: str,
        partition_ids: tuple[str, ...] | None = None,
        first_contact: bool = False,
        **kwargs: Any,
    ) -> EventHubConsumerClient:
        """A new synchronous consumer client; ``kwargs`` go to the SDK unchanged.

        ``first_contact``: a client that retries nothing (the query has not reached the service
        yet, or this client checks something once): its first error is raised at once.

        With ``partition_ids`` the client answers ``get_partition_ids()`` with them instead of
        asking the service: the SDK's ``receive_batch`` asks before every receive, a management
        round trip (connection, token, link) of about 0.4 s that a read task, which already
        knows its partition, would pay for every new receiver.
        """
        from azure.eventhub import EventHubConsumerClient

        kwargs = self._client_kwargs(kwargs, first_contact)
        client_class = EventHubConsumerClient
        if partition_ids is not None:
            client_class = _known_partitions_client(partition_ids)
        # prompt(): management calls without the SDK's 50 ms naps (see _handshake).
        if self.connection_string is not None:
            return prompt(
                client_class.from_connection_string(
                    self.connection_string,
                    consumer_group=consumer_group,
                    eventhub_name=self.event_hub,
                    **kwargs,
                )
            )
        return prompt(
            client_class(
                self.namespace, self.event_hub, consumer_group, self.credential(), **kwargs
            )
        )

    def producer_client(self, first_contact: bool = False, **kwargs: Any) -> EventHubProducerClient:
        """A new synchronous producer client; ``kwargs`` go to the SDK unchanged
        (``first_contact`` as for :meth:`consumer_client`)."""
        from azure.eventhub import EventHubProducerClient

        kwargs = self._client_kwargs(kwargs, first_contact)
        if self.connection_string is not None:
            return prompt(
                EventHubProducerClient.from_connection_string(
                    self.connection_string, eventhub_name=self.event_hub, **kwargs
                )
            )
        return prompt(
            EventHubProducerClient(self.namespace, self.event_hub, self.credential(), **kwargs)
        )


# pool_key -> credential, per process; never closed here: the clients made with one (a parked
# receiver's, a pooled producer's) may outlive its entry.
_CREDENTIALS: ProcessCache[str, Any] = PROCESS.cache("eventhubs.credentials", 64)


@functools.cache
def _known_partitions_client(partition_ids: tuple[str, ...]) -> type[EventHubConsumerClient]:
    from azure.eventhub import EventHubConsumerClient

    class KnownPartitionsConsumerClient(EventHubConsumerClient):  # type: ignore[misc]
        def get_partition_ids(self) -> list[str]:
            return list(partition_ids)

    return KnownPartitionsConsumerClient
