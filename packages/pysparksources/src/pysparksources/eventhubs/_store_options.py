"""The checkpoint-store options of the parser: which Blob container, how to reach it.

Part of the option parser (driver only; ``options.parse_options`` calls it): standard library
and the option toolkit only. Everything that can be checked without the service is checked
here, at ``load()``/``start()``; the container itself is checked when the query starts
(``_checkpoint_store.CheckpointStore.check``).
"""

from __future__ import annotations

import importlib.util
import re
from urllib.parse import urlparse

from pysparksources._core.install_hint import pip_install
from pysparksources._core.option_table import Use
from pysparksources._core.options import Options
from pysparksources.errors import OptionError
from pysparksources.eventhubs import NAME
from pysparksources.eventhubs._option_table import (
    ENDING_POSITION,
    ENDING_POSITIONS,
    STARTING_POSITION,
    STARTING_POSITIONS,
    STORE_ACCOUNT_URL,
    STORE_CONNECTION_STRING,
    STORE_CONTAINER,
    STORE_UPDATE,
)
from pysparksources.eventhubs._positions import Position
from pysparksources.eventhubs.config import CheckpointStoreConfig, EventHubConnection

__all__ = ["parse_checkpoint_store"]

# Azure's container names: 3-63 lower-case letters, digits and single hyphens, starting and
# ending with a letter or digit.
_CONTAINER = re.compile(r"^(?!.*--)[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$")
_ENTRA_AUTHS = ("servicePrincipal", "managedIdentity", "defaultAzureCredential")
_PACKAGES = ("azure.eventhub.extensions.checkpointstoreblob", "azure.storage.blob")


def parse_checkpoint_store(
    opts: Options, connection: EventHubConnection
) -> CheckpointStoreConfig | None:
    """The store the options name, or None; OptionError naming the first bad option."""
    _check_positions(opts)
    container = opts.get(STORE_CONTAINER)
    if container is None:
        for option in (STORE_CONNECTION_STRING, STORE_ACCOUNT_URL, STORE_UPDATE):
            if opts.has(option):
                raise opts.required(STORE_CONTAINER, f"the container that {option.name} is for")
        if _names_store(opts):
            raise opts.required(
                STORE_CONTAINER, "the checkpoint store that startingPosition=checkpointStore reads"
            )
        return None
    container = container.strip()
    if not _CONTAINER.match(container):
        raise opts.error(
            STORE_CONTAINER,
            "a Blob container name: 3 to 63 lower-case letters, digits and single hyphens, "
            "starting and ending with a letter or digit",
        )
    connection_string = opts.get(STORE_CONNECTION_STRING)
    account_url = opts.get(STORE_ACCOUNT_URL)
    if (connection_string is None) == (account_url is None):
        raise opts.required(
            STORE_CONNECTION_STRING,
            "give exactly one of checkpointStore.connectionString and "
            "checkpointStore.accountUrl to reach the checkpoint store",
        )
    if connection_string is not None:
        account = _account_of_connection_string(opts, connection_string)
    else:
        account = _account_of_url(opts, account_url or "", connection)
    missing = [name for name in _PACKAGES if not _installed(name)]
    if missing:
        raise OptionError.unsupported(
            NAME,
            STORE_CONTAINER.name,
            f"needs {' and '.join(missing)}, not installed here: "
            + pip_install(extra="checkpointstore"),
        )
    update = opts.value(STORE_UPDATE) and opts.use != Use.BATCH_READ  # batch reads write nothing
    return opts.fill(CheckpointStoreConfig, container=container, update=update, account=account)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def _names_store(opts: Options) -> bool:
    starting: Position | None = opts.get(STARTING_POSITION)
    per_partition: dict[str, Position] = opts.get(STARTING_POSITIONS) or {}
    kinds = {p.kind for p in per_partition.values()} | {starting.kind if starting else ""}
    return "checkpointStore" in kinds


def _check_positions(opts: Options) -> None:
    """checkpointStore is where a query starts, never where it ends."""
    ending: Position | None = opts.get(ENDING_POSITION)
    per_partition: dict[str, Position] = opts.get(ENDING_POSITIONS) or {}
    for option, kinds in (
        (ENDING_POSITION, {ending.kind if ending else ""}),
        (ENDING_POSITIONS, {p.kind for p in per_partition.values()}),
    ):
        if "checkpointStore" in kinds:
            raise opts.error(
                option, "a position to end at; checkpointStore is only a starting position"
            )


def _account_of_connection_string(opts: Options, text: str) -> str:
    """The account's name (or blob endpoint host) for messages; the string itself is secret."""
    fields = {}
    for part in text.split(";"):
        key, sep, value = part.partition("=")
        if sep:
            fields[key.strip().lower()] = value.strip()
    if fields.get("usedevelopmentstorage", "").lower() == "true":
        return "devstoreaccount1 (Azurite)"
    endpoint = fields.get("blobendpoint")
    if endpoint:
        parsed = urlparse(endpoint)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise opts.error(STORE_CONNECTION_STRING, "BlobEndpoint must be an http(s) URL")
        return f"{parsed.netloc}{parsed.path.rstrip('/')}"
    name = fields.get("accountname")
    if not name or not (fields.get("accountkey") or fields.get("sharedaccesssignature")):
        raise opts.error(
            STORE_CONNECTION_STRING,
            "a storage connection string with AccountName and AccountKey (or "
            "SharedAccessSignature), as the portal's Access keys page shows it",
        )
    return name


def _account_of_url(opts: Options, url: str, connection: EventHubConnection) -> str:
    parsed = urlparse(url.strip())
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise opts.error(
            STORE_ACCOUNT_URL,
            "the account's blob endpoint, https://<account>.blob.core.windows.net",
        )
    if parsed.query:
        raise opts.error(
            STORE_ACCOUNT_URL,
            "a URL without a query (a SAS token goes into checkpointStore.connectionString "
            "as SharedAccessSignature)",
        )
    if connection.auth not in _ENTRA_AUTHS:
        raise OptionError(
            NAME,
            STORE_ACCOUNT_URL.name,
            f"option '{STORE_ACCOUNT_URL.name}' reaches the store with the query's Entra ID "
            f"credential, but auth is {connection.auth}: use auth=servicePrincipal, "
            "managedIdentity or defaultAzureCredential, or give "
            "checkpointStore.connectionString instead",
        )
    return f"{parsed.netloc}{parsed.path.rstrip('/')}"
