"""Fast pure-Python checks of the checkpoint-store options: every mistake fails at load(),
names the option and quotes no secret."""

from __future__ import annotations

import pytest

from pysparksources._core.option_table import Use
from pysparksources.errors import OptionError
from pysparksources.eventhubs._positions import CHECKPOINT_STORE, parse_position
from pysparksources.eventhubs.config import SourceConfig
from pysparksources.eventhubs.options import parse_options

HUB = "Endpoint=sb://127.0.0.1:5672;SharedAccessKeyName=k;SharedAccessKey=HUBKEY42;EntityPath=h"
STORE = "DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=STOREKEY42;"
AZURITE = "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=STOREKEY42;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;"
ENTRA = {
    "fullyQualifiedNamespace": "ns.servicebus.windows.net",
    "eventHubName": "h",
    "auth": "servicePrincipal",
    "tenantId": "t",
    "clientId": "c",
    "clientSecret": "ENTRASECRET42",
}


def parse(
    use: Use = Use.STREAM_READ, hub: dict[str, str] | None = None, **options: str
) -> SourceConfig:
    connection = hub if hub is not None else {"connectionString": HUB}
    return parse_options({**connection, **options}, use)


def refused(**options: str) -> str:
    with pytest.raises(OptionError) as caught:
        parse(**options)
    message = str(caught.value)
    for secret in ("HUBKEY42", "STOREKEY42", "ENTRASECRET42"):
        assert secret not in message
    return message


def test_checkpoint_store_is_a_starting_position_word() -> None:
    assert parse_position("checkpointStore") == CHECKPOINT_STORE
    assert parse_position(" CHECKPOINTSTORE ") == CHECKPOINT_STORE


def test_a_store_by_connection_string_writes_by_default() -> None:
    store = parse(
        **{"checkpointStore.container": "ckpt", "checkpointStore.connectionString": STORE}
    ).checkpoint_store
    assert store is not None and store.update and store.container == "ckpt"
    assert store.describe() == "checkpoint store container 'ckpt' of storage account acct"
    assert "STOREKEY42" not in repr(store)
    azurite = parse(
        **{"checkpointStore.container": "ckpt", "checkpointStore.connectionString": AZURITE}
    )
    assert azurite.checkpoint_store is not None
    assert azurite.checkpoint_store.account == "127.0.0.1:10000/devstoreaccount1"


def test_update_false_only_reads_and_batch_reads_never_write() -> None:
    options = {"checkpointStore.container": "ckpt", "checkpointStore.connectionString": STORE}
    store = parse(**options, **{"checkpointStore.update": "false"}).checkpoint_store
    assert store is not None and not store.update
    batch = parse(Use.BATCH_READ, **options, startingPosition="checkpointStore").checkpoint_store
    assert batch is not None and not batch.update


def test_an_account_url_uses_the_querys_entra_credential() -> None:
    store = parse(
        hub=ENTRA,
        **{
            "checkpointStore.container": "ckpt",
            "checkpointStore.accountUrl": "https://acct.blob.core.windows.net/",
        },
    ).checkpoint_store
    assert store is not None and store.account == "acct.blob.core.windows.net"
    message = refused(
        **{
            "checkpointStore.container": "ckpt",
            "checkpointStore.accountUrl": "https://acct.blob.core.windows.net",
        }
    )
    assert "'checkpointStore.accountUrl'" in message and "auth is connectionString" in message


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"startingPosition": "checkpointStore"}, "'checkpointStore.container' is required"),
        (
            {"startingPositions": '{"0": "checkpointStore"}'},
            "'checkpointStore.container' is required",
        ),
        ({"checkpointStore.connectionString": STORE}, "'checkpointStore.container' is required"),
        ({"checkpointStore.update": "false"}, "'checkpointStore.container' is required"),
        ({"checkpointStore.container": "ckpt"}, "exactly one of checkpointStore.connectionString"),
        (
            {"checkpointStore.container": "Ckpt_1", "checkpointStore.connectionString": STORE},
            "'checkpointStore.container': a Blob container name",
        ),
        (
            {
                "checkpointStore.container": "ckpt",
                "checkpointStore.connectionString": "AccountKey=STOREKEY42",
            },
            "value <not shown> for option 'checkpointStore.connectionString'",
        ),
        (
            {
                "checkpointStore.container": "ckpt",
                "checkpointStore.connectionString": STORE,
                "checkpointStore.accountUrl": "https://acct.blob.core.windows.net",
            },
            "exactly one of",
        ),
    ],
)
def test_store_mistakes_fail_at_load_naming_the_option(
    options: dict[str, str], expected: str
) -> None:
    assert expected in refused(**options)


def test_checkpoint_store_is_no_ending_position() -> None:
    with pytest.raises(OptionError, match="checkpointStore is only a starting position"):
        parse(Use.BATCH_READ, endingPosition="checkpointStore")
    with pytest.raises(OptionError, match="'endingPositions'"):
        parse(Use.BATCH_READ, endingPositions='{"0": "checkpointStore"}')
