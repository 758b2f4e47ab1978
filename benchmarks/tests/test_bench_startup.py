"""The bookkeeping of the start-up benchmark, on made-up probe results."""

from __future__ import annotations

import argparse

import pytest

from benchmarks import startup
from benchmarks._startup_probe import PIPELINES


def _result(cold: float | None, warm: float, trigger: float = 0.1) -> dict[str, object]:
    def run(seconds: float) -> dict[str, object]:
        return {"first_rows_s": seconds, "trigger_at_s": trigger, "phases_ms": {"latestOffset": 7}}

    return {"cold": None if cold is None else run(cold), "warm": run(warm)}


def test_every_compared_pipeline_is_one_the_probe_knows() -> None:
    for name, (native, python) in startup.COMPARED.items():
        assert name in PIPELINES and native in PIPELINES
        assert python is None or python in PIPELINES


def test_figures_divide_by_sparks_own_and_by_the_python_no_op() -> None:
    results = {
        "rate-micro-batch -> noop": _result(2.0, 0.5),
        "python reference -> noop": _result(8.0, 2.0),
        "pyrate -> noop": _result(9.0, 2.5, trigger=1.5),
    }
    figures = startup._figures("pyrate -> noop", results)
    assert figures["cold s"] == 9.0 and figures["warm s"] == 2.5
    assert figures["cold x native"] == 4.5 and figures["cold x python"] == 1.12
    assert figures["warm x native"] == 5.0 and figures["warm x python"] == 1.25
    assert figures["warm trigger at s"] == 1.5 and figures["warm latestOffset ms"] == 7


def test_a_restart_has_no_cold_figure_and_no_ratio_for_it() -> None:
    results = {
        "rate-micro-batch -> parquet": _result(4.0, 0.5),
        "pyeventhub -> pyfile, restart": _result(None, 3.0),
    }
    figures = startup._figures("pyeventhub -> pyfile, restart", results)
    assert figures["cold s"] is None and figures["cold x native"] is None
    assert figures["warm x native"] == 6.0 and figures["warm x python"] is None


def test_choosing_a_pipeline_brings_the_ones_it_is_compared_with(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    probed: list[str] = []

    def probe(name: str, args: argparse.Namespace, env: dict[str, str]) -> dict[str, object]:
        probed.append(name)
        return _result(1.0, 1.0)

    monkeypatch.setattr(startup, "_probe", probe)
    args = argparse.Namespace(
        pipelines=["rate-micro-batch -> pyfile"], rounds=1, master="x", job_rounds=0
    )
    summary = startup.run(args)
    # Transitively: the Python discard sink is itself divided by rate-micro-batch -> noop.
    assert probed == [
        "rate-micro-batch -> noop",
        "rate-micro-batch -> parquet",
        "rate-micro-batch -> python discard",
        "rate-micro-batch -> pyfile",
    ]
    assert list(summary["first rows"]) == probed
    assert "rate-micro-batch -> pyfile" in capsys.readouterr().out


def test_the_cold_job_figures_are_medians_and_their_ratio() -> None:
    def run(process: float) -> dict[str, float]:
        return {"process_s": process, "session_s": 4.0, "query_s": process - 5.0}

    runs = {
        "spark": [run(9.0), run(12.0), run(10.0)],
        "floor": [run(8.0), run(8.0), run(7.0)],
        "sdk": [run(2.0), run(2.5), run(1.0)],
    }
    job = startup.job_figures(runs)
    assert job["spark job s"] == 10.0 and job["sdk script s"] == 2.0 and job["floor job s"] == 8.0
    assert job["spark x sdk"] == 5.0 and job["spark x floor"] == 1.25 and job["floor x sdk"] == 4.0
    assert job["spark session s"] == 4.0 and job["spark query s"] == 5.0 and job["rounds"] == 3
