"""The emulator's key scenarios against Microsoft's emulator or a real Event Hubs namespace.

Set ``PYSPARKSOURCES_EVENTHUBS_CONNECTION_STRING`` (namespace-level, or with EntityPath) and
``PYSPARKSOURCES_EVENTHUBS_HUB`` (default ``eh1``; a hub with at least 2 partitions and the
consumer group ``$Default``). Without the connection string every test is skipped. The
unknown-consumer-group case also runs pysparksources' own check when pysparksources is
installed. Each test
sends a unique marker and reads from ``@latest``-style positions it recorded itself, so it
works on a hub that already holds data.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from typing import Any

import pytest

CONN = os.environ.get("PYSPARKSOURCES_EVENTHUBS_CONNECTION_STRING")
HUB = os.environ.get("PYSPARKSOURCES_EVENTHUBS_HUB", "eh1")

pytestmark = pytest.mark.skipif(
    not CONN, reason="set PYSPARKSOURCES_EVENTHUBS_CONNECTION_STRING to run against Event Hubs"
)

azure_eventhub = pytest.importorskip("azure.eventhub")
EventData = azure_eventhub.EventData


def _producer() -> Any:
    return azure_eventhub.EventHubProducerClient.from_connection_string(
        CONN, eventhub_name=HUB, retry_total=2
    )


def _receive(partition: str, start: Any, count: int, inclusive: bool = False) -> list[Any]:
    client = azure_eventhub.EventHubConsumerClient.from_connection_string(
        CONN, consumer_group="$Default", eventhub_name=HUB, retry_total=2
    )
    got: list[Any] = []
    done = threading.Event()

    def on_event(context: Any, event: Any) -> None:
        if event is not None:
            got.append(event)
            if len(got) >= count:
                done.set()

    thread = threading.Thread(
        target=client.receive,
        kwargs={
            "on_event": on_event,
            "partition_id": partition,
            "starting_position": start,
            "starting_position_inclusive": inclusive,
            "max_wait_time": 1,
        },
        daemon=True,
    )
    thread.start()
    done.wait(30)
    client.close()
    thread.join(30)
    return got[:count]


def test_properties_send_and_every_position() -> None:
    marker = uuid.uuid4().hex
    with _producer() as client:
        assert len(client.get_partition_ids()) >= 2
        before = client.get_partition_properties("0")
        batch = client.create_batch(partition_id="0")
        for i in range(4):
            event = EventData(f"{marker}-{i}")
            event.properties = {"i": i}
            batch.add(event)
        client.send_batch(batch)
        after = client.get_partition_properties("0")
    assert after["last_enqueued_sequence_number"] == before["last_enqueued_sequence_number"] + 4
    assert isinstance(after["last_enqueued_offset"], str)
    start = before["last_enqueued_sequence_number"]
    events = _receive("0", start, 4)
    assert [e.body_as_str() for e in events] == [f"{marker}-{i}" for i in range(4)]
    pivot = events[1]
    assert _receive("0", pivot.sequence_number, 2)[0].body_as_str() == f"{marker}-2"
    assert _receive("0", pivot.offset, 1, inclusive=True)[0].body_as_str() == f"{marker}-1"
    assert _receive("0", pivot.enqueued_time, 1, inclusive=True)[0].body_as_str().startswith(marker)


def test_partition_key_routing_is_stable() -> None:
    marker = uuid.uuid4().hex
    key = f"key-{marker}"
    with _producer() as client:
        for _ in range(2):
            client.send_batch([EventData(marker)], partition_key=key)
        ids = client.get_partition_ids()
    from pysparksources_emulator import partition_for_key

    expected = str(partition_for_key(key, len(ids)))
    with _producer() as client:
        props = client.get_partition_properties(expected)
    # The keyed events landed where the emulator's hash says (the last two of that partition).
    last = props["last_enqueued_sequence_number"]
    events = _receive(expected, last - 1, 2, inclusive=True)
    assert [e.body_as_str() for e in events] == [marker, marker]


def test_an_unknown_consumer_group_is_refused_and_pyeventhub_names_it() -> None:
    """The service refuses a receiver of a group the hub does not have with amqp:not-found,
    and pyeventhub's start-up check and its read tasks name the group (by condition: whatever
    the service's wording)."""
    assert CONN is not None
    group = f"no-such-group-{uuid.uuid4().hex[:8]}"
    client = azure_eventhub.EventHubConsumerClient.from_connection_string(
        CONN, consumer_group=group, eventhub_name=HUB, retry_total=0
    )
    errors: list[BaseException] = []
    reported = threading.Event()

    def on_error(_context: Any, error: BaseException) -> None:
        errors.append(error)
        reported.set()

    thread = threading.Thread(
        target=client.receive,
        kwargs={
            "on_event": lambda *_: None,
            "on_error": on_error,
            "partition_id": "0",
            "starting_position": "@latest",
            "max_wait_time": 1,
        },
        daemon=True,
    )
    thread.start()
    reported.wait(60)
    client.close()
    thread.join(30)
    assert errors, f"a receiver of consumer group {group!r} was not refused"
    assert getattr(errors[0], "error", None) == "not-found", repr(errors[0])  # amqp:not-found

    options = pytest.importorskip("pysparksources.eventhubs.options")
    from pysparksources._core.option_table import Use
    from pysparksources.errors import OptionError
    from pysparksources.eventhubs._metadata import HubMetadata
    from pysparksources.eventhubs._receivers import PositionedReceiver

    raw = {"connectionString": CONN, "consumerGroup": group, "operationTimeout": "60s"}
    if "entitypath=" not in CONN.lower():
        raw["eventHubName"] = HUB
    config = options.parse_options(raw, Use.STREAM_READ)
    named = f"consumer group '{group}' does not exist in hub '{config.connection.event_hub}'"
    metadata = HubMetadata(config)
    try:
        with pytest.raises(OptionError) as at_start:
            metadata.partitions()
    finally:
        metadata.close()
    assert named in str(at_start.value) and at_start.value.option == "consumerGroup"
    receiver = PositionedReceiver(config, "0", "@latest")  # what a read task opens
    try:
        with pytest.raises(OptionError) as in_task:
            receiver.first_event(timeout=60)
    finally:
        receiver.close()
    assert named in str(in_task.value)


def test_bad_key_is_an_authentication_error() -> None:
    assert CONN is not None
    parts = [
        "SharedAccessKey=AAAAwrongAAAA=" if p.startswith("SharedAccessKey=") else p
        for p in CONN.split(";")
    ]
    if "UseDevelopmentEmulator=true" in CONN:
        pytest.skip("Microsoft's emulator does not check keys")
    client = azure_eventhub.EventHubProducerClient.from_connection_string(
        ";".join(parts), eventhub_name=HUB, retry_total=0
    )
    started = time.monotonic()
    with client, pytest.raises(azure_eventhub.exceptions.AuthenticationError):
        client.get_eventhub_properties()
    assert time.monotonic() - started < 60
