"""Where an Event Hub is and how to authenticate to it, shared by the pyeventhub source and sink.

The Scala connector required an *encrypted* connection string; users hated it. Here every way
Azure offers is a plain option, validated on the driver when the query starts. The result is
a small picklable value that travels to executors inside the reader or writer, builds SDK
clients there (credential objects are not picklable, so they are made where they are used,
once per process), and never shows a secret in ``repr``, errors or descriptions.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from pysparksources._core.legacy_options import Options

if TYPE_CHECKING:  # the SDK is an optional extra; import it only where clients are built
    from azure.eventhub import EventHubConsumerClient, EventHubProducerClient

__all__ = [
    "AUTH_KINDS",
    "CONNECTION_OPTIONS",
    "SECRET_OPTIONS",
    "EventHubConnection",
    "parse_connection",
]

# name -> (default shown in the docs, meaning). Source and sink docs list these.
CONNECTION_OPTIONS: dict[str, tuple[str, str]] = {
    "connectionString": (
        "unset",
        "namespace or hub connection string (Endpoint=sb://...;SharedAccessKeyName=...;"
        "SharedAccessKey=...[;EntityPath=hub]); plain text, never encrypted",
    ),
    "eventHubName": ("EntityPath", "the Event Hub; required unless the string has EntityPath"),
    "fullyQualifiedNamespace": (
        "unset",
        "<namespace>.servicebus.windows.net, with a credential instead of a connection string",
    ),
    "auth": (
        "inferred",
        "connectionString, sasKey, sasToken, defaultAzureCredential, servicePrincipal or "
        "managedIdentity; inferred from the options given",
    ),
    "sharedAccessKeyName": ("unset", "SAS policy name (auth=sasKey)"),
    "sharedAccessKey": ("unset", "SAS key (auth=sasKey); secret"),
    "sharedAccessSignature": ("unset", "a ready SAS token 'SharedAccessSignature sr=...' ; secret"),
    "tenantId": ("unset", "Entra ID tenant (auth=servicePrincipal)"),
    "clientId": (
        "unset",
        "application id (servicePrincipal) or user-assigned identity (managedIdentity)",
    ),
    "clientSecret": ("unset", "application secret (auth=servicePrincipal); secret"),
    "transportType": ("amqp", "amqp (port 5671) or amqpWebSockets (port 443, through proxies)"),
}
SECRET_OPTIONS = ("connectionString", "sharedAccessKey", "sharedAccessSignature", "clientSecret")
AUTH_KINDS = (
    "connectionString",
    "sasKey",
    "sasToken",
    "defaultAzureCredential",
    "servicePrincipal",
    "managedIdentity",
)


@dataclass(frozen=True)
class EventHubConnection:
    """A validated, picklable description of one Event Hub and its credentials.

    Secret fields are excluded from ``repr``; :meth:`describe` is the only text meant for logs,
    errors and query descriptions.
    """

    namespace: str  # host[:port], e.g. myns.servicebus.windows.net or 127.0.0.1:5672
    event_hub: str
    auth: str
    connection_string: str | None = field(default=None, repr=False)
    key_name: str | None = None
    key: str | None = field(default=None, repr=False)
    sas_token: str | None = field(default=None, repr=False)
    tenant_id: str | None = None
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    websockets: bool = False

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


def _split_connection_string(text: str) -> dict[str, str]:
    parts: dict[str, str] = {}
    for item in text.split(";"):
        if not item.strip():
            continue
        name, sep, value = item.partition("=")
        if not sep:
            raise ValueError(item)
        parts[name.strip().lower()] = value.strip()
    return parts


def parse_connection(options: Options) -> EventHubConnection:
    """Validate the connection options; raise :class:`OptionError` naming the bad one.

    ``options`` must have been built with :data:`SECRET_OPTIONS` as its secrets so that no
    error ever echoes a key.
    """
    connection_string = options.string("connectionString")
    namespace_option = options.string("fullyQualifiedNamespace")
    hub_option = options.string("eventHubName")
    websockets = options.choice("transportType", "amqp", ("amqp", "amqpWebSockets")) != "amqp"
    given_auth = options.string("auth")
    auth = options.choice("auth", "", AUTH_KINDS) if given_auth is not None else None

    if connection_string is not None:
        if namespace_option is not None:
            raise options.error(
                "fullyQualifiedNamespace",
                "give either connectionString or fullyQualifiedNamespace with a credential, "
                "not both",
            )
        if auth not in (None, "connectionString"):
            raise options.error("auth", "must be connectionString (or unset) with connectionString")
        return _from_connection_string(options, connection_string, hub_option, websockets)

    if namespace_option is None:
        raise options.required(
            "connectionString",
            "set connectionString, or fullyQualifiedNamespace with a credential "
            "(sharedAccessKeyName + sharedAccessKey, sharedAccessSignature, "
            "auth=defaultAzureCredential, servicePrincipal or managedIdentity)",
        )
    namespace = _namespace_host(options, namespace_option)
    if hub_option is None or not hub_option.strip():
        raise options.required("eventHubName", "the Event Hub to use with fullyQualifiedNamespace")
    auth = auth or _infer_auth(options)
    conn = EventHubConnection(
        namespace=namespace,
        event_hub=hub_option.strip(),
        auth=auth,
        key_name=options.string("sharedAccessKeyName"),
        key=options.string("sharedAccessKey"),
        sas_token=options.string("sharedAccessSignature"),
        tenant_id=options.string("tenantId"),
        client_id=options.string("clientId"),
        client_secret=options.string("clientSecret"),
        websockets=websockets,
    )
    _check_credential_options(options, conn)
    return conn


def _from_connection_string(
    options: Options, text: str, hub_option: str | None, websockets: bool
) -> EventHubConnection:
    try:
        parts = _split_connection_string(text)
    except ValueError:
        parts = {}
    endpoint = parts.get("endpoint", "")
    host = _netloc(endpoint)
    has_key = bool(parts.get("sharedaccesskeyname")) and bool(parts.get("sharedaccesskey"))
    if not host or not (has_key or parts.get("sharedaccesssignature")):
        raise options.error(
            "connectionString",
            "expected 'Endpoint=sb://<namespace>/;SharedAccessKeyName=<name>;"
            "SharedAccessKey=<key>[;EntityPath=<hub>]' or one with SharedAccessSignature=<token>",
        )
    entity = parts.get("entitypath")
    hub = hub_option.strip() if hub_option else entity
    if not hub:
        raise options.required(
            "eventHubName", "the connection string has no EntityPath to take the hub from"
        )
    if entity and hub_option and entity != hub:
        raise options.error(
            "eventHubName",
            f"the connection string's EntityPath names hub {entity!r}; they must agree",
        )
    return EventHubConnection(
        namespace=host,
        event_hub=hub,
        auth="connectionString",
        connection_string=text,
        key_name=parts.get("sharedaccesskeyname"),
        websockets=websockets,
    )


def _namespace_host(options: Options, text: str) -> str:
    value = text.strip()
    host = _netloc(value) if "://" in value else value.rstrip("/")
    if not host or "/" in host or ";" in host:
        raise options.error(
            "fullyQualifiedNamespace", "expected a host name such as myns.servicebus.windows.net"
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


def _infer_auth(options: Options) -> str:
    if options.has("sharedAccessSignature"):
        return "sasToken"
    if options.has("sharedAccessKey") or options.has("sharedAccessKeyName"):
        return "sasKey"
    if options.has("clientSecret") or options.has("tenantId"):
        return "servicePrincipal"
    return "defaultAzureCredential"


def _check_credential_options(options: Options, conn: EventHubConnection) -> None:
    required = {
        "sasKey": ("sharedAccessKeyName", "sharedAccessKey"),
        "sasToken": ("sharedAccessSignature",),
        "servicePrincipal": ("tenantId", "clientId", "clientSecret"),
    }.get(conn.auth, ())
    for name in required:
        if not options.has(name):
            raise options.required(name, f"auth={conn.auth} needs it")
