"""Small helpers for running real streaming queries in tests (classic or Spark Connect)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any


def progress(query: Any) -> list[dict[str, Any]]:
    """The query's recent progress as plain dicts (same shape on classic and Connect).

    Over Connect the top-level row count is absent and offsets are JSON text: both are
    normalized here (rows summed over sources, offsets parsed).
    """
    result = []
    for entry in query.recentProgress:
        item = json.loads(entry.json)
        for source in item["sources"]:
            for key in ("startOffset", "endOffset", "latestOffset"):
                if isinstance(source.get(key), str):
                    source[key] = json.loads(source[key])
        item["numInputRows"] = sum(s.get("numInputRows") or 0 for s in item["sources"])
        result.append(item)
    return result


def data_batches(query: Any) -> list[dict[str, Any]]:
    """Progress entries of batches that read rows."""
    return [p for p in progress(query) if p["numInputRows"] > 0]


def wait_for_batches(query: Any, count: int, timeout: float = 120) -> None:
    """Block until ``count`` batches have completed, then return (query still running)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if query.exception() is not None:
            raise AssertionError(f"query failed: {query.exception()}")
        last = query.lastProgress
        if last is not None and json.loads(last.json)["batchId"] >= count - 1:
            return
        time.sleep(0.2)
    raise TimeoutError(f"query did not complete {count} batches in {timeout}s")


def wait_for_rows(query: Any, rows: int, timeout: float, what: str) -> None:
    """Block until the query's batches have read ``rows`` rows (query still running)."""
    deadline = time.monotonic() + timeout
    while sum(p["numInputRows"] for p in data_batches(query)) < rows:
        assert query.exception() is None, query.exception()
        assert time.monotonic() < deadline, what
        time.sleep(0.5)


def stop_between_batches(query: Any, checkpoint: Path, timeout: float = 60) -> None:
    """Stop ``query`` right after it commits a batch that began after this call.

    A batch interrupted by ``stop()`` stays in the offset log and is run again, alone, first
    thing after a restart; a test that restarts to read a backlog wants none of that. Stopping
    just after a fresh commit leaves the most time before the next trigger: checking at an
    arbitrary moment lost that race on a loaded machine.
    """
    seen = _last_batch(checkpoint / "commits")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        committed = _last_batch(checkpoint / "commits")
        if committed > seen and _last_batch(checkpoint / "offsets") == committed:
            query.stop()
            if _last_batch(checkpoint / "offsets") == committed:
                return
            raise AssertionError("a batch began between the check and stop(): run again")
        time.sleep(0.01)
    raise TimeoutError(f"{query.name or query.id} never paused between batches in {timeout}s")


def checkpoint_offsets(checkpoint: Path) -> list[str]:
    """Every source offset in Spark's offset log, as the text Spark wrote and compares.

    ``offsets/<n>`` holds a version line, the batch's metadata, then one line per source.
    """
    return [
        line
        for batch in sorted(
            checkpoint.joinpath("offsets").glob("[0-9]*"), key=lambda p: int(p.name)
        )
        for line in batch.read_text().splitlines()[2:]
    ]


def _last_batch(folder: Path) -> int:
    ids = [int(p.name) for p in folder.iterdir() if p.name.isdigit()] if folder.exists() else []
    return max(ids, default=-1)


def to_parquet(df: Any, out: Path, checkpoint: Path, **trigger: Any) -> Any:
    """Start ``df`` into Spark's own (exactly-once) parquet sink."""
    return (
        df.writeStream.format("parquet")
        .option("path", str(out))
        .option("checkpointLocation", str(checkpoint))
        .trigger(**trigger)
        .start()
    )


def run_available_now(df: Any, out: Path, checkpoint: Path, timeout: float = 300) -> Any:
    """Run ``df`` into Spark's parquet sink under AvailableNow until it ends; the query."""
    query = to_parquet(df, out, checkpoint, availableNow=True)
    query.awaitTermination(timeout)
    if query.exception() is not None:
        raise AssertionError(str(query.exception()))
    return query


def drain(writer: Any, timeout: float = 300) -> Any:
    """Start ``writer`` (a DataStreamWriter) and return the query once it has read everything
    its sources held, in admission-sized batches, and ended.

    Spark 4.2+ does that under Trigger.AvailableNow. Spark 4.0 and 4.1 run a single batch
    there for Python sources (docs/compatibility.md), so on those lines the query runs with
    ``processingTime="0 seconds"`` until a trigger finds nothing new, and is stopped then.
    """
    from pysparksources._core.compat import ENGINE_ADMISSION_CONTROL

    if ENGINE_ADMISSION_CONTROL:
        query = writer.trigger(availableNow=True).start()
        query.awaitTermination(timeout)
    else:
        query = writer.trigger(processingTime="0 seconds").start()
        wait_until_caught_up(query, timeout)
        query.stop()
    if query.exception() is not None:
        raise AssertionError(str(query.exception()))
    return query


def wait_until_caught_up(query: Any, timeout: float = 300) -> None:
    """Block until ``query`` has run a batch and then found nothing new to read."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if query.exception() is not None:
            raise AssertionError(f"query failed: {query.exception()}")
        status = query.status
        if query.lastProgress is not None and status["message"] == "Waiting for data to arrive":
            return
        time.sleep(0.05)
    raise TimeoutError(f"the query did not catch up in {timeout:.0f} s")


def rate(session: Any, total: int, per_batch: int, partitions: int = 2, capped: bool = True) -> Any:
    """``total`` pyrate rows as a finite stream, ``per_batch`` rows per logical batch.

    ``capped``: at most ``per_batch`` rows per micro-batch, even under AvailableNow (which
    otherwise reads every remaining row of a finite stream in one micro-batch).
    """
    reader = (
        session.readStream.format("pyrate")
        .option("rowsPerBatch", per_batch)
        .option("totalRows", total)
        .option("numPartitions", partitions)
    )
    if capped:
        reader = reader.option("maxRowsPerTrigger", per_batch)
    return reader.load()


def collect_rows(session: Any, path: Path, columns: str) -> list[tuple[Any, ...]]:
    """Rows read back with Spark's parquet reader, sorted, as tuples."""
    rows = session.read.parquet(str(path)).selectExpr(*columns.split(",")).collect()
    return sorted(tuple(r) for r in rows)
