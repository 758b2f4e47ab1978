"""pyeventhub's source and sink benchmarks on local[2] and on a two-executor standalone cluster.

Usage: python benchmarks/cluster_eventhubs_bench.py [--events 100000] [--rounds 2]

Starts a cluster (master + two one-core workers on 127.0.0.1, from the pyspark wheel), runs
benchmarks/eventhubs_source_bench.py and benchmarks/eventhubs_sink_bench.py with
``--master local[2]`` and then with ``--master spark://...`` (each starts its own emulator
process on 127.0.0.1, which the executors reach), and prints events/s side by side, each with
its ratio to the plain SDK client measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from cluster_files_bench import run  # noqa: E402
from sparkprocs import StandaloneCluster, worker_env  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    common = ["--events", str(args.events), "--rounds", str(args.rounds)]
    source_only = ["--max-per-trigger", "0"]  # the one-batch variant: the comparable figure
    os.environ.update(worker_env())
    results = {}
    with tempfile.TemporaryDirectory() as workdir:
        cluster = StandaloneCluster(Path(workdir))
        try:
            for label, master in (("local[2]", "local[2]"), ("cluster", cluster.url)):
                results[label] = {
                    "source": run(
                        "eventhubs_source_bench.py", [*common, *source_only, "--master", master]
                    ),
                    "sink": run("eventhubs_sink_bench.py", [*common, "--master", master]),
                }
        finally:
            cluster.stop()
    print(f"\n{'events/s':<34} {'local[2]':>10} {'cluster':>10}")
    rows = {
        "plain SDK consumer": ("source", "plain"),
        "pyeventhub source": ("source", "pyeventhub"),
        "plain SDK producer": ("sink", "plain"),
        "pyeventhub sink": ("sink", "pyeventhub"),
    }
    for name, (kind, key) in rows.items():
        local, remote = results["local[2]"][kind][key], results["cluster"][kind][key]
        print(f"{name:<34} {local:10,.0f} {remote:10,.0f}")
    ratio_rows = {
        "source / plain, whole query": ("source", "ratio"),
        "source / plain, over its batches": ("source", "ratio_batches"),
        "sink / plain producer": ("sink", "ratio"),
    }
    for name, (kind, key) in ratio_rows.items():
        ratios = [results[label][kind][key] for label in ("local[2]", "cluster")]
        print(f"{name:<34} {ratios[0]:9.2f}x {ratios[1]:9.2f}x")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
