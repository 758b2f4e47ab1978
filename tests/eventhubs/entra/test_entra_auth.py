"""Entra ID end to end: pyeventhub's ``auth=servicePrincipal`` and ``auth=managedIdentity`` get
tokens through azure-identity's own flows from a local HTTPS authority (support/entra.py), and
the emulator verifies them (signature, issuer, audience, expiry) before it serves a link.

With ``PYSPARKSOURCES_ENTRA_NAMESPACE`` and ``AZURE_TENANT_ID`` / ``AZURE_CLIENT_ID`` /
``AZURE_CLIENT_SECRET`` set, the service-principal tests run against that namespace instead
(support.entra.real_hub), without the assertions about the local authority's tokens.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.entra import TENANT, EntraHub, TestAuthority, local_hub, real_hub
from support.pyeventhub import read_back
from support.schema_registry import SchemaRegistryDouble
from support.streams import progress, rate, run_available_now
from support.variants import CLASSIC_ONLY, SESSIONS_CONNECT_SLOW, session_of

pytestmark = [pytest.mark.spark, pytest.mark.emulator]

ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [{"name": "id", "type": "long"}, {"name": "customer", "type": "string"}],
}


@pytest.fixture(params=SESSIONS_CONNECT_SLOW)
def session(request: pytest.FixtureRequest) -> Any:
    """Classic in the fast tier, Spark Connect in the slow one (CLASSIC_ONLY still applies)."""
    return session_of(request)


@pytest.fixture
def entra_hub(entra_authority: TestAuthority, eventhubs_emulator_factory: Any) -> EntraHub:
    """A hub reached with a service principal: a real one when the environment names it,
    else a fresh emulator verifying the local authority's tokens, and a new principal."""
    real = real_hub()
    if real is not None:
        return real
    emulator = eventhubs_emulator_factory(jwt=entra_authority.emulator_authority())
    return local_hub(entra_authority, emulator)


def local_only(hub: EntraHub) -> None:
    if not hub.local:
        pytest.skip("needs the local authority (its tokens are counted or shaped here)")


def _reader(session: Any, options: dict[str, str]) -> Any:
    stream = session.readStream.format("pyeventhub")
    for name, value in options.items():
        stream = stream.option(name, value)
    return stream.load()


