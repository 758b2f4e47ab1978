"""Partition keys, credentials, epochs, reader limits, runtime metrics and the async client."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

import pytest
from azure.eventhub import EventData, EventHubProducerClient
from azure.eventhub.aio import EventHubConsumerClient as AsyncConsumer
from azure.eventhub.aio import EventHubProducerClient as AsyncProducer
from azure.eventhub.exceptions import AuthenticationError

from pysparksources_emulator import EventHubsEmulator, HubConfig, partition_for_key
from pysparksources_emulator.pytest_plugin import EmulatorFactory
from pysparksources_emulator.testing import FAST, Collector, bodies, producer, receive, send

pytestmark = pytest.mark.emulator

KEYS = ["", "a", "key-1", "twelve_bytes", "thirteen_byte", "x" * 25, "ünïcödé", "日本語のキー"]


@pytest.mark.slow
def test_partition_keys_land_where_the_sdk_puts_them(
    eventhubs_emulator_factory: EmulatorFactory,
) -> None:
    emulator = eventhubs_emulator_factory({"keys": 5})
    conn = emulator.connection_string("keys")
    # The buffered producer computes the partition itself and sends to Partitions/N ...
    buffered = EventHubProducerClient.from_connection_string(
        conn, buffered_mode=True, on_success=lambda *_: None, on_error=lambda *_: None,
        max_wait_time=0.1, **FAST,
    )  # fmt: skip
    with buffered:
        for key in KEYS:
            buffered.send_event(EventData(f"sdk:{key}"), partition_key=key)
        buffered.flush()
    # ... while a plain keyed batch goes to the hub and the emulator must route it.
    with producer(conn) as client:
        for key in KEYS:
            client.send_batch([EventData(f"emu:{key}")], partition_key=key)
    with Collector(conn) as collector:
        collector.start(starting_position="-1")
        events = collector.wait_for(2 * len(KEYS), timeout=15)
        partition_of = {
            e.body_as_str(): int(p)
            for e, p in zip(collector.events, collector.partition_ids, strict=True)
        }
    assert len(events) == 2 * len(KEYS)
    for key in KEYS:
        expected = partition_for_key(key, 5)
        assert partition_of[f"sdk:{key}"] == expected, key
        assert partition_of[f"emu:{key}"] == expected, key


def test_wrong_key_is_an_authentication_error(
    eventhubs_emulator_factory: EmulatorFactory,
) -> None:
    emulator = eventhubs_emulator_factory(keys={"RootManageSharedAccessKey": "right"})
    good = emulator.connection_string("test")
    bad = emulator.connection_string("test", "RootManageSharedAccessKey", "wrong")
    started = time.monotonic()
    with producer(bad, retry_total=0) as client, pytest.raises(AuthenticationError):
        client.get_eventhub_properties()
    with producer(bad, retry_total=0) as client, pytest.raises(AuthenticationError):
        client.send_batch([EventData("x")], partition_id="0")
    unknown = emulator.connection_string("test", "NoSuchPolicy", "right")
    with producer(unknown, retry_total=0) as client, pytest.raises(AuthenticationError):
        client.get_partition_ids()
    assert time.monotonic() - started < 10
    send(good, ["ok"], partition_id="0")
    assert bodies(receive(good, "0", "-1", 1)) == ["ok"]


def test_async_clients_round_trip(eventhubs_emulator: EventHubsEmulator) -> None:
    conn = eventhubs_emulator.connection_string("test")

    async def scenario() -> list[str]:
        async with AsyncProducer.from_connection_string(conn, **FAST) as client:
            batch = await client.create_batch(partition_id="1")
            for i in range(5):
                batch.add(EventData(f"async{i}"))
            await client.send_batch(batch)
            props = await client.get_partition_properties("1")
            assert props["last_enqueued_sequence_number"] == 4
        got: list[str] = []
        done = asyncio.Event()
        consumer = AsyncConsumer.from_connection_string(conn, consumer_group="$Default", **FAST)

        async def on_event(context: object, event: EventData | None) -> None:
            if event is not None:
                got.append(event.body_as_str())
                if len(got) == 5:
                    done.set()

        async with consumer:
            task = asyncio.ensure_future(
                consumer.receive(on_event, partition_id="1", starting_position="-1")
            )
            await asyncio.wait_for(done.wait(), 15)
            await consumer.close()
            # receive() sleeps out its load-balancing interval (~30 s) after close: cancel it.
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        return got

    assert asyncio.run(scenario()) == [f"async{i}" for i in range(5)]


def test_runtime_metrics(eventhubs_emulator: EventHubsEmulator) -> None:
    conn = eventhubs_emulator.connection_string("test")
    send(conn, ["m0", "m1", "m2"], partition_id="0")
    seen: list[dict[str, object]] = []
    with Collector(conn) as collector:
        original = collector._on_event

        def on_event(context: object, event: object) -> None:
            if event is not None:
                seen.append(dict(context.last_enqueued_event_properties))  # type: ignore[attr-defined]
            original(context, event)

        collector._on_event = on_event  # type: ignore[method-assign]
        collector.start(
            partition_id="0", starting_position="-1", track_last_enqueued_event_properties=True
        )
        collector.wait_for(3)
    assert seen[-1]["sequence_number"] == 2
    assert isinstance(seen[-1]["offset"], str)
    assert seen[-1]["enqueued_time"] is not None
    assert seen[-1]["retrieval_time"] is not None


def test_higher_epoch_steals_and_lower_is_refused(eventhubs_emulator: EventHubsEmulator) -> None:
    conn = eventhubs_emulator.connection_string("test")
    send(conn, ["e0"], partition_id="0")
    first = Collector(conn, retry_total=0).start(
        partition_id="0", starting_position="-1", owner_level=1
    )
    second = Collector(conn, retry_total=0)
    lower = Collector(conn, retry_total=0)
    try:
        assert bodies(first.wait_for(1)) == ["e0"]
        second.start(partition_id="0", starting_position="-1", owner_level=2)
        assert bodies(second.wait_for(1)) == ["e0"]
        errors = first.wait_error()
        assert (errors and "stolen" in str(errors[0]).lower()) or "epoch" in str(errors[0])
        lower.start(partition_id="0", starting_position="-1", owner_level=1)
        refused = lower.wait_error()
        assert refused and "higher epoch" in str(refused[0])
        assert lower.events == []
    finally:
        for collector in (first, second, lower):
            collector.stop()


def test_at_most_five_non_epoch_readers(eventhubs_emulator: EventHubsEmulator) -> None:
    conn = eventhubs_emulator.connection_string("test")
    send(conn, ["r"], partition_id="1")
    readers = [Collector(conn, retry_total=0) for _ in range(6)]
    try:
        for reader in readers[:5]:
            reader.start(partition_id="1", starting_position="-1")
        for reader in readers[:5]:
            assert bodies(reader.wait_for(1)) == ["r"]
        readers[5].start(partition_id="1", starting_position="-1")
        errors = readers[5].wait_error()
        assert errors and "maximum number of allowed receivers" in str(errors[0])
    finally:
        threads = [threading.Thread(target=r.stop) for r in readers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()


def test_hub_config_api(eventhubs_emulator_factory: EmulatorFactory) -> None:
    emulator = eventhubs_emulator_factory([HubConfig("cfg", 3, ["analytics"])])
    conn = emulator.connection_string("cfg")
    with producer(conn) as client:
        assert client.get_partition_ids() == ["0", "1", "2"]
    send(conn, ["g"], partition_id="2")
    assert bodies(receive(conn, "2", "-1", 1, group="analytics")) == ["g"]
