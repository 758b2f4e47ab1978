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
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
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
# pipeline -> (Spark's own to divide by, the do-nothing Python one or None)
COMPARED: dict[str, tuple[str, str | None]] = {
    _PY_SOURCE: (_NATIVE_SOURCE, None),
    _PY_SINK: (_NATIVE_SOURCE, None),
    "pyrate -> noop": (_NATIVE_SOURCE, _PY_SOURCE),
    "rate-micro-batch -> pyfile": (_NATIVE_FILES, _PY_SINK),
    "rate-micro-batch -> pyeventhub": (_NATIVE_SOURCE, _PY_SINK),
    "pyeventhub -> noop": (_NATIVE_SOURCE, _PY_SOURCE),
    "pyeventhub -> pyfile": (_NATIVE_FILES, None),
    "pyeventhub -> pyfile, restart": (_NATIVE_FILES, None),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pipelines", nargs="+", choices=list(PIPELINES), default=list(PIPELINES),
        metavar="PIPELINE", help="which to run (default: all; quote each name)",
    )  # fmt: skip
    parser.add_argument("--rounds", type=int, default=3, help="warm queries per pipeline")


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
    return {"first rows": summary}


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
