"""Benchmarks against Spark's own sources and sinks and the plain azure-eventhub clients.

``./dev bench <scenario> [options]`` runs ``python -m benchmarks`` with the repository on
``PYTHONPATH``: this is a folder of the repository, shipped in no wheel (see README.md here).
Each scenario measures its competitor in the same run, interleaved where it repeats, and prints
its figures, the ratios, and one JSON line last. Spark scenarios take ``--master``, or
``--local-cluster N`` to run on local[N] and then on a standalone cluster of N one-core workers
started on 127.0.0.1, printed side by side.
"""

from benchmarks._children import bench_command, with_repository_path
from benchmarks._command import SCENARIOS, main

__all__ = ["SCENARIOS", "bench_command", "main", "with_repository_path"]
