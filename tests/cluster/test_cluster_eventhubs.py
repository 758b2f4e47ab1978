"""pyeventhub -> pyfile on the two-executor standalone cluster: a classic driver, Connect, a
worker lost (kill -9) mid-stream, and how the receiver cache and the partition ordering
behave with two executors (Hash vs BalancedHash).

The emulator (tests/cluster/conftest.py) runs in this test process on 127.0.0.1, which the
executors reach. The classic test runs in the run's shared classic driver process, the others
through the shared Connect server.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path
from typing import Any

import pytest

from pysparksources_emulator import EventHubsEmulator
from support.cluster_drivers import (
    ORDERS_EXPECTED,
    ORDERS_PARTITIONS,
    ORDERS_PER_PARTITION,
    ClassicDriver,
    pyeventhub_on_cluster,
    send_numbered,
)
from support.spark_processes import StandaloneCluster
from support.streams import wait_for_batches, wait_for_rows

pytestmark = pytest.mark.cluster


def test_pyeventhub_classic_driver_on_both_executors(
    classic_driver: ClassicDriver, emulator: EventHubsEmulator, tmp_path: Path
) -> None:
    conn = emulator.connection_string("orders")
    result = classic_driver.run("pyeventhub", tmp_path, conn=conn)
    assert result["events"] == ORDERS_EXPECTED  # every event once, read through _spark_metadata
    assert result["batches"] == 4  # 4000 events, 1000 per trigger
    assert len(result["executors"]) == 2, result["executors"]


def test_pyeventhub_over_connect_on_the_cluster(
    cluster_connect: Any, emulator: EventHubsEmulator, tmp_path: Path
) -> None:
    result = pyeventhub_on_cluster(
        cluster_connect, str(tmp_path), emulator.connection_string("orders")
    )
    assert result["events"] == ORDERS_EXPECTED
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
            .option("minEventsPerTask", "1")  # a task per partition: what the strategies order
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
        assert len(batches) == ORDERS_PARTITIONS * ORDERS_PER_PARTITION // 400  # 10 batches
        # One line per task: each partition read once per batch, all events exactly once.
        assert len({(r["batchId"], r["partition"]) for r in records}) == len(records)
        assert sum(r["events"] for r in records) == ORDERS_PARTITIONS * ORDERS_PER_PARTITION
        figures[strategy] = _locality(records)
        assert len(figures[strategy]["tasks_per_executor"]) == 2, figures[strategy]
    print("pyeventhub locality on 2 executors:", json.dumps(figures, sort_keys=True))


def test_pyeventhub_to_pyfile_survives_a_killed_worker_exactly_once(
    cluster: StandaloneCluster, cluster_connect: Any, emulator: EventHubsEmulator, tmp_path: Path
) -> None:
    conn = emulator.connection_string("lost")
    for pid in range(2):
        send_numbered(conn, pid, range(0, 600))
    stats = tmp_path / "stats"
    query = (
        cluster_connect.readStream.format("pyeventhub")
        .option("connectionString", conn)
        .options(startingPosition="start", maxEventsPerTrigger="200")
        .option("taskStatsPath", str(stats))  # each executor's machine: this one
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
    # The default packs both partitions' small ranges into one task that reads them at once:
    # the path this loss and its task retries went through.
    lines = [json.loads(line) for f in stats.iterdir() for line in f.read_text().splitlines()]
    assert lines and all(line["rangesInTask"] == 2 for line in lines), lines[:4]
