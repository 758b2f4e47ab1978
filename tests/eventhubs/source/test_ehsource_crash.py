"""SIGKILL the process running pyeventhub -> pyfile mid-stream; after a restart from the same
checkpoint, Spark's own parquet reader sees every event exactly once. The batches are small,
so each is one read task reading both partitions at once (the default packing)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support import crash_drivers
from support.eventhubs import send

pytestmark = pytest.mark.spark
# Six batches: the kill after the first commit leaves most of the stream to the restart.
PARTITIONS, PER_PARTITION, PER_TRIGGER = 2, 300, 100
BATCHES = PARTITIONS * PER_PARTITION // PER_TRIGGER


def _committed_batches(out: Path) -> list[str]:
    log = out / "_spark_metadata"
    return sorted(p.name for p in log.iterdir() if p.name.isdigit()) if log.exists() else []


@pytest.mark.lines  # exactly once on every Spark line (tests/lines)
@pytest.mark.slow
def test_sigkill_mid_stream_then_restart_is_exactly_once(
    spark: Any, eventhubs_emulator_factory: Any, tmp_path: Path
) -> None:
    emulator = eventhubs_emulator_factory(hubs={"crash": PARTITIONS})
    conn = emulator.connection_string("crash")
    sent = {(str(pid), i): f"p{pid}-{i}" for pid in range(PARTITIONS) for i in range(PER_PARTITION)}
    for pid in range(PARTITIONS):
        send(conn, [f"p{pid}-{i}" for i in range(PER_PARTITION)], partition_id=str(pid))
    out, ck, stats = tmp_path / "out", tmp_path / "ck", tmp_path / "stats"
    env = {"EH_CONN": conn, "EH_OPTIONS": json.dumps({"taskStatsPath": str(stats)})}

    first = crash_drivers.start("pyeventhub", out, ck, PER_TRIGGER, env=env)
    # kill once the first batch is in the manifest
    crash_drivers.kill_when(first, lambda: bool(_committed_batches(out)), "any batch committed")
    before = _committed_batches(out)
    assert 1 <= len(before) < BATCHES, f"not killed mid-stream: {before} of {BATCHES} batches"

    crash_drivers.restart_here(spark, "pyeventhub", out, ck, PER_TRIGGER, env=env)
    assert _committed_batches(out) == [str(b) for b in range(BATCHES)]
    rows = spark.read.parquet(str(out)).collect()
    got = [((r.partition, r.sequenceNumber), r.body) for r in rows]
    assert len(got) == len(sent), f"{len(got)} rows for {len(sent)} events"
    assert dict(got) == sent, "events lost, duplicated or altered across the crash"
    lines = [json.loads(line) for f in stats.iterdir() for line in f.read_text().splitlines()]
    assert lines and all(line["rangesInTask"] == PARTITIONS for line in lines), lines[:4]
