"""pyeventhub queries: read a hub into Spark's parquet sink, write a stream to a hub."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.streams import run_available_now


def reader(session: Any, conn: str, **options: Any) -> Any:
    stream = session.readStream.format("pyeventhub").option("connectionString", conn)
    for name, value in options.items():
        stream = stream.option(name, str(value))
    return stream.load()


def run_to_parquet(df: Any, tmp: Path, name: str = "q") -> Any:
    """Run ``df`` under AvailableNow into ``<tmp>/<name>-out`` (checkpoint ``<name>-cp``)."""
    return run_available_now(df, tmp / f"{name}-out", tmp / f"{name}-cp")


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
