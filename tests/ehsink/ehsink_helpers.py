"""Read what the sink sent with the SDK's own consumer, and run sink queries."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from azure.eventhub import EventHubConsumerClient


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


def stream_to_hub(df: Any, conn: str, tmp: Path, **options: Any) -> Any:
    """Run ``df`` (a finite stream) into pyeventhub until it ends; return the query."""
    writer = df.writeStream.format("pyeventhub").option("connectionString", conn)
    for name, value in options.items():
        writer = writer.option(name, str(value))
    query = writer.option("checkpointLocation", str(tmp / "ck")).trigger(availableNow=True).start()
    query.awaitTermination(300)
    if query.exception() is not None:
        raise AssertionError(str(query.exception()))
    return query


def rate(session: Any, total: int, per_batch: int) -> Any:
    """``total`` pyrate rows, ``per_batch`` per micro-batch, as a finite stream."""
    return (
        session.readStream.format("pyrate")
        .option("rowsPerBatch", per_batch)
        .option("totalRows", total)
        .option("numPartitions", 2)
        .load()
    )
