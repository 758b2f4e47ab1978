"""The README's main job, ``pysparksources demo``, runs end to end in its own process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.spark_processes import worker_env

pytestmark = pytest.mark.spark


@pytest.mark.slow
def test_demo_prints_n_batches_with_rows_and_a_summary() -> None:
    env = {k: v for k, v in worker_env().items() if k != "PYSPARK_PYTHON"}  # demo sets it
    result = subprocess.run(
        [sys.executable, "-m", "pysparksources.cli", "demo", "--batches", "2"],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    lines = result.stdout.splitlines()
    produced = [line for line in lines if line.startswith("pyrate -> pyeventhub")]
    consumed = [line for line in lines if line.startswith("pyeventhub -> pyfile")]

    def rows(line: str) -> int:
        return int(line.split(":")[1].split()[0])

    # --batches 2: exactly two batches written, each (the first included) with rows.
    assert [rows(line) for line in produced] == [1500, 1500], result.stdout
    assert consumed and all(rows(line) > 0 for line in consumed), result.stdout
    assert sum(rows(line) for line in consumed) == 3000
    assert all("latency" in line and "lag" in line for line in produced + consumed)
    # Lag comes from pysparksources.monitoring.LagListener: rows for pyrate, events and
    # seconds behind the newest enqueued time for pyeventhub.
    assert all(line.endswith(" rows") for line in produced), result.stdout
    assert all(" events, >= " in line and "behind the newest" in line for line in consumed)
    summary = result.stdout.split("\nSummary\n", 1)[1]
    assert "rows in           3000 (pyrate, 2 batches)" in summary
    assert (
        f"rows out          3000 (Spark's parquet reader; the reader took {len(consumed)}"
        in summary
    )
    assert summary.count(" ms, p95 ") == 2
    assert "lag at the end    0 events" in summary
    assert "exactly once      yes: values 0..2999, each exactly once" in summary
    assert len(summary.splitlines()) <= 10


def run_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pysparksources.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


@pytest.mark.slow
def test_doctor_passes_locally_and_against_a_connect_server(connect_server: object) -> None:
    env = worker_env()
    result = run_cli("doctor", "--connect", connect_server.url, env=env)  # type: ignore[attr-defined]
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert "[FAIL]" not in result.stdout
    for check in ("Java", "worker Python", "executors import the package", "Spark Connect"):
        assert f"[ok] {check}" in result.stdout
    assert "auto-registers: " in result.stdout and "pyrate" in result.stdout


def test_doctor_names_a_broken_worker_python_and_the_fix() -> None:
    result = run_cli("doctor", env=worker_env() | {"PYSPARK_PYTHON": "/bin/false"})
    assert result.returncode == 1
    assert "[FAIL] worker Python: PYSPARK_PYTHON = /bin/false" in result.stdout
    assert f"fix: export PYSPARK_PYTHON={sys.executable}" in result.stdout
