"""The body options of the parser: raw bytes, or Avro (with or without Schema Registry).

Part of the option parser (driver only; ``options.parse_options`` calls it): standard library
and the option toolkit only, so the data source's ``schema()`` validates these options at
``load()`` and builds the read schema from ``avroSchema`` without fastavro or the Azure SDK.
The result, a :class:`~pysparksources.eventhubs.config.BodyFormat`, travels in the reader's
and writer's configs, so executors decode and encode with what the driver validated.
"""

from __future__ import annotations

import importlib.util

from pysparksources._core.avro_schema import (
    AvroNode,
    UnionNames,
    canonical_schema_text,
    parse_schema,
    spark_ddl,
    spark_type,
    walk,
)
from pysparksources._core.install_hint import pip_install
from pysparksources._core.options import Options
from pysparksources.errors import OptionError, SchemaError
from pysparksources.eventhubs import NAME
from pysparksources.eventhubs._option_table import (
    AUTH,
    AUTHORITY_HOST,
    AVRO_ONLY_READ,
    AVRO_ONLY_WRITE,
    BAD_RECORDS_PATH,
    CLIENT_ID,
    CLIENT_SECRET,
    COLUMN_NAME_OF_CORRUPT_RECORD,
    MODE,
    READ_AVRO_SCHEMA,
    READ_BODY_FORMAT,
    REGISTRY_AUTH,
    REGISTRY_AUTH_KINDS,
    REGISTRY_AUTHORITY_HOST,
    REGISTRY_AUTO_REGISTER,
    REGISTRY_GROUP,
    REGISTRY_NAMESPACE,
    REGISTRY_OPTIONS,
    TENANT_ID,
    WRITE_AVRO_SCHEMA,
    WRITE_BODY_FORMAT,
)
from pysparksources.eventhubs._schema import READ_SCHEMA_DDL
from pysparksources.eventhubs.config import BodyFormat, RegistryConfig

__all__ = ["parse_body_format", "read_schema_ddl"]

_COLUMNS = [part.strip().split(" ", 1)[0] for part in READ_SCHEMA_DDL.split(", ")]


def _require(module: str, option: str, extra: str) -> None:
    if importlib.util.find_spec(module.split(".")[0]) is None or (
        "." in module and importlib.util.find_spec(module) is None
    ):
        raise OptionError.unsupported(
            NAME,
            option,
            f"needs {module}, not installed here: {pip_install(extra=extra)}",
        )


def _schema_text(opts: Options, sink: bool) -> str | None:
    option = WRITE_AVRO_SCHEMA if sink else READ_AVRO_SCHEMA
    text = opts.get(option)
    if text is None:
        if not sink:
            raise opts.required(
                option, "bodyFormat=avro needs the Avro schema (JSON) of the bodies"
            )
        return None
    try:
        document, parsed = parse_schema(text, NAME)
        _body_type_ddl(parsed)
    except SchemaError as error:
        raise opts.error(option, f"an Avro schema in JSON; {error.detail}") from None
    return canonical_schema_text(document)


def _body_type_ddl(parsed: AvroNode) -> str:
    """The body column's type (DDL); SchemaError for a record without fields, which the
    body column cannot hold."""
    for node in walk(parsed):
        if node.kind == "record" and not node.fields:
            raise SchemaError(NAME, f"record {node.name} has no fields; Spark has no empty struct")
    return spark_ddl(spark_type(parsed, UnionNames(NAME)))


