"""Azure Schema Registry: the real azure-schemaregistry client (and the SDK's AvroEncoder)
against an HTTPS registry double with its own Entra ID token endpoint, on the emulator."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from azure.eventhub import EventData
from azure.schemaregistry.encoder.avroencoder import AvroEncoder

from pysparksources_emulator import EventHubsEmulator
from support.eventhubs import received, send
from support.pyeventhub import reader, run_to_parquet, stream_to_hub
from support.schema_registry import CLIENT_SECRET, SchemaRegistryDouble
from support.streams import rate
from support.variants import CLASSIC_ONLY

pytestmark = [pytest.mark.spark, pytest.mark.emulator]

V1 = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [{"name": "id", "type": "long"}, {"name": "customer", "type": "string"}],
}
# Version 2 adds a field with a default: events written with V1 read with V2 get the default.
V2 = {
    **V1,
    "fields": [*V1["fields"], {"name": "channel", "type": "string", "default": "web"}],
}


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[SchemaRegistryDouble]:
    with SchemaRegistryDouble(tmp_path) as double:
        yield double


@pytest.mark.slow
def test_events_the_sdks_encoder_wrote_decode_with_each_writers_schema(
    session: Any,
    eventhubs_emulator: EventHubsEmulator,
    registry: SchemaRegistryDouble,
    tmp_path: Path,
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    with AvroEncoder(client=registry.client(), group_name="orders", auto_register=True) as sdk:
        old = [sdk.encode({"id": i, "customer": f"c{i}"}, schema=json.dumps(V1)) for i in range(40)]
        new = [
            sdk.encode({"id": i, "customer": f"c{i}", "channel": "app"}, schema=json.dumps(V2))
            for i in range(40, 80)
        ]
    events = [EventData.from_message_content(m["content"], m["content_type"]) for m in old + new]
    stray = EventData(b"\x02\x04")  # no avro/binary+<id> content type
    send(conn, [*events[:60], stray], partition_id="0")
    send(conn, events[60:], partition_id="1")

    frame = reader(
        session,
        conn,
        startingPosition="start",
        bodyFormat="avro",
        avroSchema=json.dumps(V2),  # the reader's schema
        mode="PERMISSIVE",
        **registry.options(),
    )
    run_to_parquet(frame, tmp_path)
    rows = session.read.parquet(str(tmp_path / "q-out")).collect()
    decoded = sorted((r.body.id, r.body.customer, r.body.channel) for r in rows if r.body)
    assert decoded == [
        *[(i, f"c{i}", "web") for i in range(40)],
        *[(i, f"c{i}", "app") for i in range(40, 80)],
    ]
    (bad,) = [r for r in rows if r.body is None]
    assert "names no schema id" in bad._corrupt_record.error
    # Two schema ids, 80 events: each id fetched once per Python worker, not per event.
    assert registry.requests[("GET", "schema-by-id")] <= 2 * 4
    assert len(registry.schemas) == 2


@CLASSIC_ONLY
@pytest.mark.slow
def test_the_sink_registers_its_schema_and_the_sdks_encoder_decodes_its_events(
    session: Any,
    eventhubs_emulator: EventHubsEmulator,
    registry: SchemaRegistryDouble,
    tmp_path: Path,
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    rows = rate(session, 120, 60, capped=False).selectExpr(
        "struct(value AS id, concat('c', value) AS customer) AS body"
    )
    schema = json.dumps(V1)

    # Not registered and no autoRegisterSchemas: the query fails saying so, secret unsaid.
    with pytest.raises(Exception) as refused:  # at start(); classic and Connect differ in type
        stream_to_hub(
            rows, conn, tmp_path / "refused", bodyFormat="avro", avroSchema=schema,
            **registry.options(),
        )  # fmt: skip
    assert "has no schema shop.Order" in str(refused.value)
    assert "autoRegisterSchemas=true" in str(refused.value)
    assert CLIENT_SECRET not in str(refused.value)

    options = {**registry.options(), "schemaRegistry.autoRegisterSchemas": "true"}
    stream_to_hub(rows, conn, tmp_path / "ok", bodyFormat="avro", avroSchema=schema, **options)
    ((schema_id, (group, name, _, version)),) = registry.schemas.items()
    assert (group, name, version) == ("orders", "shop.Order", 1)

    with AvroEncoder(client=registry.client()) as sdk:
        events = [event for _, event in received(conn, 120)]
        assert {event.content_type for event in events} == {f"avro/binary+{schema_id}"}
        decoded = sorted((d["id"], d["customer"]) for d in map(sdk.decode, events))
    assert decoded == [(i, f"c{i}") for i in range(120)]

    # And our own source reads them back through the registry.
    frame = reader(
        session, conn, startingPosition="start", bodyFormat="avro", avroSchema=schema,
        **registry.options(),
    )  # fmt: skip
    run_to_parquet(frame.select("body.*"), tmp_path, "back")
    back = session.read.parquet(str(tmp_path / "back-out")).collect()
    assert sorted((r.id, r.customer) for r in back) == decoded
