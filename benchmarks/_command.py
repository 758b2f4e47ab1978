"""``./dev bench`` (``python -m benchmarks``): one subcommand per scenario, plus the local-cluster
comparison."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from benchmarks._children import bench_command, with_repository_path

__all__ = ["SCENARIOS", "main"]

# Subcommand -> module with HELP, SPARK, add_arguments(parser) and run(args) -> summary.
SCENARIOS = {
    "rate": "benchmarks.rate",
    "floor": "benchmarks.floor",
    "profile": "benchmarks.profile",
    "latency": "benchmarks.latency",
    "startup": "benchmarks.startup",
    "files-source": "benchmarks.files_source",
    "files-sink": "benchmarks.files_sink",
    "files-malformed": "benchmarks.files_malformed",
    "files-schema": "benchmarks.files_schema",
    "files-scale": "benchmarks.files_scale",
    "files-infer-memory": "benchmarks.files_infer_memory",
    "eventhubs-source": "benchmarks.eventhubs_source",
    "eventhubs-sink": "benchmarks.eventhubs_sink",
    "eventhubs-avro": "benchmarks.eventhubs_avro",
    "eventhubs-scale": "benchmarks.eventhubs_scale",
    "eventhubs-stages": "benchmarks.eventhubs_stages",
    "emulator": "benchmarks.emulator",
    "soak": "benchmarks.soak",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="./dev bench",
        description="Benchmarks that measure Spark's own source or sink (or the plain SDK "
        "client) in the same run; compare the ratios. The last line printed is JSON.",
    )
    commands = parser.add_subparsers(dest="scenario", required=True, metavar="SCENARIO")
    for name, module_name in SCENARIOS.items():
        module = importlib.import_module(module_name)
        sub = commands.add_parser(name, help=module.HELP, description=module.__doc__)
        module.add_arguments(sub)
        if module.SPARK:
            where = sub.add_mutually_exclusive_group()
            where.add_argument("--master", default="local[2]", help="master URL (local[2])")
            where.add_argument(
                "--local-cluster",
                type=int,
                metavar="N",
                help="run on local[N], then on a standalone cluster of N one-core workers "
                "started here, and print both side by side",
            )
            sub.add_argument(
                "--conf", action="append", default=[], metavar="KEY=VALUE", help="Spark setting"
            )
        sub.set_defaults(module=module)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # Every process started from here on (scenario children, Spark's JVMs and Python workers,
    # a local cluster's daemons and executors) imports this package from the repository, and
    # Spark's Python workers run this interpreter unless PYSPARK_PYTHON says otherwise (set
    # before pysparksources is imported, which would warn about PATH's python3).
    os.environ.update(with_repository_path(os.environ))
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    args = build_parser().parse_args(argv)
    if getattr(args, "local_cluster", None):
        return _compare_on_local_cluster(_without_local_cluster(argv), args.local_cluster)
    module: ModuleType = args.module
    summary: dict[str, Any] = module.run(args)
    print("\n" + json.dumps(summary))
    return 0


def _without_local_cluster(argv: list[str]) -> list[str]:
    rest, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--local-cluster":
            skip = True
        elif not arg.startswith("--local-cluster="):
            rest.append(arg)
    return rest


def _run_child(argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Run one bench command in its own process (one SparkContext each); keep its JSON line."""
    command = bench_command(*argv)
    proc = subprocess.run(
        command, stdout=subprocess.PIPE, text=True, env=with_repository_path(env), check=True
    )
    print(proc.stdout, flush=True)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    summary: dict[str, Any] = json.loads(lines[-1])
    return summary


def _compare_on_local_cluster(argv: list[str], workers: int) -> int:
    from benchmarks.cluster import StandaloneCluster, worker_env

    local = f"local[{workers}]"
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="pysparksources-bench-cluster-") as workdir:
        cluster = StandaloneCluster(Path(workdir), workers=workers)
        try:
            # One application at a time: each holds every worker's core while it runs.
            for label, master in ((local, local), ("cluster", cluster.url)):
                results[label] = _run_child([*argv, "--master", master], worker_env())
        finally:
            cluster.stop()
    figures = {label: _numbers(summary) for label, summary in results.items()}
    print(f"\n{'figure':<48} {local:>14} {'cluster':>14} {'cluster/local':>14}")
    for key, value in figures[local].items():
        other = figures["cluster"].get(key)
        if other is None:
            continue
        ratio = f"{other / value:13.2f}x" if value else f"{'-':>14}"
        print(f"{key:<48} {_shown(value):>14} {_shown(other):>14} {ratio}")
    print("\n" + json.dumps(results))
    return 0


def _numbers(value: Any, prefix: str = "") -> dict[str, float]:
    """Every number in a summary, keyed by its path (``sizes / 1000000 / pyrate``)."""
    if isinstance(value, bool):
        return {}
    if isinstance(value, (int, float)):
        return {prefix: float(value)}
    items: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value))
    found: dict[str, float] = {}
    for key, item in items:
        found.update(_numbers(item, f"{prefix} / {key}" if prefix else str(key)))
    return found


def _shown(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.2f}"
