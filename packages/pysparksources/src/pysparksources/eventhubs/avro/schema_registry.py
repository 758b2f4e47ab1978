"""Azure Schema Registry, cached per process: writers' schemas by id, the sink's id by content.

Events encoded by the SDK's AvroEncoder carry the content type ``avro/binary+<schema id>``.
Read tasks are unpickled fresh for every task, but Python workers are reused across tasks and
batches, so clients and schemas live in process caches (:mod:`pysparksources._core.process_caches`,
named ``eventhubs.registry-*``) keyed by namespace (and id): each writer's schema is fetched once
per worker process, not once per event or task. The registry
accepts Entra ID tokens only, so the credential is one of azure-identity's.

What the registry answers for an id is checked before it is used (:func:`schema_by_id`): an
answer that the id does not exist (404 or another client error) or that is not a usable Avro
schema (another format, not JSON, larger than :data:`MAX_SCHEMA_BYTES`, nested too deep) makes
the events naming that id bad records, and is remembered in a negative cache bounded in ids and
in time, so a schema registered later is found. Only what says nothing about the id stops the
query: the registry refusing our credential (401, 403), the credential failing to get a token,
the registry unreachable or failing (5xx, throttling past the retries). The by-id request goes
through azure-core's pipeline with the client's own bearer-token policy, so that the answer's
status and size can be checked before its body is read; registering and looking up by content
(the sink) use the ``azure-schemaregistry`` client.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from pysparksources._core.avro_schema import AvroNode, parse_schema
from pysparksources._core.process_caches import PROCESS, ProcessCache
from pysparksources.errors import MalformedRecordError, SchemaError, SchemaRegistryError
from pysparksources.eventhubs import NAME

if TYPE_CHECKING:
    from pysparksources.eventhubs.config import RegistryConfig

__all__ = [
    "AVRO_CONTENT_TYPE",
    "MAX_SCHEMA_BYTES",
    "MISSING_IDS",
    "MISSING_SECONDS",
    "clear_caches",
    "schema_by_id",
    "schema_id_for",
    "schema_id_of",
]

AVRO_CONTENT_TYPE = "avro/binary"
# A schema document larger than this is not read past it: far beyond any real schema.
MAX_SCHEMA_BYTES = 1024 * 1024
# Ids the registry had no usable schema for: remembered this long, this many per process.
MISSING_SECONDS = 30.0
MISSING_IDS = 1024
# Schemas fetched and parsed: the least recently used beyond this many are fetched again.
_KNOWN_IDS = 1024
# The registry's ids are 32 hex digits; anything outside this is never sent as a URL path.
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_SCOPE = "https://eventhubs.azure.net/.default"  # the azure-schemaregistry client's scope
_API_VERSION = "2022-10"  # the azure-schemaregistry client's (1.3) default
_ACCEPT = "application/json; serialization=Avro"
_AVRO_MEDIA = "application/json;serialization=avro"
# 4xx answers that say the registry cannot tell now, not that the id does not exist.
_NOT_ABOUT_THE_ID = {401, 403, 407, 408, 429}
# Retries of the by-id request (azure-core's RetryPolicy keywords); the tests shorten them.
RETRY: dict[str, Any] = {"retry_total": 3, "retry_backoff_factor": 0.8}
# Registries (namespace and credential settings) a process talks to at most.
_REGISTRIES = 16


def _close(client: Any) -> None:
    client.close()


# Per registry (:func:`_key`): its credential (never closed here: clients made with it may
# still use it), the azure-schemaregistry client (the sink) and the by-id pipeline (the source).
_CREDENTIALS: ProcessCache[tuple[Any, ...], Any] = PROCESS.cache(
    "eventhubs.registry-credentials", _REGISTRIES
)
_CLIENTS: ProcessCache[tuple[Any, ...], Any] = PROCESS.cache(
    "eventhubs.registry-clients", _REGISTRIES, close=_close, close_at_exit=True
)
_PIPELINES: ProcessCache[tuple[Any, ...], Any] = PROCESS.cache(
    "eventhubs.registry-pipelines", _REGISTRIES, close=_close, close_at_exit=True
)
# (namespace, group, name, definition) -> the sink's schema id.
_IDS: ProcessCache[tuple[str, str, str, str], str] = PROCESS.cache(
    "eventhubs.registry-ids", _KNOWN_IDS
)
# (namespace, id) -> the parsed writer's schema; -> why the id has none (the negative cache).
_SCHEMAS: ProcessCache[tuple[str, str], tuple[Any, AvroNode]] = PROCESS.cache(
    "eventhubs.registry-schemas", _KNOWN_IDS
)
_MISSING: ProcessCache[tuple[str, str], str] = PROCESS.cache(
    "eventhubs.registry-missing", MISSING_IDS, max_age_s=MISSING_SECONDS
)


def clear_caches() -> None:
    """Forget every client, schema and missing id of this process (tests)."""
    for cache in (_CREDENTIALS, _CLIENTS, _PIPELINES, _IDS, _SCHEMAS, _MISSING):
        cache.clear()


def schema_id_of(content_type: str | None) -> str | None:
    """The schema id of ``avro/binary+<id>``; None for any other content type."""
    if not content_type:
        return None
    mime, plus, schema_id = content_type.partition("+")
    if not plus or mime.strip().lower() != AVRO_CONTENT_TYPE or not schema_id.strip():
        return None
    return schema_id.strip()


def _credential(config: RegistryConfig) -> Any:
    return _CREDENTIALS.get_or_make(_key(config), lambda: _new_credential(config))


def _new_credential(config: RegistryConfig) -> Any:
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
    return _CLIENTS.get_or_make(_key(config), lambda: _new_client(config))


def _new_client(config: RegistryConfig) -> Any:
    from azure.schemaregistry import SchemaRegistryClient

    kwargs: dict[str, Any] = {}
    if config.connection_verify:
        kwargs["connection_verify"] = config.connection_verify
    return SchemaRegistryClient(config.namespace, _credential(config), **kwargs)


def _pipeline(config: RegistryConfig) -> Any:
    return _PIPELINES.get_or_make(_key(config), lambda: _new_pipeline(config))


def _new_pipeline(config: RegistryConfig) -> Any:
    from azure.core import PipelineClient
    from azure.core.pipeline import policies

    kwargs: dict[str, Any] = {}
    if config.connection_verify:
        kwargs["connection_verify"] = config.connection_verify
    return PipelineClient(
        f"https://{config.namespace}",
        policies=[
            policies.HeadersPolicy(),
            policies.UserAgentPolicy(sdk_moniker="pysparksources"),
            policies.ProxyPolicy(),
            policies.RetryPolicy(**RETRY),
            policies.BearerTokenCredentialPolicy(_credential(config), _SCOPE),
        ],
        **kwargs,
    )


def _failed(config: RegistryConfig, what: str, error: Exception) -> SchemaRegistryError:
    reason = getattr(error, "reason", None) or type(error).__name__
    status = getattr(error, "status_code", None)
    detail = f"HTTP {status} {reason}" if status else f"{type(error).__name__}: {error}"
    return SchemaRegistryError(NAME, f"{config.describe()}: {what} failed ({detail})")


def _endpoint(config: RegistryConfig) -> str:
    return f"https://{config.namespace}"


def _unreachable(config: RegistryConfig, schema_id: str, error: Exception) -> SchemaRegistryError:
    """The request got no answer from the registry, or no token to send: nothing is known of
    the id, so the task fails (Spark retries it) instead of calling its events bad."""
    from azure.core.exceptions import ClientAuthenticationError

    text = " ".join(str(error).split())[:300]
    if isinstance(error, ClientAuthenticationError):
        check = (
            "check tenantId, clientId and clientSecret (or the managed identity), "
            "schemaRegistry.authorityHost and schemaRegistry.connectionVerify"
        )
        what = "could not get an Entra ID token for it"
    else:
        check = (
            "check schemaRegistry.fullyQualifiedNamespace, the network and proxy between the "
            "workers and it, and schemaRegistry.connectionVerify"
        )
        what = f"could not be reached at {_endpoint(config)}"
    return SchemaRegistryError(
        NAME,
        f"{config.describe()} {what} while getting schema {schema_id} "
        f"({type(error).__name__}: {text}); {check}",
    )


def _refused(config: RegistryConfig, schema_id: str, status: int, reason: str) -> Exception:
    """An HTTP answer other than 200 for ``GET /$schemaGroups/$schemas/<id>``."""
    answer = f"HTTP {status} {reason}".strip()
    if status in (401, 403):
        return SchemaRegistryError(
            NAME,
            f"{config.describe()} at {_endpoint(config)} refused our credential getting schema "
            f"{schema_id} ({answer}); check that the identity (clientId or the managed identity)"
            " has the Schema Registry Reader role on the namespace and that its token is for "
            "that namespace's tenant",
        )
    if 400 <= status < 500 and status not in _NOT_ABOUT_THE_ID:
        return MalformedRecordError(
            NAME, f"{config.describe()} has no schema {schema_id} ({answer})"
        )
    return SchemaRegistryError(
        NAME,
        f"{config.describe()} at {_endpoint(config)} did not answer for schema {schema_id} "
        f"({answer}, after retries); the registry is unavailable or throttling: Spark retries "
        "the task",
    )


def _fetch(config: RegistryConfig, schema_id: str) -> str:
    """The definition registered under ``schema_id``; MalformedRecordError when the registry
    answers that it has none usable, SchemaRegistryError when it cannot say."""
    from azure.core.exceptions import AzureError
    from azure.core.rest import HttpRequest

    request = HttpRequest(
        "GET",
        f"{_endpoint(config)}/$schemaGroups/$schemas/{quote(schema_id, safe='')}",
        params={"api-version": _API_VERSION},
        headers={"Accept": _ACCEPT},
    )
    try:
        response = _pipeline(config).send_request(request, stream=True)
    except Exception as error:  # no answer (or no token to ask with): nothing known of the id
        raise _unreachable(config, schema_id, error) from None
    try:
        if response.status_code != 200:
            raise _refused(config, schema_id, response.status_code, response.reason or "")
        media = (response.headers.get("Content-Type") or "").replace(" ", "").lower()
        if media != _AVRO_MEDIA:
            raise MalformedRecordError(
                NAME,
                f"{config.describe()}: schema {schema_id} is {media[:80] or 'untyped'!r}, "
                "not an Avro schema",
            )
        body = bytearray()
        try:
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > MAX_SCHEMA_BYTES:
                    raise MalformedRecordError(
                        NAME,
                        f"{config.describe()}: schema {schema_id} is larger than "
                        f"{MAX_SCHEMA_BYTES} bytes",
                    )
        except AzureError as error:
            raise _unreachable(config, schema_id, error) from None
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            raise MalformedRecordError(
                NAME, f"{config.describe()}: schema {schema_id} is not UTF-8 text"
            ) from None
    finally:
        response.close()


def schema_by_id(config: RegistryConfig, schema_id: str) -> tuple[Any, AvroNode]:
    """The writer's schema registered under ``schema_id`` (its JSON and its parsed form).

    MalformedRecordError when the registry has no usable Avro schema under that id (the event
    is bad; remembered for :data:`MISSING_SECONDS`); SchemaRegistryError when it cannot be
    asked (the query fails).
    """
    key = (config.namespace, schema_id)
    known = _SCHEMAS.get(key)
    if known is not None:
        return known
    missing = _MISSING.get(key)
    if missing is not None:
        raise MalformedRecordError(NAME, missing)
    try:
        if not _ID.fullmatch(schema_id):
            raise MalformedRecordError(
                NAME, f"schema id {schema_id[:80]!r} is not a registry id (letters, digits, ._-)"
            )
        definition = _fetch(config, schema_id)
        try:
            parsed = parse_schema(definition, NAME)
        except SchemaError as error:
            raise MalformedRecordError(
                NAME,
                f"{config.describe()}: schema {schema_id} is not a usable Avro schema "
                f"({error.detail})",
            ) from None
    except MalformedRecordError as error:
        _MISSING.put(key, error.detail)
        raise
    _SCHEMAS.put(key, parsed)
    return parsed


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
    _IDS.put(key, str(properties.id))
    return str(properties.id)
