"""The soak benchmark's pure pieces: its schedule, its growth verdict, its ledger, /proc."""

from __future__ import annotations

import math
import os
import socket
import threading
from pathlib import Path

from benchmarks._procfs import descendants, figures
from benchmarks._soak_report import Series, slope, verdict
from benchmarks._soak_sender import read_ledger
from benchmarks.soak import disruptions


def test_disruptions_alternate_and_stay_inside_the_run() -> None:
    plan = disruptions(600, restarts=2, kills=1)
    assert [kind for _, kind in plan] == ["restart", "kill", "restart"]
    assert [t for t, _ in plan] == [120.0, 270.0, 420.0]
    assert disruptions(60, restarts=1, kills=0) == [(24.0, "restart")]
    assert disruptions(60, restarts=0, kills=0) == []


def test_verdict_tells_flat_levelling_and_growing_apart() -> None:
    times = [float(t) for t in range(0, 600, 30)]
    assert verdict([(t, 500.0 + (t % 60) / 10) for t in times], 64) == "flat"
    # Growth that slows down (a heap settling) and growth that stops at half time.
    assert verdict([(t, 2000 * (1 - math.exp(-t / 150))) for t in times], 64) == "levelling"
    assert verdict([(t, min(t, 300.0) * 2) for t in times], 64) == "flat"
    assert verdict([(t, 100.0 + t) for t in times], 64) == "GROWS"
    # A process replaced mid-run (an executor killed) reads low twice, then as before.
    dip = {360.0: 450.0, 390.0: 550.0}
    assert verdict([(t, dip.get(t, 900.0 + t / 100)) for t in times], 64) == "flat"
    assert verdict([(t, float(t)) for t in times[:3]], 64) == "too few samples"
    assert slope([(0.0, 1.0), (10.0, 21.0)]) == 2.0
    grows = Series("files", 5, "grows by design")
    grows.add(0, 1)
    grows.add(10, 9)
    assert grows.summary() == {
        "start": 1,
        "end": 9,
        "max": 9,
        "verdict": "grows by design",
        "samples": [[0, 1], [10, 9]],
    }


def test_ledger_counts_acknowledged_and_failed_ranges(tmp_path: Path) -> None:
    path = tmp_path / "ledger"
    path.write_text("ack 0 3\nfail 3 2\nack 5 1\n")
    ledger = read_ledger(path)
    assert ledger.acknowledged_count == 4
    assert ledger.failed_count == 2
    assert ledger.acknowledged_ids() == {0, 1, 2, 5}
    assert read_ledger(tmp_path / "absent").acknowledged_count == 0


def test_procfs_sees_this_process_threads_and_sockets() -> None:
    before = figures(os.getpid())
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        during = figures(os.getpid())
    stop.set()
    thread.join()
    assert before.rss_bytes > 0 and before.processes == 1
    assert during.threads == before.threads + 1
    assert during.sockets == before.sockets + 1
    assert figures(2**22 + 7).processes == 0  # beyond pid_max: no such process
    assert os.getpid() in descendants(os.getppid())
