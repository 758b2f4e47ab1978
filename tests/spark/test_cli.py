"""The README's main job, ``pysparksources demo``, runs end to end in its own process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark


def test_demo_prints_each_batch_and_exits_cleanly() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYSPARK_PYTHON"}  # demo sets it itself
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
