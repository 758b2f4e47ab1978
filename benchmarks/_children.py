"""How the benchmarks start their other processes: ``python -m benchmarks``, the emulator, and
the environment that lets every one of them (Spark's Python workers included) import this
package.

``benchmarks`` is a folder of the repository, never installed: a process finds it only with
the repository on its ``PYTHONPATH``. ``./dev bench`` sets that, and ``benchmarks.main`` sets it
in its own environment too (``python -m benchmarks`` run from anywhere), so every child inherits
it: the scenario children of ``--local-cluster``, the probes and senders, the Spark JVMs and,
through them, the Python workers that import the reference sources of ``_reference`` on the
driver and the executors (a local cluster's workers, and so their executors, included).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "REPOSITORY",
    "bench_command",
    "emulator_command",
    "executor_path_conf",
    "with_repository_path",
]

REPOSITORY = Path(__file__).resolve().parent.parent


def with_repository_path(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with the repository first on ``PYTHONPATH`` (once; the rest kept in order)."""
    root = str(REPOSITORY)
    rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != root]
    return {**env, "PYTHONPATH": os.pathsep.join([root, *rest])}


def executor_path_conf() -> dict[str, str]:
    """Spark settings that give every executor's Python workers this process's PYTHONPATH,
    also on a ``--master`` whose workers were started without it."""
    return {"spark.executorEnv.PYTHONPATH": with_repository_path(os.environ)["PYTHONPATH"]}


def bench_command(*argv: str) -> list[str]:
    """``./dev bench ARGV`` as a child of this interpreter (give it :func:`with_repository_path`
    of its environment unless this process's already carries the repository)."""
    return [sys.executable, "-m", "benchmarks", *argv]


def emulator_command(*argv: str) -> list[str]:
    """The Event Hubs emulator's own command (the ``pysparksources-emulator`` distribution)."""
    return [sys.executable, "-m", "pysparksources_emulator", *argv]
