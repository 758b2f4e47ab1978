"""pyrate on a real two-executor standalone cluster, from a classic driver and over Connect."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.cluster_drivers import ClassicDriver, pyrate_on_cluster
from support.spark_processes import StandaloneCluster

pytestmark = pytest.mark.cluster


def test_both_workers_registered(cluster: StandaloneCluster) -> None:
    state = cluster.state()
    assert state["aliveworkers"] == 2
    assert all(w["cores"] == 1 for w in state["workers"])


def test_pyrate_classic_driver_uses_both_executors(
    classic_driver: ClassicDriver, tmp_path: Path
) -> None:
    result = classic_driver.run("pyrate", tmp_path / "out")
    assert result["values"] == list(range(4000))
    assert len(result["executors"]) == 2, result["executors"]


def test_pyrate_over_connect_on_the_cluster(cluster_connect: Any, tmp_path: Path) -> None:
    result = pyrate_on_cluster(cluster_connect, str(tmp_path / "out"))
    assert result["values"] == list(range(4000))
    assert len(result["executors"]) == 2, result["executors"]
