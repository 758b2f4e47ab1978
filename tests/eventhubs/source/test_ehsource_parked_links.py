"""Receivers parked by many Python workers on one machine stay within Event Hubs' five readers
per partition and consumer group (``_parked_links``), against the emulator, without Spark."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from pysparksources.eventhubs import _parked_links
from pysparksources.eventhubs._parked_links import Slot, ask_to_close, is_asked_to_close, parked
from pysparksources_emulator import EventHubsEmulator
from support.eventhubs import send
from support.parked_workers import context, worker

WORKERS = 7  # more Python workers than Event Hubs' five readers per partition


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(_parked_links, "_root", lambda: tmp_path)
    return tmp_path


def test_ask_to_close_marks_the_most_recently_parked_and_drops_dead_processes(
    registry: Path,
) -> None:
    slot = Slot("sb://ns/hub", "$Default", "3")
    assert Slot("sb://ns/hub", "$DEFAULT", "3").folder == slot.folder  # groups ignore case
    assert Slot("sb://ns/other", "$Default", "3").folder != slot.folder
    sleeper = subprocess.Popen(["sleep", "30"])
    dead = subprocess.Popen(["true"])
    dead.wait()
    try:
        parked(slot, "old")
        (slot.folder / f"{sleeper.pid}-other").touch()
        parked(slot, "new")
        (slot.folder / f"{dead.pid}-gone").touch()
        now = time.time()
        for name, age in ((f"{os.getpid()}-old", 60), (f"{sleeper.pid}-other", 30)):
            os.utime(slot.folder / name, (now - age, now - age))
        # Spark's idle workers are first in, first out: the longest parked is reused next.
        assert ask_to_close(slot, keep=2) == 1
        assert is_asked_to_close(slot, "new") and not is_asked_to_close(slot, "old")
        assert not (slot.folder / f"{sleeper.pid}-other.close").exists()
        assert not (slot.folder / f"{dead.pid}-gone").exists()
        parked(slot, "new")  # parked again: the mark is gone with it
        assert not is_asked_to_close(slot, "new")
        assert ask_to_close(slot, keep=0) == 3
    finally:
        sleeper.kill()


def _run(
    conn: str, options: dict[str, str], batches: int, per_batch: int
) -> list[tuple[int, str | None]]:
    """Hand consecutive ranges of partition 0 to the workers in turn, one at a time, as Spark
    hands a partition's batches to whichever worker is idle."""
    ctx = context()
    channels = [(ctx.Queue(), ctx.Queue()) for _ in range(WORKERS)]
    procs = [
        ctx.Process(target=worker, args=({"connectionString": conn, **options}, r, out))
        for r, out in channels
    ]
    for proc in procs:
        proc.start()
    reports = []
    try:
        for batch in range(batches):
            ranges, results = channels[batch % WORKERS]
            ranges.put(("0", batch * per_batch, (batch + 1) * per_batch))
            reports.append(results.get(timeout=120))
    finally:
        for ranges, _ in channels:
            ranges.put(None)
        for proc in procs:
            proc.join(timeout=30)
            if proc.is_alive():
                proc.kill()
    return reports


@pytest.mark.slow
def test_seven_workers_reading_one_partition_in_turn_stay_within_five_readers(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    # Before: each worker parked its own receiver, and the sixth worker's link was refused
    # (amqp:resource-limit-exceeded) until a parked one idled out: its task failed after
    # receiverTimeout. Three rounds over the seven workers, each batch on the next worker, as
    # Spark's first-in-first-out pool of idle workers hands them out.
    conn = eventhubs_emulator.connection_string("test")
    per_batch, batches = 20, 3 * WORKERS
    send(conn, [f"e{i}" for i in range(per_batch * batches)], partition_id="0")
    options = {"receiverTimeout": "8s", "prefetchCount": "10", "receiveBatchSize": "10"}
    reports = _run(conn, options, batches, per_batch)
    errors = [error for _, error in reports if error]
    assert not errors, errors
    assert [events for events, _ in reports] == [per_batch] * batches
