"""checkpointStore.accountUrl with Entra ID: the query's service principal gets a Storage token
from the local authority (support/entra.py) and Azurite, over HTTPS with its OAuth check on,
accepts it; what the query wrote is read back by the official store with the account key."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from azure.eventhub.extensions.checkpointstoreblob import BlobCheckpointStore
from azure.storage.blob import BlobServiceClient

from support.azurite import Azurite, running_azurite
from support.entra import STORAGE_RESOURCE, EntraHub, TestAuthority, local_hub
from support.streams import run_available_now

pytestmark = [pytest.mark.spark, pytest.mark.emulator, pytest.mark.slow]


@pytest.fixture(scope="module")
def oauth_azurite(
    entra_authority: TestAuthority, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Azurite]:
    """Azurite over HTTPS (a certificate of the run's CA, which the clients trust) that takes
    bearer tokens besides keys."""
    folder = tmp_path_factory.mktemp("azurite-oauth")
    cert = entra_authority.ca.issue_cert("127.0.0.1", "localhost")
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert.cert_chain_pems[0].write_to_path(str(cert_file))
    cert.private_key_pem.write_to_path(str(key_file))
    with running_azurite(folder / "data", https=(cert_file, key_file), oauth=True) as server:
        yield server


@pytest.fixture
def entra_hub(entra_authority: TestAuthority, eventhubs_emulator_factory: Any) -> EntraHub:
    emulator = eventhubs_emulator_factory(jwt=entra_authority.emulator_authority())
    return local_hub(entra_authority, emulator)


def test_positions_reach_a_store_reached_with_the_querys_entra_id_credential(
    spark: Any,
    entra_hub: EntraHub,
    entra_authority: TestAuthority,
    oauth_azurite: Azurite,
    tmp_path: Path,
) -> None:
    storage_tokens = entra_authority.audiences[STORAGE_RESOURCE]
    container = f"ckpt-{uuid.uuid4().hex[:12]}"
    with BlobServiceClient.from_connection_string(oauth_azurite.connection_string) as service:
        service.create_container(container)
    entra_hub.send([f"e{i}" for i in range(7)], partition_id="0")
    entra_hub.send([f"e{i}" for i in range(3)], partition_id="1")
    options = entra_hub.options(
        startingPosition="start",
        **{
            "checkpointStore.container": container,
            "checkpointStore.accountUrl": oauth_azurite.blob_endpoint,
        },
    )
    stream = spark.readStream.format("pyeventhub")
    for name, value in options.items():
        stream = stream.option(name, value)
    run_available_now(stream.load(), tmp_path / "out", tmp_path / "ck")

    with BlobCheckpointStore.from_connection_string(
        oauth_azurite.connection_string, container
    ) as store:
        found = store.list_checkpoints(entra_hub.namespace, entra_hub.hub, "$Default")
    assert {c["partition_id"]: c["sequence_number"] for c in found} == {"0": 6, "1": 2}
    # Storage tokens came from the authority (no key was given to the query).
    assert entra_authority.audiences[STORAGE_RESOURCE] > storage_tokens
    # The secret reached neither the store's blobs nor the query's checkpoint.
    assert not [
        p
        for p in (tmp_path / "ck").rglob("*")
        if p.is_file() and entra_hub.client_secret.encode() in p.read_bytes()
    ]
