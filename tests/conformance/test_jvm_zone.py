"""The matrix once more in a driver whose JVM default zone is not Python's (its own process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from harness import RESULTS, Cell, failures
from jvm_zone_driver import LABEL, PYTHON_ZONE

pytestmark = [pytest.mark.spark, pytest.mark.slow]  # its own JVM: about 3 minutes


def test_matrix_where_the_jvm_zone_differs_from_python_tz(tmp_path: Path) -> None:
    from benchmarks.cluster import worker_env

    out = tmp_path / "cells.jsonl"
    env = worker_env() | {"TZ": PYTHON_ZONE}
    driver = Path(__file__).with_name("jvm_zone_driver.py")
    proc = subprocess.run(
        [sys.executable, str(driver), str(out), str(tmp_path / "work")],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    cells = [Cell(**json.loads(line)) for line in out.read_text().splitlines()]
    assert cells and {c.zone for c in cells} == {LABEL}
    RESULTS.extend(cells)
    problems = failures(cells)
    assert not problems, "\n".join(problems)
