"""pyfile's source and sink benchmarks on local[2] and on a two-executor standalone cluster.

Usage: python benchmarks/cluster_files_bench.py [--files 40] [--rows-per-file 50000]
       [--rows 2000000] [--formats parquet csv]

Starts a cluster (master + two one-core workers on 127.0.0.1, from the pyspark wheel), runs
benchmarks/files_source_bench.py and benchmarks/files_sink_bench.py once with
``--master local[2]`` and once with ``--master spark://...`` (one application at a time: each
holds both workers' cores), and prints the rows/s side by side with cluster/local ratios and
one JSON line. Both setups have two cores; the cluster adds separate executor JVMs, task
shipping over RPC and no shared Python worker cache with the driver.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from sparkprocs import StandaloneCluster, worker_env  # noqa: E402


def run(script: str, args: list[str]) -> dict[str, Any]:
    """Run one benchmark script; its output streams through and its last JSON line is kept."""
    proc = subprocess.run(
        [sys.executable, str(HERE / script), *args],
        stdout=subprocess.PIPE,
        text=True,
        env=worker_env(),
        check=True,
    )
    print(proc.stdout, flush=True)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    parsed: dict[str, Any] = json.loads(lines[-1])
    return parsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--rows-per-file", type=int, default=50_000)
    parser.add_argument("--rows", type=int, default=2_000_000, help="sink rows per batch")
    parser.add_argument("--formats", nargs="+", default=["parquet", "csv"])
    args = parser.parse_args()
    source_args = ["--files", str(args.files), "--rows-per-file", str(args.rows_per_file)]
    source_args += ["--max-files", str(max(1, args.files // 4)), "--formats", *args.formats]
    sink_args = ["--rows", str(args.rows), "--partitions", "4", "--formats", "parquet", "json"]
    os.environ.update(worker_env())
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as workdir:
        cluster = StandaloneCluster(Path(workdir))
        try:
            for label, master in (("local[2]", "local[2]"), ("cluster", cluster.url)):
                results[label] = {
                    "source": run("files_source_bench.py", [*source_args, "--master", master]),
                    "sink": run("files_sink_bench.py", [*sink_args, "--master", master]),
                }
        finally:
            cluster.stop()

    local, remote = results["local[2]"], results["cluster"]
    print(f"\n{'rows/s (M)':<28} {'local[2]':>9} {'cluster':>9} {'cluster/local':>14}")
    table: dict[str, list[float]] = {}
    for lrow, crow in zip(local["source"]["streams"], remote["source"]["streams"], strict=True):
        for kind in ("native", "pyfile", "ceiling"):
            table[f"source {lrow['format']} {kind}"] = [lrow[f"{kind}_rps"], crow[f"{kind}_rps"]]
    for key in local["sink"]:
        if key.endswith(("native", "pyfile")) or key == "discard":
            table[f"sink {key}"] = [local["sink"][key], remote["sink"][key]]
    for name, (lv, cv) in table.items():
        print(f"{name:<28} {lv / 1e6:9.2f} {cv / 1e6:9.2f} {cv / lv:13.2f}x")
    print(json.dumps({name: {"local": lv, "cluster": cv} for name, (lv, cv) in table.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
