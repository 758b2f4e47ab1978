"""Event Hubs scenario pieces: an emulator in its own process, a backlog, a plain SDK reader.

The emulator runs as a separate process (``python -m pysparksources_emulator``) so that the
server, the SDK clients and Spark's Python workers do not share one GIL: what is measured is
the client side, as it would be against Azure.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from benchmarks._children import emulator_command

__all__ = [
    "add_event_arguments",
    "emulator_process",
    "fill_backlog",
    "plain_consumer_rate",
    "send_full_batches",
]


def add_event_arguments(parser: argparse.ArgumentParser) -> None:
    """What both Event Hubs scenarios move: how many events, how big, over how many partitions."""
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)


@contextmanager
def emulator_process(hub: str, partitions: int) -> Iterator[str]:
    """Serve ``hub`` on a free port until the block ends; yields its connection string."""
    command = emulator_command("--port", "0", "--hub", f"{hub}:{partitions}")
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip().startswith("Endpoint="):
                yield line.strip()
                return
        raise RuntimeError("the Event Hubs emulator did not start")
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def send_full_batches(client: Any, partition: str, count: int, payload: bytes) -> None:
    """Send ``count`` copies of ``payload`` to one partition, each EventDataBatch filled up."""
    from azure.eventhub import EventData

    sent = 0
    while sent < count:
        batch = client.create_batch(partition_id=partition)
        while sent < count:
            try:
                batch.add(EventData(payload))
            except ValueError:
                break
            sent += 1
        client.send_batch(batch)


def fill_backlog(conn: str, partitions: int, events: int, size: int) -> None:
    """Send ``events`` events of ``size`` bytes, spread evenly over the partitions."""
    from azure.eventhub import EventHubProducerClient

    payload = b"x" * size
    with EventHubProducerClient.from_connection_string(conn) as client:
        for partition in range(partitions):
            count = events // partitions + (partition < events % partitions)
            send_full_batches(client, str(partition), count, payload)


def plain_consumer_rate(conn: str, events: int, timeout: float = 600) -> float:
    """Events/s of one SDK consumer client reading every partition's backlog from the start.

    Timed from the call (connecting included, as a Spark query's time includes it) to the
    last event.
    """
    from azure.eventhub import EventHubConsumerClient

    client = EventHubConsumerClient.from_connection_string(conn, consumer_group="$Default")
    received = 0
    done = threading.Event()
    lock = threading.Lock()

    def on_event_batch(context: Any, batch: list[Any]) -> None:
        nonlocal received
        with lock:
            received += len(batch)
            if received >= events:
                done.set()

    started = time.perf_counter()
    thread = threading.Thread(
        target=client.receive_batch,
        kwargs={
            "on_event_batch": on_event_batch,
            "starting_position": "-1",
            "max_batch_size": 300,
            "max_wait_time": 5,
        },
        daemon=True,
    )
    thread.start()
    finished = done.wait(timeout=timeout)
    elapsed = time.perf_counter() - started
    client.close()
    thread.join(timeout=30)
    if not finished:
        raise RuntimeError(f"the plain consumer received only {received} of {events} events")
    return events / elapsed
