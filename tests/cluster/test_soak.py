"""The short soak: ``./dev bench soak`` (``python -m benchmarks soak``) for half a minute through
one emulator restart and one executor kill, on the shared standalone cluster; its own counts
judged, not its speed.

Thirty seconds of sending hold both disruptions (at 20 % and 70 % of the run) and the
executor's replacement; a longer soak is ``./dev bench soak`` itself."""

from __future__ import annotations

import json
import subprocess

import pytest

from benchmarks import bench_command, with_repository_path
from support.spark_processes import StandaloneCluster, users_worker_env

pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.emulator]


def test_short_soak_is_exactly_once_through_a_restart_and_a_kill(
    cluster: StandaloneCluster,
) -> None:
    command = bench_command(
        "soak", "--master", cluster.url,
        "--minutes", "0.5", "--rate", "100", "--sample-seconds", "10",
        "--emulator-restarts", "1", "--executor-kills", "1", "--down-seconds", "3",
    )  # fmt: skip
    env = with_repository_path(users_worker_env())  # benchmarks is a folder, not installed
    proc = subprocess.run(
        command, stdout=subprocess.PIPE, text=True, env=env, timeout=900, check=False
    )
    assert proc.returncode == 0, proc.stdout[-4000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    outcome = summary["outcome"]
    assert summary["emulator_restarts"] == 1
    assert summary["executors_killed"] == 1
    assert summary["batches"] >= 2
    # Every event the hub holds is in the output exactly once; nothing acknowledged is lost.
    assert outcome["events_acknowledged"] > 0
    assert outcome["events_in_hub"] >= outcome["events_acknowledged"]
    assert outcome["rows_out"] == outcome["distinct_events_out"] == outcome["events_in_hub"]
    assert outcome["duplicate_rows"] == 0
    assert outcome["hub_events_missing"] == 0
    assert outcome["acknowledged_ids_missing"] == 0
    assert outcome["failed_sends_stored"] <= outcome["events_failed_to_send"]
    assert outcome["exactly_once"] is True
    # The samples saw the processes they describe.
    series = summary["series"]
    assert series["driver JVM RSS MB"]["end"] > 0
    assert series["executor JVMs processes"]["end"] >= 1
    assert series["checkpoint commits/ files"]["max"] >= 1
    assert series["sink _spark_metadata files"]["max"] >= 1
    assert all(s["verdict"] for s in series.values())
