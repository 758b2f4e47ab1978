"""SIGKILL the process running a pyfile query mid-stream; a restart reads every row once."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from support import crash_drivers
from support.pyfile_source import ids_in, write_parquet

pytestmark = pytest.mark.spark
# The kill comes after 4 of the 8 one-file batches: half the stream is left for the restart
# to read, batch by batch, in this process.
FILES, ROWS = 8, 50


def log_batches(log: Path) -> int:
    return sum(1 for p in log.iterdir() if p.name.split(".")[0].isdigit()) if log.exists() else 0


@pytest.mark.lines  # exactly once on every Spark line (tests/lines)
@pytest.mark.slow
def test_sigkill_mid_stream_then_restart_is_exactly_once(spark: Any, tmp_path: Path) -> None:
    src, log, out, ck = (tmp_path / n for n in ("in", "log", "out", "ck"))
    base = time.time() - 1000
    for i in range(FILES):
        write_parquet(src / f"f{i:02d}.parquet", range(i * ROWS, (i + 1) * ROWS), base + i)
    args = [src, log, out, ck]
    proc = crash_drivers.start("pyfile-source", *args, "continuous")
    crash_drivers.kill_when(proc, lambda: log_batches(log) >= 4, "4 batches in the log")
    done_before = log_batches(log)
    assert done_before < FILES, "the kill came after the stream had finished"

    crash_drivers.restart_here(spark, "pyfile-source", *args, "availablenow")
    ids = ids_in(spark, out)
    assert ids == list(range(FILES * ROWS)), "rows lost or duplicated across the crash"
