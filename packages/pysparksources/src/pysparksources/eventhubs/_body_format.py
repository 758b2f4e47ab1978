"""How event bodies are read and written: raw bytes, or Avro (with or without Schema Registry).

Standard library only (plus the option parser): the data source's ``schema()`` validates these
options at ``load()`` and builds the read schema from ``avroSchema`` without fastavro or the
Azure SDK. The reader and writer keep the parsed :class:`BodyFormat` (picklable) in their
configs, so executors decode and encode with what the driver validated.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pysparksources._core.legacy_options import Options
from pysparksources.errors import OptionError
from pysparksources.eventhubs._avro_schema import (
    AvroSchemaError,
    canonical_schema_text,
    parse_avro_schema,
    spark_ddl,
)
from pysparksources.eventhubs._schema import READ_SCHEMA_DDL

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "BINARY",
    "BODY_SINK_OPTIONS",
    "BODY_SOURCE_OPTIONS",
    "MODES",
    "BodyFormat",
    "RegistryConfig",
    "parse_body_format",
    "read_schema_ddl",
]

_REGISTRY_OPTIONS: dict[str, tuple[str, str]] = {
    "schemaRegistry.fullyQualifiedNamespace": (
        "unset",
        "Azure Schema Registry namespace (<namespace>.servicebus.windows.net): event content "
        "types avro/binary+<schema id> name the writer's schema, fetched once per id",
    ),
    "schemaRegistry.group": ("unset", "the registry's schema group (required for the sink)"),
    "schemaRegistry.auth": (
        "inferred",
        "servicePrincipal, managedIdentity or defaultAzureCredential (the registry takes Entra ID "
        "only); default: auth if it is one of these, servicePrincipal with clientSecret, else "
        "defaultAzureCredential; uses tenantId, clientId, clientSecret",
    ),
    "schemaRegistry.authorityHost": (
        "login.microsoftonline.com",
        "Entra ID authority for the registry's credential (sovereign or private clouds)",
    ),
    "schemaRegistry.connectionVerify": (
        "the system's CA certificates",
        "path to a PEM CA bundle that verifies the registry's and the authority's TLS "
        "certificates (TLS-inspecting proxies, private CAs)",
    ),
}

# name -> (default shown in the docs, meaning); merged into the source's and sink's tables.
BODY_SOURCE_OPTIONS: dict[str, tuple[str, str]] = {
    "bodyFormat": ("binary", "binary (body column as bytes) or avro (body decoded into a struct)"),
    "avroSchema": (
        "unset",
        "Avro schema (JSON) of the bodies; the reader's schema when the registry names the "
        "writer's; required with bodyFormat=avro",
    ),
    "mode": (
        "FAILFAST",
        "an event whose body does not decode: FAILFAST fails the query naming hub, partition "
        "and sequence number; PERMISSIVE keeps it with a null body and fills "
        "columnNameOfCorruptRecord; DROPMALFORMED drops it",
    ),
    "columnNameOfCorruptRecord": (
        "_corrupt_record",
        "PERMISSIVE only: column struct<body binary, error string>, null for good events",
    ),
    "badRecordsPath": (
        "unset",
        "folder (any fsspec URL) where events that do not decode are written as JSON lines "
        "(metadata, base64 body, error) and skipped; overrides mode",
    ),
    **_REGISTRY_OPTIONS,
}

BODY_SINK_OPTIONS: dict[str, tuple[str, str]] = {
    "bodyFormat": (
        "binary",
        "binary (body column is string or binary) or avro (body encoded as Avro)",
    ),
    "avroSchema": (
        "derived from the body column",
        "Avro schema (JSON) to encode with; unset: derived from the body column like to_avro",
    ),
    **_REGISTRY_OPTIONS,
    "schemaRegistry.autoRegisterSchemas": (
        "false",
        "register the schema in the group when it is not there yet (else the query fails)",
    ),
}

MODES = ("FAILFAST", "PERMISSIVE", "DROPMALFORMED")
_REGISTRY_AUTH = ("servicePrincipal", "managedIdentity", "defaultAzureCredential")


@dataclass(frozen=True)
class RegistryConfig:
    """One Azure Schema Registry and its Entra ID credential; secrets kept out of ``repr``."""

    namespace: str
    group: str | None
    auth: str
    tenant_id: str | None = None
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    authority_host: str | None = None
    connection_verify: str | None = None
    auto_register: bool = False

    def describe(self) -> str:
        return f"schema registry {self.namespace}" + (f" group {self.group}" if self.group else "")


@dataclass(frozen=True)
class BodyFormat:
    """What the body column holds and, for Avro, how bad events are handled."""

    avro: bool = False
    schema_json: str | None = None  # compact JSON of avroSchema
    mode: str = "FAILFAST"
    corrupt_column: str = "_corrupt_record"
    bad_records_path: str | None = None
    registry: RegistryConfig | None = None
    content_type: str | None = None  # the sink's avro/binary+<schema id>, set at query start

    @property
    def drops_bad(self) -> bool:
        return self.bad_records_path is not None or self.mode == "DROPMALFORMED"


BINARY = BodyFormat()


def _require(module: str, option: str, extra: str) -> None:
    if importlib.util.find_spec(module.split(".")[0]) is None or (
        "." in module and importlib.util.find_spec(module) is None
    ):
        raise OptionError.unsupported(
            "pyeventhub",
            option,
            f"needs {module}, not installed here: pip install 'pysparksources[{extra}]'",
        )


def _schema_text(options: Options, required: bool) -> str | None:
    text = options.raw("avroSchema")
    if text is None:
        if required:
            raise options.error(
                "avroSchema", "required with bodyFormat=avro: the Avro schema (JSON) of the bodies"
            )
        return None
    try:
        document, parsed = parse_avro_schema(text)
        spark_ddl(parsed)
    except AvroSchemaError as e:
        raise options.error("avroSchema", f"an Avro schema in JSON; {e}") from None
    return canonical_schema_text(document)


def _registry(options: Options, sink: bool) -> RegistryConfig | None:
    namespace = options.string("schemaRegistry.fullyQualifiedNamespace")
    if namespace is None:
        for name in _REGISTRY_OPTIONS:
            if options.has(name):
                raise options.error(name, "needs schemaRegistry.fullyQualifiedNamespace")
        return None
    host = namespace.strip().removeprefix("https://").rstrip("/")
    if not host or "/" in host or ";" in host:
        raise options.error(
            "schemaRegistry.fullyQualifiedNamespace",
            "expected a host name such as myns.servicebus.windows.net",
        )
    group = options.string("schemaRegistry.group")
    if sink and not (group or "").strip():
        raise options.error("schemaRegistry.group", "required to write with a schema registry")
    given = (options.raw("auth") or "").strip().lower()
    default = next((kind for kind in _REGISTRY_AUTH if kind.lower() == given), None)
    if default is None:
        default = "servicePrincipal" if options.has("clientSecret") else "defaultAzureCredential"
    auth = options.choice("schemaRegistry.auth", default, _REGISTRY_AUTH)
    if auth == "servicePrincipal":
        for name in ("tenantId", "clientId", "clientSecret"):
            if not options.has(name):
                raise options.error(name, "required for the schema registry with servicePrincipal")
    authority = options.string("schemaRegistry.authorityHost")
    if authority is not None and not authority.strip().startswith("https://"):
        authority = "https://" + authority.strip()
    return RegistryConfig(
        namespace=host,
        group=(group or "").strip() or None,
        auth=auth,
        tenant_id=options.string("tenantId"),
        client_id=options.string("clientId"),
        client_secret=options.string("clientSecret"),
        authority_host=authority,
        connection_verify=options.string("schemaRegistry.connectionVerify"),
        auto_register=sink and options.boolean("schemaRegistry.autoRegisterSchemas", False),
    )


def parse_body_format(options: Options, sink: bool) -> BodyFormat:
    """Validate the body options of a reader (``sink=False``) or writer; OptionError if bad."""
    avro = options.choice("bodyFormat", "binary", ("binary", "avro")) == "avro"
    table = BODY_SINK_OPTIONS if sink else BODY_SOURCE_OPTIONS
    if not avro:
        for name in table:
            if name != "bodyFormat" and options.has(name):
                raise options.error(name, "only with bodyFormat=avro")
        return BINARY
    _require("fastavro", "bodyFormat", "avro")
    schema = _schema_text(options, required=not sink)
    registry = _registry(options, sink)
    if registry is not None:
        _require("azure.schemaregistry", "schemaRegistry.fullyQualifiedNamespace", "schemaregistry")
    if sink:
        return BodyFormat(avro=True, schema_json=schema, registry=registry)
    mode = options.choice("mode", "FAILFAST", MODES)
    corrupt = options.string("columnNameOfCorruptRecord", "_corrupt_record") or ""
    if options.has("columnNameOfCorruptRecord") and mode != "PERMISSIVE":
        raise options.error("columnNameOfCorruptRecord", "only with mode=PERMISSIVE")
    if not corrupt.strip() or corrupt.lower() in {n.lower() for n in _COLUMNS}:
        raise options.error(
            "columnNameOfCorruptRecord", "a column name not used by the read schema"
        )
    bad_path = options.string("badRecordsPath")
    if bad_path is not None and not bad_path.strip():
        raise options.error("badRecordsPath", "a folder path or fsspec URL")
    return BodyFormat(
        avro=True,
        schema_json=schema,
        mode=mode,
        corrupt_column=corrupt.strip(),
        bad_records_path=bad_path.strip() if bad_path else None,
        registry=registry,
    )


_COLUMNS = [part.strip().split(" ", 1)[0] for part in READ_SCHEMA_DDL.split(", ")]


def read_schema_ddl(body: BodyFormat) -> str:
    """The read schema: the Event Hubs columns, ``body`` as the decoded Avro type."""
    if not body.avro:
        return READ_SCHEMA_DDL
    assert body.schema_json is not None
    body_type = spark_ddl(parse_avro_schema(body.schema_json)[1])
    ddl = READ_SCHEMA_DDL.replace("body binary", f"body {body_type}", 1)
    if body.mode == "PERMISSIVE" and body.bad_records_path is None:
        ddl += f", `{body.corrupt_column}` struct<body: binary, error: string>"
    return ddl


def body_format_from_raw(raw: Mapping[str, str]) -> BodyFormat:
    """The source's body options alone, for ``DataSource.schema()`` at ``load()``."""
    from pysparksources.eventhubs.options import NAME, SOURCE_OPTIONS

    names = {
        n.lower() for n in (*BODY_SOURCE_OPTIONS, "auth", "tenantId", "clientId", "clientSecret")
    }
    picked = {k: v for k, v in raw.items() if str(k).lower() in names}
    return parse_body_format(
        Options(NAME, picked, SOURCE_OPTIONS, secrets=("clientSecret",)), False
    )
