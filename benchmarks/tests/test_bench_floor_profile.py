"""The bookkeeping of the floor and profile benchmarks, on made-up progress and real processes."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from benchmarks import floor, profile
from benchmarks._procfs import cpu_seconds


def _progress(trigger: float, add_batch: float) -> dict[str, object]:
    return {"durationMs": {"triggerExecution": trigger, "addBatch": add_batch, "walCommit": 5}}


def test_phase_medians_count_a_missing_phase_as_zero() -> None:
    phases = floor.Phases()
    for trigger, add_batch in ((100, 40), (300, 60), (200, 50)):
        phases.add(_progress(trigger, add_batch))
    medians = phases.medians()
    assert medians["trigger"] == 200
    assert medians["addBatch"] == 50
    assert medians["walCommit"] == 5
    assert medians["latestOffset"] == 0


def test_report_divides_each_candidate_by_its_native_query(
    capsys: pytest.CaptureFixture[str],
) -> None:
    noop: tuple[str, dict[str, str]] = ("noop", {})
    native = floor.Candidate("native", "source", "", ("rate-micro-batch", {}, None), noop)
    ours = floor.Candidate("ours", "source", "native", ("pyrate", {}, None), noop)
    measured = {"native": floor.Phases(), "ours": floor.Phases()}
    measured["native"].add(_progress(80, 30))
    measured["ours"].add(_progress(100, 50))
    args = argparse.Namespace(master="local[2]", batches=1, rounds=1)
    summary = floor._report([native, ours], measured, args)
    assert summary["ratios"] == {"ours": 1.25}
    assert "1.25x" in capsys.readouterr().out


def test_one_row_files_are_oldest_first_with_one_row_each(tmp_path: Path) -> None:
    floor._one_row_files(tmp_path / "files", 3)
    files = sorted((tmp_path / "files").iterdir())
    assert [pq.read_table(f).num_rows for f in files] == [1, 1, 1]
    times = [f.stat().st_mtime for f in files]
    assert times == sorted(times) and len(set(times)) == 3


def test_python_cpu_counts_new_processes_in_full_and_old_ones_by_difference() -> None:
    before = profile.Sample(jvm=1.0, python={10: 2.0, 11: 1.0}, batch=1)
    after = profile.Sample(jvm=3.0, python={10: 2.5, 12: 0.75}, batch=4)
    assert profile._python_delta(before, after) == pytest.approx(1.25)


def test_cpu_seconds_count_a_processs_work_and_are_zero_once_it_is_gone() -> None:
    code = "import sys; sum(range(20_000_000)); print('done', flush=True); sys.stdin.read()"
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "done\n"
        assert cpu_seconds(child.pid) >= 0.05
    finally:
        child.communicate("")
    assert cpu_seconds(child.pid) == 0.0
