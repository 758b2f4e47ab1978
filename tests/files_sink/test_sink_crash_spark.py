"""SIGKILL the process running a pyfile sink query during a write and during a commit; after
a restart from the same checkpoint, Spark's own reader sees every row exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support.pyfile_sink import data_files, manifest_names
from support.spark_processes import worker_env

pytestmark = pytest.mark.spark
HERE = Path(__file__).parent
TOTAL, PER_BATCH, CRASH_BATCH = 3000, 1000, 1


def _driver(out: Path, ck: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    command = [sys.executable, str(HERE / "crash_driver.py"), str(out), str(ck)]
    command += [str(TOTAL), str(PER_BATCH)]
    return subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # the JVM and its Python workers die with the group
    )


def _env(**extra: str) -> dict[str, str]:
    env = worker_env()
    env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE), str(HERE.parent), env.get("PYTHONPATH", "")]
    ).rstrip(os.pathsep)
    env.update(extra)
    return env


# "write": a task is killed with part files half written and no manifest entry (the same
# state a kill at the start of commit leaves). "after_manifest": killed inside commit, after
# the manifest line exists but before Spark records the batch, so the restart replays it.
# crash_hooks also offers "before_manifest"; it adds no state beyond "write" and costs ~45 s.
@pytest.mark.parametrize("stage", ["write", "after_manifest"])
def test_sigkill_then_restart_is_exactly_once(spark: Any, tmp_path: Path, stage: str) -> None:
    out, ck, marker = tmp_path / "out", tmp_path / "ck", tmp_path / "marker"
    env = _env(
        SINK_CRASH_AT=stage, SINK_CRASH_BATCH=str(CRASH_BATCH), SINK_CRASH_MARKER=str(marker)
    )
    proc = _driver(out, ck, env)
    try:
        deadline = time.monotonic() + 180
        while not marker.exists():
            if proc.poll() is not None:
                output = proc.stdout.read().decode() if proc.stdout else ""
                pytest.fail(f"the query ended before the crash point:\n{output[-3000:]}")
            assert time.monotonic() < deadline, "the query never reached the crash point"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    committed = manifest_names(out)
    expected = [str(b) for b in range(CRASH_BATCH + (stage == "after_manifest"))]
    assert committed == expected
    written_before = set(data_files(out))
    if stage != "after_manifest":
        # The crashed batch left files that no manifest lists.
        assert any(f"-b{CRASH_BATCH}-" in f for f in written_before)

    restart = _driver(out, ck, _env())
    output, _ = restart.communicate(timeout=240)
    assert restart.returncode == 0, output.decode()[-3000:]
    assert manifest_names(out) == [str(b) for b in range(TOTAL // PER_BATCH)]
    ids = sorted(r.id for r in spark.read.parquet(str(out)).collect())
    assert ids == list(range(TOTAL)), "rows lost or duplicated across the crash"
    if stage == "after_manifest":
        # The replayed batch wrote nothing new for batch 2.
        new = set(data_files(out)) - written_before
        assert not [f for f in new if f"-b{CRASH_BATCH}-" in f]
