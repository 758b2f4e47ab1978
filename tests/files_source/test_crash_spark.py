"""SIGKILL the process running a pyfile query mid-stream; a restart reads every row once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support.pyfile_source import ids_in, write_parquet

pytestmark = pytest.mark.spark
DRIVER = Path(__file__).parents[1] / "support" / "crash_drivers.py"
FILES, ROWS = 16, 50


def log_batches(log: Path) -> int:
    return sum(1 for p in log.iterdir() if p.name.split(".")[0].isdigit()) if log.exists() else 0


def test_sigkill_mid_stream_then_restart_is_exactly_once(spark: Any, tmp_path: Path) -> None:
    src, log, out, ck = (tmp_path / n for n in ("in", "log", "out", "ck"))
    base = time.time() - 1000
    for i in range(FILES):
        write_parquet(src / f"f{i:02d}.parquet", range(i * ROWS, (i + 1) * ROWS), base + i)
    args = [sys.executable, str(DRIVER), str(src), str(log), str(out), str(ck)]
    proc = subprocess.Popen(
        [*args, "continuous"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # the JVM and its Python workers die with it
    )
    try:
        deadline = time.monotonic() + 180
        while log_batches(log) < 4:
            assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
            assert time.monotonic() < deadline, "the query made no progress"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    done_before = log_batches(log)
    assert done_before < FILES, "the kill came after the stream had finished"

    result = subprocess.run([*args, "availablenow"], capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    ids = ids_in(spark, out)
    assert ids == list(range(FILES * ROWS)), "rows lost or duplicated across the crash"