def _files_hold(folder: Path, secret: str) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def test_service_principal_reads_and_writes(
    session: Any, entra_hub: EntraHub, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    marker = f"sp-{uuid.uuid4().hex[:8]}-"
    start = entra_hub.starting_position()
    entra_hub.send([f"{marker}{i}" for i in range(20)], partition_id="0")
    entra_hub.send([f"{marker}{i}" for i in range(20, 40)], partition_id="1")

    frame = _reader(session, entra_hub.options(startingPosition=start))
    run_available_now(frame, tmp_path / "q-out", tmp_path / "q-cp")
    bodies = sorted(r.body.decode() for r in read_back(session, tmp_path))
    assert [b for b in bodies if b.startswith(marker)] == sorted(f"{marker}{i}" for i in range(40))

    # The sink, with the same principal: every row arrives once.
    rows = rate(session, 30, 30, capped=False).selectExpr(f"concat('{marker}w', value) AS body")
    writer = rows.writeStream.format("pyeventhub")
    for name, value in entra_hub.options().items():
        writer = writer.option(name, value)
    query = writer.option("checkpointLocation", str(tmp_path / "w-cp"))
    query = query.trigger(availableNow=True).start()
    query.awaitTermination(300)
    assert query.exception() is None, query.exception()
    written = entra_hub.receive_marked(f"{marker}w", 30)
    assert sorted(written) == sorted(f"{marker}w{i}" for i in range(30))

    secret = entra_hub.client_secret
    assert not _files_hold(tmp_path, secret)
    assert secret not in "".join(capfd.readouterr())
    if entra_hub.local:
        assert entra_hub.authority is not None and entra_hub.emulator is not None
        counts = entra_hub.emulator.token_counts()
        assert counts["accepted"]["jwt"] >= 4 and not counts["refused"], counts
        assert entra_hub.authority.issued["client_credentials"] >= 1


@CLASSIC_ONLY
def test_managed_identity_reads(
    session: Any,
    entra_authority: TestAuthority,
    eventhubs_emulator_factory: Any,
    tmp_path: Path,
) -> None:
    # The workers find the identity endpoint through IDENTITY_ENDPOINT / IDENTITY_HEADER
    # (App Service's variables), set before the session started (support/entra.py).
    emulator = eventhubs_emulator_factory(jwt=entra_authority.emulator_authority())
    hub = local_hub(entra_authority, emulator)
    hub.send([f"mi-{i}" for i in range(10)], partition_id="0")
    before = entra_authority.issued["managed_identity"]
    options = {
        "fullyQualifiedNamespace": emulator.endpoint,
        "eventHubName": "test",
        "useDevelopmentEmulator": "true",
        "auth": "managedIdentity",
        "clientId": str(uuid.uuid4()),  # a user-assigned identity: a credential of its own
        "startingPosition": "start",
    }
    run_available_now(_reader(session, options), tmp_path / "q-out", tmp_path / "q-cp")
    assert sorted(r.body.decode() for r in read_back(session, tmp_path)) == sorted(
        f"mi-{i}" for i in range(10)
    )
    assert entra_authority.issued["managed_identity"] > before
    assert emulator.token_counts()["accepted"]["jwt"] >= 2


BAD = {
    # what is wrong -> (the options that make it so, words the error must hold)
    "secret": (
        {"clientSecret": "entra-secret-WRONG-do-not-log"},
        ("clientSecret", "AADSTS7000215"),
    ),
    "tenant": ({"tenantId": "11111111-2222-3333-4444-555555555555"}, ("tenantId", "11111111-")),
    # The SDK keeps only the status of a refused put-token, not its description.
    "audience": ({}, ("refused the token of auth=servicePrincipal", "401", "data role")),
}


@pytest.mark.parametrize("wrong", sorted(BAD))
def test_a_wrong_credential_fails_at_start_naming_it_and_no_secret(
    session: Any,
    wrong: str,
    entra_authority: TestAuthority,
    eventhubs_emulator_factory: Any,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    if wrong != "secret" and session.__class__.__module__.startswith("pyspark.sql.connect"):
        pytest.skip("one case shows how the error reaches a Connect client")
    emulator = eventhubs_emulator_factory(jwt=entra_authority.emulator_authority())
    hub = local_hub(entra_authority, emulator)
    if wrong == "audience":  # an app whose tokens are for another resource
        hub.client_id, hub.client_secret = entra_authority.add_client(
            audience="https://storage.azure.com/"
        )
    changes, words = BAD[wrong]
    options = hub.options(startingPosition="start", **changes)
    started = time.monotonic()
    with pytest.raises(Exception) as failed:
        run_available_now(_reader(session, options), tmp_path / "q-out", tmp_path / "q-cp")
    elapsed = time.monotonic() - started
    message = str(failed.value)
    for word in words:
        assert word in message, message
    for secret in (hub.client_secret, options["clientSecret"]):
        assert secret not in message
        assert not _files_hold(tmp_path, secret)
        assert secret not in "".join(capfd.readouterr())
    assert elapsed < 60, elapsed


@CLASSIC_ONLY
def test_the_sink_and_the_source_use_the_schema_registry_with_the_principal(
    session: Any, entra_hub: EntraHub, tmp_path: Path
) -> None:
    local_only(entra_hub)
    assert entra_hub.authority is not None
    with SchemaRegistryDouble(tmp_path, authority=entra_hub.authority) as registry:
        registry_options = {
            "schemaRegistry.fullyQualifiedNamespace": registry.host,
            "schemaRegistry.group": "orders",
            "schemaRegistry.autoRegisterSchemas": "true",
        }
        rows = rate(session, 50, 50, capped=False).selectExpr(
            "struct(value AS id, concat('c', value) AS customer) AS body"
        )
        writer = rows.writeStream.format("pyeventhub")
        options = entra_hub.options(bodyFormat="avro", avroSchema=json.dumps(ORDER))
        for name, value in {**options, **registry_options}.items():
            writer = writer.option(name, value)
        query = writer.option("checkpointLocation", str(tmp_path / "w-cp"))
        query = query.trigger(availableNow=True).start()
        query.awaitTermination(300)
        assert query.exception() is None, query.exception()

        registry_options.pop("schemaRegistry.autoRegisterSchemas")
        read_options = entra_hub.options(
            startingPosition="start", bodyFormat="avro", avroSchema=json.dumps(ORDER)
        )
        frame = _reader(session, {**read_options, **registry_options}).select("body.*")
        run_available_now(frame, tmp_path / "r-out", tmp_path / "r-cp")
        back = session.read.parquet(str(tmp_path / "r-out")).collect()
        assert sorted((r.id, r.customer) for r in back) == [(i, f"c{i}") for i in range(50)]
        # Every registry call carried a bearer token the registry verified as the authority's.
        assert registry.verified_tokens >= 2 and not registry.rejected_tokens


@CLASSIC_ONLY
@pytest.mark.slow
def test_a_stream_outlives_its_tokens_and_reads_every_event_once(
    session: Any,
    entra_hub: EntraHub,
    entra_authority: TestAuthority,
    tmp_path: Path,
) -> None:
    local_only(entra_hub)
    assert entra_hub.emulator is not None
    entra_authority.lifetime_s = 60  # the SDK renews 6 s before each expiry
    try:
        issued_before = entra_authority.issued["client_credentials"]
        stop = threading.Event()
        sent: list[str] = []

        def produce() -> None:
            with entra_hub.producer() as client:
                i = 0
                while not stop.is_set():
                    batch = client.create_batch(partition_id=str(i % 2))
                    bodies = [f"e{i}-{j}" for j in range(20)]
                    for body in bodies:
                        from azure.eventhub import EventData

                        batch.add(EventData(body))
                    client.send_batch(batch)
                    sent.extend(bodies)
                    i += 1
                    stop.wait(1.0)

        frame = _reader(session, entra_hub.options(startingPosition="start"))
        query = (
            frame.writeStream.format("parquet")
            .option("path", str(tmp_path / "q-out"))
            .option("checkpointLocation", str(tmp_path / "q-cp"))
            .trigger(processingTime="2 seconds")
            .start()
        )
        producer = threading.Thread(target=produce, daemon=True)
        producer.start()
        started = time.monotonic()
        try:
            while time.monotonic() - started < 170:
                assert query.exception() is None, query.exception()
                time.sleep(2)
            stop.set()
            producer.join(30)
            deadline = time.monotonic() + 60
            while sum(p["numInputRows"] for p in progress(query)) < len(sent):
                assert query.exception() is None, query.exception()
                assert time.monotonic() < deadline, "the stream fell behind"
                time.sleep(1)
            query.processAllAvailable()
        finally:
            query.stop()
        duration = time.monotonic() - started
        rows = [r.body.decode() for r in session.read.parquet(str(tmp_path / "q-out")).collect()]
        assert len(rows) == len(sent) and sorted(rows) == sorted(sent)
        issued = entra_authority.issued["client_credentials"] - issued_before
        counts = entra_hub.emulator.token_counts()
        print(
            f"\nentra refresh: {len(sent)} events in {duration:.0f}s, {issued} tokens issued, "
            f"put-tokens {counts}"
        )
        assert issued >= 3, issued  # tokens of 60 s, renewed over ~3 minutes
        assert counts["accepted"].get("renewed", 0) >= 2, counts
        assert not counts["refused"], counts
    finally:
        entra_authority.lifetime_s = 3600


def test_options_name_a_bad_authority_and_emulator_flag(tmp_path: Path) -> None:
    from pysparksources._core.option_table import Use
    from pysparksources.errors import OptionError
    from pysparksources.eventhubs.options import parse_options

    base = {"fullyQualifiedNamespace": "ns.servicebus.windows.net", "eventHubName": "h"}
    sp = {**base, "tenantId": TENANT, "clientId": "c", "clientSecret": "s"}
    config = parse_options({**sp, "authorityHost": "login.microsoftonline.us"}, Use.STREAM_READ)
    assert config.connection.authority_host == "https://login.microsoftonline.us"
    with pytest.raises(OptionError, match=r"authorityHost.*https://"):
        parse_options({**sp, "authorityHost": "http://x"}, Use.STREAM_READ)
    with pytest.raises(OptionError, match=r"authorityHost.*managedIdentity"):
        parse_options(
            {**base, "auth": "managedIdentity", "authorityHost": "https://x"}, Use.STREAM_READ
        )
    conn = "Endpoint=sb://127.0.0.1:1;SharedAccessKeyName=a;SharedAccessKey=b;EntityPath=h"
    with pytest.raises(OptionError, match="useDevelopmentEmulator"):
        parse_options({"connectionString": conn, "useDevelopmentEmulator": "true"}, Use.READ)


@pytest.fixture(autouse=True)
def _no_leftover_lifetime(entra_authority: TestAuthority) -> Iterator[None]:
    yield
    entra_authority.lifetime_s = 3600
