"""Prompt handshakes (``_handshake``): the SDK's management calls and producer links without its
50 ms naps, on every client pyeventhub builds, and the same answers as before."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import pytest
from azure.eventhub import EventData, EventHubConsumerClient

from pysparksources._core.option_table import Use
from pysparksources.eventhubs._handshake import is_prompt, prompt
from pysparksources.eventhubs.options import parse_options
from pysparksources_emulator import EventHubsEmulator

SDK_NAP_S = 0.05  # azure-eventhub's pause between two readiness polls


def _count_sdk_naps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Every ``time.sleep(0.05)`` that azure-eventhub's own modules make from now on."""
    naps: list[float] = []
    real: Callable[[float], None] = time.sleep

    def sleep(seconds: float) -> None:
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller.startswith("azure.eventhub") and seconds == SDK_NAP_S:
            naps.append(seconds)
        real(seconds)

    monkeypatch.setattr(time, "sleep", sleep)
    return naps


def test_every_client_pyeventhub_builds_takes_the_hook() -> None:
    # Fails when an azure-eventhub release moves the transport hook: handshakes would then
    # keep the SDK's pace (correct, ~0.4 s slower per management call); see _handshake.
    text = "Endpoint=sb://127.0.0.1:5999;SharedAccessKeyName=a;SharedAccessKey=b;UseDevelopmentEmulator=true"
    options = {"connectionString": text, "eventHubName": "h"}
    conn = parse_options(options, Use.STREAM_READ).connection
    clients = [
        conn.consumer_client("$Default"),
        conn.consumer_client("$Default", partition_ids=("0",), first_contact=True),
        conn.producer_client(),
    ]
    try:
        assert all(is_prompt(client) for client in clients)
    finally:
        for client in clients:
            client.close()


def test_an_object_without_the_hook_is_left_as_it_is() -> None:
    thing = object()
    assert prompt(thing) is thing and not is_prompt(thing)


def test_management_calls_and_sends_answer_as_before_without_the_sdks_naps(
    eventhubs_emulator: EventHubsEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = eventhubs_emulator.connection_string("test")
    conn = parse_options({"connectionString": text}, Use.STREAM_READ).connection
    naps = _count_sdk_naps(monkeypatch)
    plain = EventHubConsumerClient.from_connection_string(text, consumer_group="$Default")
    try:
        expected = plain.get_partition_properties("0")
        expected_ids = plain.get_partition_ids()
    finally:
        plain.close()
    assert naps, "the check no longer sees the SDK's naps: it would prove nothing"
    naps.clear()

    consumer = conn.consumer_client("$Default")
    producer = conn.producer_client()
    try:
        assert consumer.get_partition_ids() == expected_ids
        before: dict[str, Any] = consumer.get_partition_properties("0")
        assert before == expected
        batch = producer.create_batch(partition_id="0")
        batch.add(EventData(b"one"))
        producer.send_batch(batch)
        after = consumer.get_partition_properties("0")
    finally:
        consumer.close()
        producer.close()
    assert after["last_enqueued_sequence_number"] == before["last_enqueued_sequence_number"] + 1
    assert naps == []