def _registry(opts: Options, sink: bool) -> RegistryConfig | None:
    namespace = opts.get(REGISTRY_NAMESPACE)
    if namespace is None:
        for option in REGISTRY_OPTIONS:
            if opts.has(option):
                raise opts.error(option, f"needs {REGISTRY_NAMESPACE.name}")
        return None
    host = namespace.strip().removeprefix("https://").rstrip("/")
    if not host or "/" in host or ";" in host:
        raise opts.error(
            REGISTRY_NAMESPACE, "expected a host name such as myns.servicebus.windows.net"
        )
    group = (opts.get(REGISTRY_GROUP) or "").strip() or None
    if sink and group is None:
        raise opts.required(REGISTRY_GROUP, "the schema group to write to with a schema registry")
    auth = opts.get(REGISTRY_AUTH)
    if auth is None:  # the hub's auth when the registry takes it, else from the credentials
        given = (opts.raw(AUTH) or "").strip().lower()
        auth = next((kind for kind in REGISTRY_AUTH_KINDS if kind.lower() == given), None)
    if auth is None:
        auth = "servicePrincipal" if opts.has(CLIENT_SECRET) else "defaultAzureCredential"
    if auth == "servicePrincipal":
        for option in (TENANT_ID, CLIENT_ID, CLIENT_SECRET):
            if not opts.has(option):
                raise opts.required(
                    option, "the schema registry's servicePrincipal credential needs it"
                )
    authority = opts.get(REGISTRY_AUTHORITY_HOST) or opts.get(AUTHORITY_HOST)
    if authority is not None and not authority.strip().startswith("https://"):
        authority = "https://" + authority.strip()
    return opts.fill(
        RegistryConfig,
        namespace=host,
        group=group,
        auth=auth,
        tenant_id=opts.get(TENANT_ID),
        client_id=opts.get(CLIENT_ID),
        client_secret=opts.get(CLIENT_SECRET),
        authority_host=authority,
        auto_register=sink and opts.value(REGISTRY_AUTO_REGISTER),
    )


def parse_body_format(opts: Options, sink: bool) -> BodyFormat:
    """The body options of a reader (``sink=False``) or writer; OptionError if one is bad."""
    avro = opts.value(WRITE_BODY_FORMAT if sink else READ_BODY_FORMAT) == "avro"
    if not avro:
        for option in AVRO_ONLY_WRITE if sink else AVRO_ONLY_READ:
            if opts.has(option):
                raise opts.error(option, "only with bodyFormat=avro")
        return opts.fill(
            BodyFormat,
            avro=False,
            schema_json=None,
            corrupt_column=opts.value(COLUMN_NAME_OF_CORRUPT_RECORD),
            bad_records_path=None,
            registry=None,
            content_type=None,
        )
    _require("fastavro", READ_BODY_FORMAT.name, "avro")
    schema = _schema_text(opts, sink)
    registry = _registry(opts, sink)
    if registry is not None:
        _require("azure.schemaregistry", REGISTRY_NAMESPACE.name, "schemaregistry")
    mode = opts.value(MODE)  # a writer's: the default, never given
    corrupt = opts.value(COLUMN_NAME_OF_CORRUPT_RECORD)
    if opts.has(COLUMN_NAME_OF_CORRUPT_RECORD) and mode != "PERMISSIVE":
        raise opts.error(COLUMN_NAME_OF_CORRUPT_RECORD, "only with mode=PERMISSIVE")
    if not corrupt.strip() or corrupt.lower() in {n.lower() for n in _COLUMNS}:
        raise opts.error(COLUMN_NAME_OF_CORRUPT_RECORD, "a column name not used by the read schema")
    bad_path = opts.get(BAD_RECORDS_PATH)
    if bad_path is not None and not bad_path.strip():
        raise opts.error(BAD_RECORDS_PATH, "a folder path or fsspec URL")
    return opts.fill(
        BodyFormat,
        avro=True,
        schema_json=schema,
        corrupt_column=corrupt.strip(),
        bad_records_path=bad_path.strip() if bad_path else None,
        registry=registry,
        content_type=None,  # the sink's, set when its writer is built
    )


def read_schema_ddl(body: BodyFormat) -> str:
    """The read schema: the Event Hubs columns, ``body`` as the decoded Avro type."""
    if not body.avro:
        return READ_SCHEMA_DDL
    assert body.schema_json is not None
    body_type = _body_type_ddl(parse_schema(body.schema_json, NAME)[1])
    ddl = READ_SCHEMA_DDL.replace("body binary", f"body {body_type}", 1)
    if body.mode == "PERMISSIVE" and body.bad_records_path is None:
        ddl += f", `{body.corrupt_column}` struct<body: binary, error: string>"
    return ddl
