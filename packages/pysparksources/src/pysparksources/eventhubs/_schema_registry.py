"""Azure Schema Registry through the official ``azure-schemaregistry`` client, cached per process.

Events encoded by the SDK's AvroEncoder carry the content type ``avro/binary+<schema id>``.
Read tasks are unpickled fresh for every task, but Python workers are reused across tasks and
batches, so the clients and the schemas live in module-level caches keyed by namespace (and
id): each writer's schema is fetched once per worker process, not once per event or task.
The registry accepts Entra ID tokens only, so the credential is one of azure-identity's.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from pysparksources.errors import SchemaRegistryError
from pysparksources.eventhubs import NAME

if TYPE_CHECKING:
    from pysparksources.eventhubs.config import RegistryConfig

__all__ = ["AVRO_CONTENT_TYPE", "schema_by_id", "schema_id_for", "schema_id_of"]

AVRO_CONTENT_TYPE = "avro/binary"
_LOCK = threading.Lock()
_CLIENTS: dict[tuple[Any, ...], Any] = {}
_SCHEMAS: dict[tuple[str, str], str] = {}
_IDS: dict[tuple[str, str, str, str], str] = {}


def schema_id_of(content_type: str | None) -> str | None:
    """The schema id of ``avro/binary+<id>``; None for any other content type."""
    if not content_type:
        return None
    mime, plus, schema_id = content_type.partition("+")
    if not plus or mime.strip().lower() != AVRO_CONTENT_TYPE or not schema_id.strip():
        return None
    return schema_id.strip()


def _credential(config: RegistryConfig) -> Any:
    from azure import identity

    kwargs: dict[str, Any] = {}
    if config.authority_host:
        # A private or sovereign authority: azure-identity would otherwise ask
        # login.microsoftonline.com whether this host is a known one.
        kwargs.update(authority=config.authority_host, disable_instance_discovery=True)
    if config.connection_verify:
        kwargs["connection_verify"] = config.connection_verify
    if config.auth == "servicePrincipal":
        return identity.ClientSecretCredential(
            config.tenant_id or "", config.client_id or "", config.client_secret or "", **kwargs
        )
    if config.auth == "managedIdentity":
        return identity.ManagedIdentityCredential(client_id=config.client_id)
    if config.client_id:
        kwargs["managed_identity_client_id"] = config.client_id
    return identity.DefaultAzureCredential(**kwargs)


def _key(config: RegistryConfig) -> tuple[Any, ...]:
    # The secret is part of the identity of a client, compared in memory only.
    return (
        config.namespace,
        config.auth,
        config.tenant_id,
        config.client_id,
        config.client_secret,
        config.authority_host,
        config.connection_verify,
    )


def _client(config: RegistryConfig) -> Any:
    with _LOCK:
        client = _CLIENTS.get(_key(config))
        if client is None:
            from azure.schemaregistry import SchemaRegistryClient

            kwargs: dict[str, Any] = {}
            if config.connection_verify:
                kwargs["connection_verify"] = config.connection_verify
            client = SchemaRegistryClient(config.namespace, _credential(config), **kwargs)
            _CLIENTS[_key(config)] = client
        return client


def _failed(config: RegistryConfig, what: str, error: Exception) -> SchemaRegistryError:
    reason = getattr(error, "reason", None) or type(error).__name__
    status = getattr(error, "status_code", None)
    detail = f"HTTP {status} {reason}" if status else f"{type(error).__name__}: {error}"
    return SchemaRegistryError(NAME, f"{config.describe()}: {what} failed ({detail})")


def schema_by_id(config: RegistryConfig, schema_id: str) -> str:
    """The schema definition registered under ``schema_id`` (fetched once per process)."""
    key = (config.namespace, schema_id)
    cached = _SCHEMAS.get(key)
    if cached is not None:
        return cached
    try:
        schema = _client(config).get_schema(schema_id)
    except Exception as error:
        raise _failed(config, f"getting schema {schema_id}", error) from None
    fmt = str(getattr(schema.properties, "format", ""))
    if "avro" not in fmt.lower():
        raise SchemaRegistryError(
            NAME, f"{config.describe()}: schema {schema_id} is {fmt}, not Avro"
        )
    with _LOCK:
        _SCHEMAS[key] = schema.definition
    return str(schema.definition)


def schema_id_for(config: RegistryConfig, name: str, definition: str) -> str:
    """The id of ``definition`` in the group: looked up, or registered with autoRegister."""
    group = config.group or ""
    key = (config.namespace, group, name, definition)
    cached = _IDS.get(key)
    if cached is not None:
        return cached
    client = _client(config)
    try:
        if config.auto_register:
            properties = client.register_schema(group, name, definition, "Avro")
        else:
            properties = client.get_schema_properties(group, name, definition, "Avro")
    except Exception as error:
        from azure.core.exceptions import ResourceNotFoundError

        if isinstance(error, ResourceNotFoundError):
            raise SchemaRegistryError(
                NAME,
                f"{config.describe()} has no schema {name} with this definition; "
                "register it, or set schemaRegistry.autoRegisterSchemas=true",
            ) from None
        action = "registering" if config.auto_register else "looking up"
        raise _failed(config, f"{action} schema {name}", error) from None
    with _LOCK:
        _IDS[key] = properties.id
    return str(properties.id)
