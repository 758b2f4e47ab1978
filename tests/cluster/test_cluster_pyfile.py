"""pyfile source → pyfile sink on the two-executor standalone cluster: classic, Connect, and a
worker lost (kill -9) in the middle of a stream.

The classic test runs in the run's shared classic driver process, the others through the
shared Connect server (tests/cluster/conftest.py).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from support.cluster_drivers import ClassicDriver, land_files, pyfile_on_cluster, pyfile_stream
from support.spark_processes import StandaloneCluster
from support.streams import wait_for_batches, wait_for_rows

pytestmark = pytest.mark.cluster
EXPECTED = list(range(10 * 250))  # two runs: 6 then 4 files of 250 ids each


def check(result: dict[str, Any]) -> None:
    for fmt in ("parquet", "csv"):
        outcome = result[fmt]
        assert outcome["ids"] == EXPECTED, fmt  # every row once, read through _spark_metadata
        assert outcome["batches"] == [[1000, 500], [1000]], fmt  # 4 files per trigger
        assert len(outcome["executors"]) == 2, outcome["executors"]


def test_pyfile_classic_driver_on_both_executors(
    classic_driver: ClassicDriver, tmp_path: Path
) -> None:
    check(classic_driver.run("pyfile", tmp_path))


def test_pyfile_over_connect_on_the_cluster(cluster_connect: Any, tmp_path: Path) -> None:
    check(pyfile_on_cluster(cluster_connect, str(tmp_path)))


def test_pyfile_to_pyfile_survives_a_killed_worker_exactly_once(
    cluster: StandaloneCluster, cluster_connect: Any, tmp_path: Path
) -> None:
    root, files, rows = str(tmp_path), 24, 400
    land_files(f"{root}/in-parquet", "parquet", 0, 8, rows)
    query = (
        pyfile_stream(cluster_connect, root, "parquet", maxFilesPerTrigger="2")
        .writeStream.format("pyfile")
        .options(format="parquet", path=f"{root}/out", checkpointLocation=f"{root}/ckpt")
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    try:
        wait_for_batches(query, 3, timeout=180)
        cluster.kill_worker(0)
        # The rest land after the loss, so batches certainly run on the surviving executor.
        for first in range(8, files, 4):
            land_files(f"{root}/in-parquet", "parquet", first, 4, rows)
            time.sleep(0.5)
        wait_for_rows(query, files * rows, 240, "the query did not finish on the survivor")
    finally:
        query.stop()
        cluster.restart_worker(0)
    out = cluster_connect.read.parquet(f"{root}/out").select("id", "executor").collect()
    assert sorted(r.id for r in out) == list(range(files * rows))  # none lost, none twice
    # Both executors wrote committed rows: the lost one before the kill, the survivor after.
    assert len({r.executor for r in out}) == 2
