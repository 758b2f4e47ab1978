"""Send with the real SDK; run pyeventhub queries into Spark's parquet sink."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from azure.eventhub import EventData, EventHubProducerClient

FAST = {"retry_total": 2, "retry_backoff_factor": 0.1, "retry_backoff_max": 0.5}


def send(conn: str, bodies: list[Any], **batch_kwargs: Any) -> None:
    """One batch of events (``partition_id`` / ``partition_key`` via batch_kwargs)."""
    with EventHubProducerClient.from_connection_string(conn, **FAST) as client:
        batch = client.create_batch(**batch_kwargs)
        for body in bodies:
            batch.add(body if isinstance(body, EventData) else EventData(body))
        client.send_batch(batch)


def reader(session: Any, conn: str, **options: Any) -> Any:
    stream = session.readStream.format("pyeventhub").option("connectionString", conn)
    for name, value in options.items():
        stream = stream.option(name, str(value))
    return stream.load()


def run_available_now(session: Any, df: Any, tmp: Path, name: str = "q") -> Any:
    query = (
        df.writeStream.format("parquet")
        .option("path", str(tmp / f"{name}-out"))
        .option("checkpointLocation", str(tmp / f"{name}-cp"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    if query.exception() is not None:
        raise AssertionError(str(query.exception()))
    return query


def read_back(session: Any, tmp: Path, name: str = "q") -> list[Any]:
    path = tmp / f"{name}-out"
    return sorted(
        session.read.parquet(str(path)).collect(),
        key=lambda r: (r.partition, r.sequenceNumber),
    )


def batch_read(session: Any, conn: str, **options: Any) -> list[Any]:
    frame = session.read.format("pyeventhub").option("connectionString", conn)
    for name, value in options.items():
        frame = frame.option(name, str(value))
    return sorted(frame.load().collect(), key=lambda r: (r.partition, r.sequenceNumber))


def seqs(rows: list[Any]) -> list[tuple[str, int]]:
    return [(r.partition, r.sequenceNumber) for r in rows]


def offsets_per_batch(progress_entries: list[dict[str, Any]], hub: str) -> list[dict[str, int]]:
    """Events each batch read per partition, from the progress start/end offsets."""
    result = []
    for entry in progress_entries:
        source = entry["sources"][0]
        start = (source.get("startOffset") or {}).get(hub, {})
        end = source["endOffset"][hub]
        result.append({pid: end[pid] - start.get(pid, 0) for pid in end})
    return result
