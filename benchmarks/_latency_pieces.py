"""Pieces of the latency scenario that run without Spark: the steady sender, the SDK anchor, and
the watcher that sees a sink's batches become visible.

The sender and the anchor run as ``python -m benchmarks._latency_pieces send|anchor``
in their own processes, so neither shares a GIL with the Spark driver; the connection string
reaches them through the environment, never the command line.
"""

from __future__ import annotations

import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

__all__ = ["ManifestWatcher", "percentile", "read_manifest", "steady_send"]

CONNECTION_ENV = "PYSPARKSOURCES_BENCH_CONNECTION"


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile (``fraction`` in 0..1); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(fraction * len(ordered))))
    return ordered[rank - 1]


def read_manifest(path: Path) -> list[str]:
    """The data files a ``_spark_metadata`` batch file lists, as local paths."""
    lines = path.read_text().splitlines()
    if not lines or lines[0] != "v1":
        raise ValueError(f"{path}: not a v1 file sink manifest")
    found = []
    for line in lines[1:]:
        if line.strip():
            uri = urlparse(json.loads(line)["path"])
            found.append(unquote(uri.path) if uri.scheme in ("", "file") else line)
    return found


class ManifestWatcher:
    """Polls a sink folder's ``_spark_metadata`` and notes when each data file became visible.

    Spark's readers list only what the manifest names, so a row is visible to
    ``spark.read.parquet`` the moment its batch's manifest file exists.
    """

    def __init__(self, folder: Path, on_file: Callable[[str, float], None]) -> None:
        self._metadata = folder / "_spark_metadata"
        self._on_file = on_file
        self._seen_batches: set[str] = set()
        self._seen_files: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="manifest-watcher", daemon=True)

    def __enter__(self) -> ManifestWatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def poll(self) -> None:
        """One look: every new batch file's data files are reported with the time seen."""
        if not self._metadata.is_dir():
            return
        seen_at = time.time()
        names = [p.name for p in self._metadata.iterdir() if not p.name.startswith(".")]
        for name in sorted(set(names) - self._seen_batches, key=_batch_order):
            if name.endswith(".tmp") or not name.split(".")[0].isdigit():
                continue
            self._seen_batches.add(name)
            for data_file in read_manifest(self._metadata / name):
                if data_file not in self._seen_files:
                    self._seen_files.add(data_file)
                    self._on_file(data_file, seen_at)

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            self.poll()


def _batch_order(name: str) -> int:
    head = name.split(".")[0]
    return int(head) if head.isdigit() else -1


def steady_send(conn: str, rate: int, seconds: float, size: int, partitions: int) -> dict[str, Any]:
    """Send ``rate`` events/s (0: flat out, full batches) for ``seconds``; count what was sent."""
    from azure.eventhub import EventData, EventHubProducerClient

    body = b"x" * size
    sent = 0
    with EventHubProducerClient.from_connection_string(conn) as client:
        client.get_partition_ids()  # connected before the clock starts
        wall_start = time.time()
        started = time.monotonic()
        tick = 0
        while (now := time.monotonic()) - started < seconds:
            partition = str(tick % partitions)
            if rate:
                due = int(rate * (now - started)) - sent
                if due <= 0:
                    time.sleep(0.002)
                    continue
            batch = client.create_batch(partition_id=partition)
            count = 0
            while not rate or count < due:
                try:
                    batch.add(EventData(body))
                except ValueError:
                    break
                count += 1
            client.send_batch(batch)
            sent += count
            tick += 1
        elapsed = time.monotonic() - started
    return {"sent": sent, "seconds": elapsed, "rate": sent / elapsed, "started": wall_start}


def anchor(conn: str, out: Path, expected: Callable[[], int], timeout: float) -> dict[str, Any]:
    """The SDK consumer writing parquet itself: one file per received batch, made visible by an
    atomic rename; latency = visible - enqueued. Starts at the end of every partition, prints
    ``ready`` once every partition is attached, and stops once ``expected()`` (which blocks until
    the sender has finished) events have arrived."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from azure.eventhub import EventHubConsumerClient

    out.mkdir(parents=True, exist_ok=True)
    latencies: list[tuple[float, float]] = []  # (enqueued, latency ms)
    ready: set[str] = set()
    lock = threading.Lock()
    client = EventHubConsumerClient.from_connection_string(conn, consumer_group="$Default")
    partitions = client.get_partition_ids()

    def on_init(context: Any) -> None:
        with lock:
            ready.add(context.partition_id)
            if len(ready) == len(partitions):
                print("ready", flush=True)

    def on_batch(context: Any, events: list[Any]) -> None:
        if not events:
            return
        enqueued = [e.enqueued_time.timestamp() for e in events]
        table = pa.table({"enqueued": pa.array(enqueued, pa.float64())})
        name = f"{context.partition_id}-{events[0].sequence_number}.parquet"
        pq.write_table(table, out / f".{name}.tmp")
        os.replace(out / f".{name}.tmp", out / name)
        visible = time.time()
        with lock:
            latencies.extend((t, (visible - t) * 1000) for t in enqueued)

    thread = threading.Thread(
        target=client.receive_batch,
        kwargs={
            "on_event_batch": on_batch,
            "on_partition_initialize": on_init,
            "starting_position": "@latest",
            "max_batch_size": 300,
            "max_wait_time": 0.05,
        },
        daemon=True,
    )
    thread.start()
    wanted = expected()
    deadline = time.monotonic() + timeout
    while len(latencies) < wanted and time.monotonic() < deadline:
        time.sleep(0.05)
    finished = len(latencies) >= wanted
    client.close()
    thread.join(timeout=30)
    return {"received": len(latencies), "complete": finished, "latencies_ms": latencies}


def _main(argv: list[str]) -> int:
    conn = os.environ[CONNECTION_ENV]
    if argv[0] == "send":
        rate, seconds, size, partitions = int(argv[1]), float(argv[2]), int(argv[3]), int(argv[4])
        print(json.dumps(steady_send(conn, rate, seconds, size, partitions)), flush=True)
    elif argv[0] == "anchor":
        result = anchor(conn, Path(argv[1]), lambda: int(sys.stdin.readline()), float(argv[2]))
        Path(argv[3]).write_text(json.dumps(result))
    else:
        raise SystemExit(f"unknown piece {argv[0]!r}: send or anchor")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
