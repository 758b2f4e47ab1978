"""What a soak run samples every period: process figures per role, file counts, the lag.

Roles: the driver JVM, the driver's Python process (the bench itself), the Python workers the
driver JVM starts (the streaming source's planner, the sink's committer), the executor JVMs and
their Python workers, the emulator. Files: the checkpoint's ``offsets/`` and ``commits/``, the
sink's ``_spark_metadata`` (all bounded by ``minBatchesToRetain`` and compaction) and the data
files (the output: grows by design).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks._jvm_heap import live_heap_bytes
from benchmarks._procfs import children_by_parent, figures
from benchmarks._soak_check import hub_next_sequence_numbers
from benchmarks._soak_processes import EmulatorProcess, SparkProcesses
from benchmarks._soak_report import Series

__all__ = ["ROLES", "Sampler", "committed_offsets"]

ROLES = (
    "driver JVM",
    "driver Python",
    "driver Python workers",
    "executor JVMs",
    "executor Python workers",
)
_JVMS = ("driver JVM", "executor JVMs")
_CAPPED = "bounded: Spark caps each pool at 100 threads"
_SPLIT = "the two rows below, judged apart"
# Absolute noise a verdict tolerates besides 10 % of the median (see _soak_report).
_RSS_MB, _HEAP_MB, _THREADS, _SOCKETS, _FILES = 64.0, 16.0, 8.0, 8.0, 5.0


def committed_offsets(query: Any, hub: str) -> dict[str, int]:
    """Each partition's next sequence number after the query's last completed batch."""
    last = query.lastProgress
    if last is None:
        return {}
    value = json.loads(last.json)["sources"][0]["endOffset"]
    if isinstance(value, str):
        value = json.loads(value)
    return {p: int(n) for p, n in (value or {}).get(hub, {}).items()}


def _files(folder: Path) -> int:
    if not folder.is_dir():
        return 0
    return sum(1 for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))


class Sampler:
    """The series of one run, filled by :meth:`sample`.

    ``lag_allowance``: the lag's noise, in events: a sample may fall anywhere in a trigger
    interval, and an interval's events wait for the next batch.
    """

    def __init__(
        self,
        spark: SparkProcesses,
        emulator: EmulatorProcess,
        hub: str,
        partitions: int,
        checkpoint: Path,
        output: Path,
        lag_allowance: float,
    ) -> None:
        self.spark, self.emulator, self.hub, self.partitions = spark, emulator, hub, partitions
        self.checkpoint, self.output = checkpoint, output
        items = [Series(f"{role} RSS MB", _RSS_MB) for role in ROLES]
        items += [
            Series(f"{role} threads", _THREADS, _SPLIT if role in _JVMS else "") for role in ROLES
        ]
        items += [
            Series(f"{role} threads, block-manager pools", _THREADS, _CAPPED) for role in _JVMS
        ]
        items += [Series(f"{role} threads, all others", _THREADS) for role in _JVMS]
        items += [Series(f"{role} sockets", _SOCKETS) for role in ROLES]
        items += [Series(f"{role} processes", 1.0) for role in ROLES[2:]]
        items += [Series(f"{role} live heap MB (after full GC)", _HEAP_MB) for role in _JVMS]
        items += [
            Series("emulator RSS MB", _RSS_MB, "grows by design: holds every event (no retention)"),
            Series("emulator sockets", _SOCKETS),
            Series("checkpoint offsets/ files", _FILES),
            Series("checkpoint commits/ files", _FILES),
            Series("sink _spark_metadata files", _FILES),
            Series("sink data files", _FILES, "grows by design: the output"),
            Series("query lag (events)", lag_allowance),
        ]
        self.series = {s.name: s for s in items}

    def _live_heaps(self, seconds: float) -> None:
        driver = self.spark.driver_jvm(children_by_parent())
        for role, pids in (("driver JVM", [driver]), ("executor JVMs", self.spark.executor_jvms())):
            heaps = [live_heap_bytes(pid) for pid in pids if pid is not None]
            if heaps and None not in heaps:
                total = sum(h for h in heaps if h is not None)
                self.series[f"{role} live heap MB (after full GC)"].add(seconds, total / 2**20)

    def sample(self, seconds: float, query: Any) -> str:
        """Add one point to every series; a one-line summary for the log."""
        add = {name: s.add for name, s in self.series.items()}
        for role, f in self.spark.sample().items():
            add[f"{role} RSS MB"](seconds, f.rss_bytes / 2**20)
            add[f"{role} threads"](seconds, f.threads)
            if role in _JVMS:
                add[f"{role} threads, block-manager pools"](seconds, f.capped_pool_threads)
                add[f"{role} threads, all others"](seconds, f.threads - f.capped_pool_threads)
            add[f"{role} sockets"](seconds, f.sockets)
            if f"{role} processes" in add:
                add[f"{role} processes"](seconds, f.processes)
        self._live_heaps(seconds)
        if self.emulator.pid is not None:
            emulator = figures(self.emulator.pid)
            add["emulator RSS MB"](seconds, emulator.rss_bytes / 2**20)
            add["emulator sockets"](seconds, emulator.sockets)
        add["checkpoint offsets/ files"](seconds, _files(self.checkpoint / "offsets"))
        add["checkpoint commits/ files"](seconds, _files(self.checkpoint / "commits"))
        add["sink _spark_metadata files"](seconds, _files(self.output / "_spark_metadata"))
        add["sink data files"](seconds, _files(self.output))
        # Lag: events in the hub now that no completed batch has read yet.
        hub = hub_next_sequence_numbers(self.emulator.connection_string, self.partitions)
        committed = committed_offsets(query, self.hub)
        lag = sum(n - committed.get(p, 0) for p, n in hub.items())
        add["query lag (events)"](seconds, lag)
        last = query.lastProgress
        batch = json.loads(last.json)["batchId"] if last is not None else -1
        rss = self.series["driver JVM RSS MB"].values[-1]
        heap = self.series["driver JVM live heap MB (after full GC)"].values
        live = f", live heap {heap[-1]:.0f} MB" if heap else ""
        return f"sample: batch {batch}, lag {lag} events, driver JVM RSS {rss:.0f} MB{live}"
