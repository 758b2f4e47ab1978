"""Benchmarks against Spark's own sources and sinks and the plain azure-eventhub clients.

``pysparksources bench <scenario> [options]`` (this package is imported by that command only).
Each scenario measures its competitor in the same run, interleaved where it repeats, and prints
its figures, the ratios, and one JSON line last. Spark scenarios take ``--master``, or
``--local-cluster N`` to run on local[N] and then on a standalone cluster of N one-core workers
started on 127.0.0.1, printed side by side.
"""

from benchmarks._command import SCENARIOS, main

__all__ = ["SCENARIOS", "main"]
