"""Send, receive and collect events with the real azure-eventhub SDK, for tests.

``pip install "pysparksources-emulator[sdk]"`` (it adds azure-eventhub; the emulator itself
needs none of it). Every helper takes a connection string with ``EntityPath``, such as
:meth:`EventHubsEmulator.connection_string` returns, so they work against any Event Hubs
endpoint. Clients are built with :data:`FAST` retries: a test must never sit in the SDK's
default 60 s of retries.

>>> with EventHubsEmulator.for_hubs({"orders": 2}) as emulator:   # doctest: +SKIP
...     conn = emulator.connection_string("orders")
...     send(conn, ["a", "b"], partition_id="0")
...     assert bodies(receive(conn, "0", "-1", 2)) == ["a", "b"]
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from azure.eventhub import EventData, EventHubConsumerClient, EventHubProducerClient

__all__ = [
    "FAST",
    "Collector",
    "bodies",
    "consumer",
    "producer",
    "receive",
    "received",
    "received_by",
    "send",
    "send_batch",
]

# Short client-side waits: a test must never sit in the SDK's default 60 s retries.
FAST = {"retry_total": 2, "retry_backoff_factor": 0.1, "retry_backoff_max": 0.5}


def producer(conn: str, **kwargs: Any) -> EventHubProducerClient:
    """A producer client with :data:`FAST` retries (keywords override them)."""
    return EventHubProducerClient.from_connection_string(conn, **{**FAST, **kwargs})


def consumer(conn: str, group: str = "$Default", **kwargs: Any) -> EventHubConsumerClient:
    """A consumer client of ``group`` with :data:`FAST` retries (keywords override them)."""
    return EventHubConsumerClient.from_connection_string(
        conn, consumer_group=group, **{**FAST, **kwargs}
    )


def send(conn: str, bodies: list[Any], **batch_kwargs: Any) -> None:
    """Send ``bodies`` as one batch from a new producer, closed afterwards (``partition_id`` /
    ``partition_key`` via ``batch_kwargs``). Each call opens its own AMQP connection: the
    handshakes cost about a second, which a test that sends often can save by keeping one
    producer and calling :func:`send_batch`."""
    with producer(conn) as client:
        send_batch(client, bodies, **batch_kwargs)


def send_batch(client: EventHubProducerClient, bodies: list[Any], **batch_kwargs: Any) -> None:
    """Send ``bodies`` (strings, bytes or EventData) as one batch from an open producer."""
    batch = client.create_batch(**batch_kwargs)
    for body in bodies:
        batch.add(body if isinstance(body, EventData) else EventData(body))
    client.send_batch(batch)


class Collector:
    """Run ``EventHubConsumerClient.receive`` on a thread and gather what arrives.

    ``with Collector(conn) as c: c.start(partition_id="0", starting_position="-1");
    c.wait_for(3)``; keywords of :meth:`start` go to ``receive`` (``max_wait_time`` is 0.5 s
    unless given). Errors the SDK reports through ``on_error`` land in :attr:`errors`.
    """

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
        """The events so far, once there are ``count`` of them or ``timeout`` passed."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.events) < count and time.monotonic() < deadline:
                self._cond.wait(timeout=max(0.0, deadline - time.monotonic()))
            return list(self.events)

    def wait_error(self, timeout: float = 10.0) -> list[BaseException]:
        """The errors so far, once there is one or ``timeout`` passed."""
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
    """Receive ``count`` events of one partition from ``start``; ``linger`` waits for extras.

    ``group`` picks the consumer group ($Default); other keywords go to ``receive``.
    """
    group = kwargs.pop("group", "$Default")
    with Collector(conn, group) as collector:
        collector.start(partition_id=partition, starting_position=start, **kwargs)
        events = collector.wait_for(count, timeout)
        if linger:
            time.sleep(linger)
            events = list(collector.events)
        return events


def bodies(events: list[Any]) -> list[str]:
    """The events' bodies as text."""
    return [event.body_as_str() for event in events]


def received(conn: str, count: int, timeout: float = 60) -> list[Any]:
    """At least ``count`` ``(partition_id, event)`` pairs from every partition, read from the
    start with ``receive_batch`` (whatever arrived when ``timeout`` passes)."""
    client = EventHubConsumerClient.from_connection_string(conn, consumer_group="$Default")
    return received_by(client, count, timeout)


def received_by(
    client: Any,
    count: int,
    timeout: float = 60,
    keep: Callable[[Any], bool] = lambda event: True,
) -> list[Any]:
    """:func:`received` through a consumer client of any credential, which it closes; only
    the events ``keep`` accepts are collected and counted."""
    events: list[Any] = []
    lock = threading.Lock()
    done = threading.Event()

    def on_batch(context: Any, batch: list[Any]) -> None:
        with lock:
            events.extend((context.partition_id, e) for e in batch if keep(e))
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
