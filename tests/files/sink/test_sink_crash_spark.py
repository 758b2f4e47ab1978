"""SIGKILL the process running a pyfile sink query during a write and during a commit; after
a restart from the same checkpoint, Spark's own reader sees every row exactly once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from support import crash_drivers
from support.pyfile_sink import data_files, manifest_names

pytestmark = pytest.mark.spark
TOTAL, PER_BATCH, CRASH_BATCH = 3000, 1000, 1


# "write": a task is killed with part files half written and no manifest entry (the same
# state a kill at the start of commit leaves). "after_manifest": killed inside commit, after
# the manifest line exists but before Spark records the batch, so the restart replays it.
# crash_hooks also offers "before_manifest"; it adds no state beyond "write" and costs ~45 s.
@pytest.mark.parametrize("stage", ["write", "after_manifest"])
@pytest.mark.lines  # exactly once on every Spark line (tests/lines)
@pytest.mark.slow
def test_sigkill_then_restart_is_exactly_once(spark: Any, tmp_path: Path, stage: str) -> None:
    out, ck, marker = tmp_path / "out", tmp_path / "ck", tmp_path / "marker"
    crash = {"SINK_CRASH_AT": stage, "SINK_CRASH_BATCH": str(CRASH_BATCH)}
    proc = crash_drivers.start(
        "pyfile-sink", out, ck, TOTAL, PER_BATCH, env={**crash, "SINK_CRASH_MARKER": str(marker)}
    )
    crash_drivers.kill_when(proc, marker.exists, "the crash point")
    committed = manifest_names(out)
    expected = [str(b) for b in range(CRASH_BATCH + (stage == "after_manifest"))]
    assert committed == expected
    written_before = set(data_files(out))
    if stage != "after_manifest":
        # The crashed batch left files that no manifest lists.
        assert any(f"-b{CRASH_BATCH}-" in f for f in written_before)

    crash_drivers.restart_here(spark, "pyfile-sink", out, ck, TOTAL, PER_BATCH)
    assert manifest_names(out) == [str(b) for b in range(TOTAL // PER_BATCH)]
    ids = sorted(r.id for r in spark.read.parquet(str(out)).collect())
    assert ids == list(range(TOTAL)), "rows lost or duplicated across the crash"
    if stage == "after_manifest":
        # The replayed batch wrote no new file for the crashed batch.
        new = set(data_files(out)) - written_before
        assert not [f for f in new if f"-b{CRASH_BATCH}-" in f]
