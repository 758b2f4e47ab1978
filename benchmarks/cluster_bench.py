"""Run ``pysparksources bench`` against a two-executor standalone cluster started here.

Usage: python benchmarks/cluster_bench.py [bench arguments...]
The cluster (master + two one-core workers on 127.0.0.1, from the pyspark wheel) is stopped
at the end, whatever happens.
"""

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from sparkprocs import StandaloneCluster, worker_env

from pysparksources.cli import main

if __name__ == "__main__":
    import os

    os.environ.update(worker_env())
    with tempfile.TemporaryDirectory() as workdir:
        cluster = StandaloneCluster(Path(workdir))
        try:
            code = main(["bench", "--master", cluster.url, *sys.argv[1:]])
        finally:
            cluster.stop()
    sys.exit(code)
