"""Losing a worker (kill -9, executors included) in the middle of a streaming query."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from support.processes import command_line
from support.spark_home import LEAN_CONF_VARIABLE, runs_lean
from support.spark_processes import StandaloneCluster
from support.streams import collect_rows, data_batches, to_parquet, wait_for_batches

pytestmark = pytest.mark.cluster


def test_pyrate_to_parquet_survives_a_killed_worker_exactly_once(
    cluster: StandaloneCluster, cluster_connect: Any, tmp_path: Path
) -> None:
    total = 60_000
    stream = (
        cluster_connect.readStream.format("pyrate")
        .options(rowsPerBatch="5000", totalRows=str(total), maxRowsPerTrigger="5000")
        .option("numPartitions", "4")
        .load()
    )
    query = to_parquet(
        stream, tmp_path / "out", tmp_path / "ckpt", processingTime="300 milliseconds"
    )
    try:
        wait_for_batches(query, 3, timeout=180)
        cluster.kill_worker(0)
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            assert query.exception() is None, query.exception()
            if sum(p["numInputRows"] for p in data_batches(query)) >= total:
                break
            time.sleep(0.5)
        else:
            raise AssertionError("the query did not finish on the surviving executor")
    finally:
        query.stop()
        cluster.restart_worker(0)
    values = [r[0] for r in collect_rows(cluster_connect, tmp_path / "out", "value")]
    assert values == list(range(total))  # every row once: none lost, none duplicated
    if LEAN_CONF_VARIABLE in os.environ:  # a restarted worker keeps the lean JVM options
        restarted = command_line(cluster.workers[0].pid)
        assert runs_lean(restarted), restarted
