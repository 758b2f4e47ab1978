"""The real azure-eventhub SDK as the tests' own client: the emulator distribution's helpers
(``pysparksources_emulator.testing``) with one producer kept per connection string."""

from __future__ import annotations

from typing import Any

from azure.eventhub import EventHubProducerClient

from pysparksources_emulator.testing import (
    FAST,
    Collector,
    bodies,
    producer,
    receive,
    received,
    send_batch,
)

__all__ = [
    "FAST",
    "Collector",
    "bodies",
    "close_producers",
    "producer",
    "receive",
    "received",
    "send",
]

# Opening a producer costs ~0.8 s of AMQP handshakes (each frame read behind the SDK's own
# 50 ms polling) and its first send on a partition another ~0.5 s, so a test that seeds a hub
# with several batches keeps one producer per connection string; tests/conftest.py closes the
# kept producers after each test. (The emulator's own tests, where a new client's handshake is
# under test, send with ``pysparksources_emulator.testing.send``: a fresh producer each time.)
_producers: dict[str, EventHubProducerClient] = {}


def send(conn: str, bodies: list[Any], **batch_kwargs: Any) -> None:
    """Send ``bodies`` as one batch (partition_id / partition_key via batch_kwargs)."""
    client = _producers.get(conn)
    if client is None:
        client = _producers[conn] = producer(conn)
    send_batch(client, bodies, **batch_kwargs)


def close_producers() -> None:
    """Close the producers ``send`` kept open: after each test, and before a test counts the
    emulator's connections."""
    while _producers:
        _producers.popitem()[1].close()
