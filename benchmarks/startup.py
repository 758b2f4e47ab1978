"""How long a query takes to its first rows: in a fresh session (the first query pays for
Spark's lazy start-up) and as a new query in a running one, for our sources and sinks beside
Spark's own and beside Python reference sources and sinks that do nothing.

Each pipeline runs in a process of its own (a fresh JVM); its first query gives the cold
figure, the median of ``--rounds`` queries after it the warm one. A figure is the time from
``start()`` to the end of the first batch with rows; "trigger" is when that batch's trigger
began (before it: the query's own start-up, e.g. a Python source's planner process) and
"latestOffset" that batch's phase of the same name. Ratios divide by Spark's own pipeline
with the same sink (sources: ``rate-micro-batch -> noop``) and by the do-nothing Python one.
The Event Hubs emulator runs in its own process with 1,500 events in 2 partitions.

Then a scheduled job, cold (``--job-rounds`` times, 0 skips it): a new process that starts a
JVM and reads a hub of 1,000 events (2 partitions, its own emulator) with pyeventhub -> pyfile
under ``trigger(availableNow=True)``, against the script a user would write with azure-eventhub
alone (read the partitions' ends, receive to them, write one parquet file) and against the same
Spark job with the do-nothing Python source (Spark's floor for any Python source): each process
timed from spawn to exit (``_cold_job``), medians and their ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from typing import Any

from benchmarks._eventhubs import emulator_process, fill_backlog
from benchmarks._latency_pieces import CONNECTION_ENV
from benchmarks._startup_probe import PIPELINES

__all__ = ["HELP", "SPARK", "add_arguments", "run"]

HELP = "time to a new query's first rows, cold and warm, vs Spark's own and Python no-ops"
SPARK = True
_NATIVE_SOURCE, _NATIVE_FILES = "rate-micro-batch -> noop", "rate-micro-batch -> parquet"
_PY_SOURCE, _PY_SINK = "python reference -> noop", "rate-micro-batch -> python discard"
_PY_FILES = "python reference -> pyfile"
_JOB_EVENTS = 1000
# pipeline -> (Spark's own to divide by, the do-nothing Python one or None)
COMPARED: dict[str, tuple[str, str | None]] = {
    _PY_SOURCE: (_NATIVE_SOURCE, None),
    _PY_SINK: (_NATIVE_SOURCE, None),
    _PY_FILES: (_NATIVE_FILES, None),
    "pyrate -> noop": (_NATIVE_SOURCE, _PY_SOURCE),
    "rate-micro-batch -> pyfile": (_NATIVE_FILES, _PY_SINK),
    "rate-micro-batch -> pyeventhub": (_NATIVE_SOURCE, _PY_SINK),
    "pyeventhub -> noop": (_NATIVE_SOURCE, _PY_SOURCE),
    "pyeventhub -> pyfile": (_NATIVE_FILES, _PY_FILES),
    "pyeventhub -> pyfile, restart": (_NATIVE_FILES, None),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pipelines", nargs="+", choices=list(PIPELINES), default=list(PIPELINES),
        metavar="PIPELINE", help="which to run (default: all; quote each name)",
    )  # fmt: skip
    parser.add_argument("--rounds", type=int, default=3, help="warm queries per pipeline")
    parser.add_argument(
        "--job-rounds", type=int, default=3,
        help="cold AvailableNow jobs (and SDK-only scripts) timed; 0 skips them",
    )  # fmt: skip


def _probe(pipeline: str, args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    command = [
        sys.executable, "-m", "benchmarks._startup_probe", pipeline,
        str(args.rounds), args.master, *args.conf,
    ]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{pipeline}: the probe failed\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Every chosen pipeline (with the ones it is compared with) in its own process."""
    chosen = set(args.pipelines)
    while missing := {o for n in chosen for o in COMPARED.get(n, ()) if o and o not in chosen}:
        chosen |= missing
    ordered = [name for name in PIPELINES if name in chosen]
    with ExitStack() as stack:
        env = dict(os.environ)
        if any("pyeventhub" in name for name in ordered):
            conn = stack.enter_context(emulator_process("startup", 2))
            fill_backlog(conn, 2, 1500, 100)
            env[CONNECTION_ENV] = conn
        results = {name: _probe(name, args, env) for name in ordered}
    summary = {name: _figures(name, results) for name in ordered}
    _print(summary)
    found: dict[str, Any] = {"first rows": summary}
    if args.job_rounds > 0:
        found["cold job"] = _cold_jobs(args)
        _print_jobs(found["cold job"])
    return found


