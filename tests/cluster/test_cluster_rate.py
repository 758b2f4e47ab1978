"""pyrate on a real two-executor standalone cluster, from a classic driver and over Connect."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from support.cluster_drivers import ClassicDriver, pyrate_on_cluster
from support.processes import command_line
from support.spark_home import LEAN_CONF_VARIABLE, runs_lean
from support.spark_processes import StandaloneCluster

pytestmark = pytest.mark.cluster


def test_both_workers_registered(cluster: StandaloneCluster) -> None:
    state = cluster.state()
    assert state["aliveworkers"] == 2
    assert all(w["cores"] == 1 for w in state["workers"])


@pytest.mark.skipif(
    LEAN_CONF_VARIABLE not in os.environ, reason="your own SPARK_CONF_DIR is used as it is"
)
def test_the_daemons_and_a_restarted_worker_run_the_lean_jvm_options(
    cluster: StandaloneCluster,
) -> None:
    """The executors get their JVM options from their worker's SPARK_CONF_DIR; a worker
    restarted without it makes every later executor run the default JIT and collector (a run
    lost about 150 CPU-seconds that way before the cluster kept its daemon_env)."""
    for daemon in [cluster.master, *cluster.workers]:
        args = command_line(daemon.pid)
        assert runs_lean(args), args
        assert f"{os.environ[LEAN_CONF_VARIABLE]}/" in args[args.index("-cp") + 1], args
    assert cluster.daemon_env == {"SPARK_CONF_DIR": os.environ[LEAN_CONF_VARIABLE]}


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
