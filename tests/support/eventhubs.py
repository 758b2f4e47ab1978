"""The real azure-eventhub SDK as the tests' own client: send, receive, collect."""

from __future__ import annotations

import threading
import time
from typing import Any

from azure.eventhub import EventData, EventHubConsumerClient, EventHubProducerClient

# Short client-side waits: a test must never sit in the SDK's default 60 s retries.
FAST = {"retry_total": 2, "retry_backoff_factor": 0.1, "retry_backoff_max": 0.5}


def producer(conn: str, **kwargs: Any) -> EventHubProducerClient:
    return EventHubProducerClient.from_connection_string(conn, **{**FAST, **kwargs})


def consumer(conn: str, group: str = "$Default", **kwargs: Any) -> EventHubConsumerClient:
    return EventHubConsumerClient.from_connection_string(
        conn, consumer_group=group, **{**FAST, **kwargs}
    )


# Opening a producer costs ~0.8 s of AMQP handshakes (each frame read behind the SDK's own
# 50 ms polling) and its first send on a partition another ~0.5 s, so a test that seeds a hub
# with several batches keeps one producer per connection string. tests/conftest.py sets
# ``reuse_producers`` for each test (off where a new client's handshake is under test) and
# closes the kept producers after it.
_producers: dict[str, EventHubProducerClient] = {}
reuse_producers = True


def send(conn: str, bodies: list[Any], **batch_kwargs: Any) -> None:
    """Send ``bodies`` as one batch (partition_id / partition_key via batch_kwargs)."""
    if not reuse_producers:
        with producer(conn) as client:
            _send_batch(client, bodies, batch_kwargs)
        return
    client = _producers.get(conn)
    if client is None:
        client = _producers[conn] = producer(conn)
    _send_batch(client, bodies, batch_kwargs)


def _send_batch(client: EventHubProducerClient, bodies: list[Any], kwargs: dict[str, Any]) -> None:
    batch = client.create_batch(**kwargs)
    for body in bodies:
        batch.add(body if isinstance(body, EventData) else EventData(body))
    client.send_batch(batch)


def close_producers() -> None:
    """Close the producers ``send`` kept open: after each test, and before a test counts the
    emulator's connections."""
    while _producers:
        _producers.popitem()[1].close()


class Collector:
    """Run ``EventHubConsumerClient.receive`` on a thread and gather what arrives."""

    def __init__(self, conn: str, group: str = "$Default", **client_kwargs: Any) -> None:
        self.client = consumer(conn, group, **client_kwargs)
        self.events: list[Any] = []
        self.partition_ids: list[str] = []  # parallel to events
        self.errors: list[BaseException] = []
        self.closed_reasons: list[Any] = []
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def _on_event(self, context: Any, event: Any) -> None:
        if event is None:
            return
        with self._cond:
            self.events.append(event)
            self.partition_ids.append(context.partition_id)
            self._cond.notify_all()

    def _on_error(self, context: Any, error: BaseException) -> None:
        with self._cond:
            self.errors.append(error)
            self._cond.notify_all()

    def _on_close(self, context: Any, reason: Any) -> None:
        self.closed_reasons.append(reason)

    def start(self, **receive_kwargs: Any) -> Collector:
        kwargs = {
            "on_event": self._on_event,
            "on_error": self._on_error,
            "on_partition_close": self._on_close,
            "max_wait_time": 0.5,
            **receive_kwargs,
        }
        self._thread = threading.Thread(target=self.client.receive, kwargs=kwargs, daemon=True)
        self._thread.start()
        return self

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Any]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.events) < count and time.monotonic() < deadline:
                self._cond.wait(timeout=max(0.0, deadline - time.monotonic()))
            return list(self.events)

    def wait_error(self, timeout: float = 10.0) -> list[BaseException]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self.errors and time.monotonic() < deadline:
                self._cond.wait(timeout=max(0.0, deadline - time.monotonic()))
            return list(self.errors)

    def stop(self) -> None:
        self.client.close()
        if self._thread is not None:
            self._thread.join(timeout=15)

    def __enter__(self) -> Collector:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def receive(
    conn: str,
    partition: str,
    start: Any,
    count: int,
    *,
    timeout: float = 10.0,
    linger: float = 0.0,
    **kwargs: Any,
) -> list[Any]:
    """Receive ``count`` events of one partition from ``start``; ``linger`` waits for extras."""
    group = kwargs.pop("group", "$Default")
    with Collector(conn, group) as collector:
        collector.start(partition_id=partition, starting_position=start, **kwargs)
        events = collector.wait_for(count, timeout)
        if linger:
            time.sleep(linger)
            events = list(collector.events)
        return events


def bodies(events: list[Any]) -> list[str]:
    return [event.body_as_str() for event in events]


def received(conn: str, count: int, timeout: float = 60) -> list[Any]:
    """At least ``count`` events from every partition, read from the start by the SDK."""
    client = EventHubConsumerClient.from_connection_string(conn, consumer_group="$Default")
    events: list[Any] = []
    lock = threading.Lock()
    done = threading.Event()

    def on_batch(context: Any, batch: list[Any]) -> None:
        with lock:
            events.extend((context.partition_id, e) for e in batch)
            if len(events) >= count:
                done.set()

    thread = threading.Thread(
        target=client.receive_batch,
        kwargs={"on_event_batch": on_batch, "starting_position": "-1", "max_wait_time": 1},
        daemon=True,
    )
    thread.start()
    done.wait(timeout)
    client.close()
    thread.join(30)
    return events
