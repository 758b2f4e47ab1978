"""The README's main job, ``pysparksources demo``, runs end to end in its own process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sparkprocs import worker_env

pytestmark = pytest.mark.spark


def test_demo_prints_each_batch_and_exits_cleanly() -> None:
    env = {k: v for k, v in worker_env().items() if k != "PYSPARK_PYTHON"}  # demo sets it
    result = subprocess.run(
        [sys.executable, "-m", "pysparksources.cli", "demo", "--batches", "3"],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    batch_lines = [line for line in result.stdout.splitlines() if line.startswith("batch")]
    assert len(batch_lines) >= 3
    assert "lag" in batch_lines[-1] and "latency" in batch_lines[-1]
    assert "memory sink holds 4500 rows, values 0..4499, each exactly once" in result.stdout


def run_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pysparksources.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


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
