"""SIGKILL the process running pyeventhub -> pyfile mid-stream; after a restart from the same
checkpoint, Spark's own parquet reader sees every event exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support.pyeventhub import send
from support.spark_processes import worker_env

pytestmark = pytest.mark.spark
HERE = Path(__file__).parent
PARTITIONS, PER_PARTITION, PER_TRIGGER = 2, 1500, 500
BATCHES = PARTITIONS * PER_PARTITION // PER_TRIGGER


def _driver(out: Path, ck: Path, conn: str) -> subprocess.Popen[bytes]:
    env = worker_env()
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["EH_CONN"] = conn
    return subprocess.Popen(
        [sys.executable, str(HERE / "crash_eh_driver.py"), str(out), str(ck), str(PER_TRIGGER)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # the JVM and its Python workers die with the group
    )


def _committed_batches(out: Path) -> list[str]:
    log = out / "_spark_metadata"
    return sorted(p.name for p in log.iterdir() if p.name.isdigit()) if log.exists() else []


def test_sigkill_mid_stream_then_restart_is_exactly_once(
    spark: Any, eventhubs_emulator_factory: Any, tmp_path: Path
) -> None:
    emulator = eventhubs_emulator_factory(hubs={"crash": PARTITIONS})
    conn = emulator.connection_string("crash")
    sent = {(str(pid), i): f"p{pid}-{i}" for pid in range(PARTITIONS) for i in range(PER_PARTITION)}
    for pid in range(PARTITIONS):
        send(conn, [f"p{pid}-{i}" for i in range(PER_PARTITION)], partition_id=str(pid))
    out, ck = tmp_path / "out", tmp_path / "ck"

    first = _driver(out, ck, conn)
    try:
        deadline = time.monotonic() + 180
        while not _committed_batches(out):  # kill once the first batch is in the manifest
            if first.poll() is not None:
                output = first.stdout.read().decode() if first.stdout else ""
                pytest.fail(f"the query ended before any batch committed:\n{output[-3000:]}")
            assert time.monotonic() < deadline, "no batch committed in 180 s"
            time.sleep(0.05)
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(30)
    before = _committed_batches(out)
    assert 1 <= len(before) < BATCHES, f"not killed mid-stream: {before} of {BATCHES} batches"

    restart = _driver(out, ck, conn)
    output, _ = restart.communicate(timeout=240)
    assert restart.returncode == 0, output.decode()[-3000:]
    assert _committed_batches(out) == [str(b) for b in range(BATCHES)]
    rows = spark.read.parquet(str(out)).collect()
    got = [((r.partition, r.sequenceNumber), r.body) for r in rows]
    assert len(got) == len(sent), f"{len(got)} rows for {len(sent)} events"
    assert dict(got) == sent, "events lost, duplicated or altered across the crash"