def _timed_job(kind: str, args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    """One ``_cold_job`` process, timed from spawn to exit; it must write every event."""
    with tempfile.TemporaryDirectory(prefix=f"pysparksources-cold-{kind}-") as out:
        command = [sys.executable, "-m", "benchmarks._cold_job", kind, out]
        if kind != "sdk":
            command += [args.master, *args.conf]
        began = time.monotonic()
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
        elapsed = time.monotonic() - began
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"the cold {kind} job failed\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    if result["rows"] != _JOB_EVENTS:
        raise RuntimeError(f"the cold {kind} job wrote {result['rows']} of {_JOB_EVENTS} events")
    return {**result, "process_s": elapsed}


def _cold_jobs(args: argparse.Namespace) -> dict[str, Any]:
    """Medians of ``--job-rounds`` cold runs of each job, taken in turns on one hub."""
    runs: dict[str, list[dict[str, Any]]] = {"spark": [], "floor": [], "sdk": []}
    with emulator_process("coldjob", 2) as conn:
        fill_backlog(conn, 2, _JOB_EVENTS, 100)
        env = {**os.environ, CONNECTION_ENV: conn}
        for _ in range(args.job_rounds):
            for kind, found in runs.items():
                found.append(_timed_job(kind, args, env))
    return job_figures(runs)


def job_figures(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Each job's median process seconds (and the Spark jobs' session and query parts), and
    the pyeventhub job's over the SDK script's and over the do-nothing Python source's job."""

    def median(kind: str, key: str) -> float:
        return round(float(statistics.median(run[key] for run in runs[kind])), 2)

    spark, floor, sdk = (median(kind, "process_s") for kind in ("spark", "floor", "sdk"))
    return {
        "events": _JOB_EVENTS,
        "rounds": len(runs["spark"]),
        "spark job s": spark,
        "spark session s": median("spark", "session_s"),
        "spark query s": median("spark", "query_s"),
        "floor job s": floor,
        "floor query s": median("floor", "query_s"),
        "sdk script s": sdk,
        "spark x sdk": _ratio(spark, sdk),
        "spark x floor": _ratio(spark, floor),
        "floor x sdk": _ratio(floor, sdk),
    }


def _seconds(result: dict[str, Any] | None) -> float | None:
    return None if result is None else round(result["first_rows_s"], 2)


def _ratio(mine: float | None, other: float | None) -> float | None:
    return None if mine is None or not other else round(mine / other, 2)


def _figures(name: str, results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    mine = results[name]
    native, python = COMPARED.get(name, (None, None))
    figures: dict[str, Any] = {}
    for when in ("cold", "warm"):
        seconds = _seconds(mine[when])
        figures[f"{when} s"] = seconds
        for label, other in (("native", native), ("python", python)):
            base = _seconds(results[other][when]) if other else None
            figures[f"{when} x {label}"] = _ratio(seconds, base)
    warm = mine["warm"]
    figures["warm trigger at s"] = round(warm["trigger_at_s"], 2)
    figures["warm latestOffset ms"] = warm["phases_ms"].get("latestOffset")
    return figures


def _cell(value: Any, unit: str) -> str:
    return "-" if value is None else f"{value:.2f}{unit}"


def _print(summary: dict[str, dict[str, Any]]) -> None:
    print(
        f"\n{'pipeline':<36}{'cold':>8}{'x native':>10}{'x python':>10}{'warm':>8}"
        f"{'x native':>10}{'x python':>10}{'trigger':>9}{'latestOff':>11}"
    )
    for name, f in summary.items():
        print(
            f"{name:<36}{_cell(f['cold s'], ' s'):>8}{_cell(f['cold x native'], 'x'):>10}"
            f"{_cell(f['cold x python'], 'x'):>10}{_cell(f['warm s'], ' s'):>8}"
            f"{_cell(f['warm x native'], 'x'):>10}{_cell(f['warm x python'], 'x'):>10}"
            f"{_cell(f['warm trigger at s'], ' s'):>9}{f['warm latestOffset ms']:>8} ms"
        )


def _print_jobs(job: dict[str, Any]) -> None:
    print(
        f"\ncold scheduled job, {job['events']:,} events, median of {job['rounds']}: "
        f"pyeventhub -> pyfile AvailableNow {job['spark job s']:.2f} s (session "
        f"{job['spark session s']:.2f} s, query {job['spark query s']:.2f} s); do-nothing Python "
        f"source -> pyfile {job['floor job s']:.2f} s (query {job['floor query s']:.2f} s); "
        f"SDK-only script {job['sdk script s']:.2f} s\n  pyeventhub job x SDK script "
        f"{job['spark x sdk']:.2f}x, x do-nothing job {job['spark x floor']:.2f}x; do-nothing "
        f"job x SDK script {job['floor x sdk']:.2f}x"
    )
