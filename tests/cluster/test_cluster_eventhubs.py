"""pyeventhub -> pyfile on the two-executor standalone cluster: a classic driver, Connect, a
worker lost (kill -9) mid-stream, and how the receiver cache and the partition ordering
behave with two executors (Hash vs BalancedHash).

The emulator runs in this test process on 127.0.0.1, which the executors reach. The classic
driver runs first: the module's Connect server, once started, holds both workers' cores.
"""

from __future__ import annotations

import collections
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cluster_drivers import pyeventhub_on_cluster, run_driver
from support.eventhubs import send
from support.spark_processes import StandaloneCluster
from support.streams import wait_for_batches, wait_for_rows

from pysparksources.emulator import EventHubsEmulator

pytestmark = pytest.mark.cluster
PARTITIONS, PER_PARTITION = 4, 1000


@pytest.fixture(scope="module")
def emulator() -> Iterator[EventHubsEmulator]:
    started = EventHubsEmulator.for_hubs({"orders": PARTITIONS, "lost": 2}).start()
    conn = started.connection_string("orders")
    for pid in range(PARTITIONS):
        send_numbered(conn, pid, range(PER_PARTITION))
    yield started
    started.stop()


def send_numbered(conn: str, pid: int, numbers: range) -> None:
    send(conn, [f"p{pid}-{i}" for i in numbers], partition_id=str(pid))


EXPECTED = sorted(
    [str(pid), i, f"p{pid}-{i}"] for pid in range(PARTITIONS) for i in range(PER_PARTITION)
)


def test_pyeventhub_classic_driver_on_both_executors(
    cluster: StandaloneCluster, emulator: EventHubsEmulator, tmp_path: Path
) -> None:
    conn = emulator.connection_string("orders")
    result = run_driver(cluster, "pyeventhub", tmp_path, EH_CONN=conn)
    assert result["events"] == EXPECTED  # every event once, read through _spark_metadata
    assert result["batches"] == 4  # 4000 events, 1000 per trigger
    assert len(result["executors"]) == 2, result["executors"]


def test_pyeventhub_over_connect_on_the_cluster(
    cluster_connect: Any, emulator: EventHubsEmulator, tmp_path: Path
) -> None:
    result = pyeventhub_on_cluster(
        cluster_connect, str(tmp_path), emulator.connection_string("orders")
    )
    assert result["events"] == EXPECTED
    assert result["batches"] == 4
    assert len(result["executors"]) == 2, result["executors"]


def _locality(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Cache hit rate, tasks per executor, and how steadily a partition stays on one."""
    per_executor = collections.Counter(r["executorId"] for r in records)
    by_partition: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for r in records:
        by_partition[r["partition"]][r["executorId"]] += 1
    steadiness = {
        pid: round(max(c.values()) / sum(c.values()), 2) for pid, c in sorted(by_partition.items())
    }
    return {
        "tasks": len(records),
        "hit_rate": round(sum(r["cacheHit"] for r in records) / len(records), 2),
        "exact_hits": sum(r["reuse"] == "hit" for r in records),
        "skips": sum(r["reuse"] == "skip" for r in records),
        "tasks_per_executor": dict(sorted(per_executor.items())),
        "share_on_most_frequent_executor": steadiness,
    }


def test_receiver_cache_and_partition_spread_hash_vs_balanced_hash(
    cluster_connect: Any, emulator: EventHubsEmulator, tmp_path: Path
) -> None:
    conn = emulator.connection_string("orders")
    figures = {}
    for strategy in ("Hash", "BalancedHash"):
        stats = tmp_path / f"stats-{strategy}"
        query = (
            cluster_connect.readStream.format("pyeventhub")
            .option("connectionString", conn)
            .options(startingPosition="start", maxEventsPerTrigger="400")
            .options(partitionPreferredLocationStrategy=strategy, taskStatsPath=str(stats))
            .load()
            .writeStream.format("noop")
            .option("checkpointLocation", str(tmp_path / f"ckpt-{strategy}"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        records = [
            json.loads(line) for f in sorted(stats.iterdir()) for line in f.read_text().splitlines()
        ]
        batches = {r["batchId"] for r in records}
        assert len(batches) == PARTITIONS * PER_PARTITION // 400  # 10 batches
        # One line per task: each partition read once per batch, all events exactly once.
        assert len({(r["batchId"], r["partition"]) for r in records}) == len(records)
        assert sum(r["events"] for r in records) == PARTITIONS * PER_PARTITION
        figures[strategy] = _locality(records)
        assert len(figures[strategy]["tasks_per_executor"]) == 2, figures[strategy]
    print("pyeventhub locality on 2 executors:", json.dumps(figures, sort_keys=True))


def test_pyeventhub_to_pyfile_survives_a_killed_worker_exactly_once(
    cluster: StandaloneCluster, cluster_connect: Any, emulator: EventHubsEmulator, tmp_path: Path
) -> None:
    conn = emulator.connection_string("lost")
    for pid in range(2):
        send_numbered(conn, pid, range(0, 600))
    query = (
        cluster_connect.readStream.format("pyeventhub")
        .option("connectionString", conn)
        .options(startingPosition="start", maxEventsPerTrigger="200")
        .load()
        .selectExpr("partition", "sequenceNumber", "CAST(body AS STRING) AS body")
        .writeStream.format("pyfile")
        .options(format="parquet", path=str(tmp_path / "out"))
        .option("checkpointLocation", str(tmp_path / "ckpt"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    total = 2 * 1200
    try:
        wait_for_batches(query, 3, timeout=180)
        cluster.kill_worker(0)
        for pid in range(2):  # events sent after the loss are read by the survivor only
            send_numbered(conn, pid, range(600, 1200))
        wait_for_rows(query, total, 240, "the query did not finish on the survivor")
    finally:
        query.stop()
        cluster.restart_worker(0)
    rows = cluster_connect.read.parquet(str(tmp_path / "out")).collect()
    got = sorted([r.partition, r.sequenceNumber, r.body] for r in rows)
    assert got == sorted([str(p), i, f"p{p}-{i}"] for p in range(2) for i in range(1200))
