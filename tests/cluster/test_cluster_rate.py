"""pyrate on a real two-executor standalone cluster, from a classic driver and over Connect."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.cluster_drivers import pyrate_on_cluster
from support.spark_processes import StandaloneCluster, worker_env

pytestmark = pytest.mark.cluster
HERE = Path(__file__).resolve().parent


def run_driver(cluster: StandaloneCluster, scenario: str, out: Path, **env: str) -> dict[str, Any]:
    result = subprocess.run(
        [
            sys.executable,
            str(HERE.parent / "support" / "cluster_drivers.py"),
            cluster.url,
            scenario,
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**worker_env(), **env},
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert result.returncode == 0 and lines, result.stdout + result.stderr[-4000:]
    parsed: dict[str, Any] = json.loads(lines[-1][len("RESULT ") :])
    return parsed


def test_both_workers_registered(cluster: StandaloneCluster) -> None:
    state = cluster.state()
    assert state["aliveworkers"] == 2
    assert all(w["cores"] == 1 for w in state["workers"])


def test_pyrate_classic_driver_uses_both_executors(
    cluster: StandaloneCluster, tmp_path: Path
) -> None:
    result = run_driver(cluster, "pyrate", tmp_path / "out")
    assert result["values"] == list(range(4000))
    assert len(result["executors"]) == 2, result["executors"]


def test_pyrate_over_connect_on_the_cluster(cluster_connect: Any, tmp_path: Path) -> None:
    result = pyrate_on_cluster(cluster_connect, str(tmp_path / "out"))
    assert result["values"] == list(range(4000))
    assert len(result["executors"]) == 2, result["executors"]
