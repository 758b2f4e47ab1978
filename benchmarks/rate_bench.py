"""pyrate vs Spark's rate-micro-batch, the Python-path ceiling and a tuple source.

Usage: python benchmarks/rate_bench.py [--rows 1000000 5000000] [--batches 5] [--conf K=V]
(the same as ``pysparksources bench``). Figures print as a table and as one JSON line.
"""

import sys

from pysparksources.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
