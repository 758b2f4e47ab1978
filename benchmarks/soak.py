"""Soak: a pyeventhub -> pyfile (parquet) query at a steady rate through restarts and a kill.

The emulator runs in its own process on a fixed port with its events on disk; a sender process
sends ``--rate`` numbered events per second for ``--minutes``. The query runs on a standalone
cluster of ``--workers`` one-core workers started here (or on ``--master``). Midway the
emulator is SIGKILLed and started again ``--emulator-restarts`` times and one executor JVM is
SIGKILLed ``--executor-kills`` times; the query must ride through. Every ``--sample-seconds``
the RSS, threads and sockets of the driver (JVM, Python, its Python workers), the executors
(JVMs, Python workers) and the emulator are sampled, with the file counts of the checkpoint
and the sink's ``_spark_metadata``. At the end the sender stops, the query drains, and the
output, read back with Spark's parquet reader, is checked: every event in the hub exactly once,
every acknowledged one there. Prints a table (start / end / max and a growth verdict per series:
see ``_soak_report``) and the counts; judged, not timed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._soak_report import table

__all__ = ["HELP", "SPARK", "add_arguments", "disruptions", "run"]

HELP = "pyeventhub -> pyfile for minutes, through emulator restarts and an executor kill"
SPARK = False  # its own --master / --workers: it needs executors it can kill
HUB = "soak"
RETAIN = 20  # minBatchesToRetain of the checkpoint and the sink: several compactions a run


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--minutes", type=float, default=10.0, help="sending time (10)")
    parser.add_argument("--rate", type=float, default=200.0, help="events per second (200)")
    parser.add_argument("--partitions", type=int, default=4, help="hub partitions (4)")
    parser.add_argument("--trigger-seconds", type=float, default=2.0, help="processingTime (2)")
    parser.add_argument("--sample-seconds", type=float, default=30.0, help="sampling period")
    parser.add_argument("--emulator-restarts", type=int, default=2)
    parser.add_argument("--executor-kills", type=int, default=1)
    parser.add_argument("--down-seconds", type=float, default=5.0, help="emulator downtime")
    parser.add_argument("--workers", type=int, default=2, help="one-core workers started here")
    parser.add_argument("--master", help="an existing standalone master on this machine instead")
    parser.add_argument(
        "--conf", action="append", default=[], metavar="KEY=VALUE", help="Spark setting"
    )


def disruptions(seconds: float, restarts: int, kills: int) -> list[tuple[float, str]]:
    """When to disrupt: alternately restart and kill, spread over 20 %..70 % of the run."""
    kinds: list[str] = []
    left = {"restart": restarts, "kill": kills}
    while left["restart"] or left["kill"]:
        for kind in ("restart", "kill"):
            if left[kind]:
                kinds.append(kind)
                left[kind] -= 1
    if len(kinds) == 1:
        return [(seconds * 0.4, kinds[0])]
    step = 0.5 / max(1, len(kinds) - 1)
    return [(seconds * (0.2 + step * i), kind) for i, kind in enumerate(kinds)]


def run(args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks.cluster import StandaloneCluster, free_port

    workdir = Path(tempfile.mkdtemp(prefix="pysparksources-soak-"))
    cluster = None
    try:
        if args.master is None:
            (workdir / "cluster").mkdir()
            cluster = StandaloneCluster(workdir / "cluster", workers=args.workers)
            args.master = cluster.url
        return _Soak(args, workdir, free_port()).run()
    finally:
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(workdir, ignore_errors=True)


class _Soak:
    """One run: the processes, the query, the samples; ``run`` drives it start to end."""

    def __init__(self, args: argparse.Namespace, workdir: Path, port: int) -> None:
        from benchmarks._soak_processes import EmulatorProcess

        self.args = args
        self.workdir = workdir
        (workdir / "emulator").mkdir(parents=True, exist_ok=True)
        self.emulator = EmulatorProcess(port, HUB, args.partitions, workdir / "emulator")
        self.events: list[str] = []
        self.started = time.monotonic()

    def log(self, message: str) -> None:
        line = f"[{time.monotonic() - self.started:6.0f}s] {message}"
        self.events.append(line)
        print(line, flush=True)

    def run(self) -> dict[str, Any]:
        from benchmarks._harness import bench_session
        from benchmarks._soak_processes import SenderProcess, SparkProcesses
        from benchmarks._soak_samples import Sampler

        args = self.args
        conn = self.emulator.start()
        spark = bench_session(args, **{"spark.sql.streaming.minBatchesToRetain": str(RETAIN)})
        sender = None
        try:
            self.spark_processes = SparkProcesses(spark.sparkContext.applicationId)
            self.sampler = Sampler(
                self.spark_processes,
                self.emulator,
                HUB,
                args.partitions,
                self.workdir / "checkpoint",
                self.workdir / "out",
                lag_allowance=2 * args.trigger_seconds * args.rate,
            )
            self.query = self._start_query(spark, conn)
            self.log(f"query started on {args.master}; sending {args.rate:g} events/s")
            sender = SenderProcess(
                conn, args.rate, args.partitions, self.workdir / "ledger", self.workdir / "sender"
            )
            self._wait_for_first_batch()
            self._soak(args.minutes * 60)
            sender.stop()
            sender = None
            self.log("sender stopped; draining")
            outcome = self._drain_and_check(spark, conn)
        finally:
            if sender is not None:
                sender.stop()
            if getattr(self, "query", None) is not None:
                self.query.stop()
            spark.stop()
            self.emulator.stop()
        return self._report(outcome)

    def _start_query(self, spark: Any, conn: str) -> Any:
        events = (
            spark.readStream.format("pyeventhub")
            .option("connectionString", conn)
            .option("startingPosition", "start")
            .load()
            .selectExpr("CAST(CAST(body AS STRING) AS BIGINT) AS id", "partition", "sequenceNumber")
        )
        return (
            events.writeStream.format("pyfile")
            .option("format", "parquet")
            .option("path", str(self.workdir / "out"))
            .option("checkpointLocation", str(self.workdir / "checkpoint"))
            .option("minBatchesToRetain", str(RETAIN))
            .option("logCleanupDelay", "30s")
            .trigger(processingTime=f"{self.args.trigger_seconds:g} seconds")
            .start()
        )

    def _wait_for_first_batch(self, timeout: float = 600) -> None:
        """The clock starts once the query runs: start-up is not what a soak measures."""
        deadline = time.monotonic() + timeout
        while self.query.lastProgress is None:
            self._raise_if_failed()
            if time.monotonic() > deadline:
                raise TimeoutError(f"no batch completed in {timeout} s")
            time.sleep(0.5)
        self.log("first batch done: the soak clock starts")

    def _soak(self, seconds: float) -> None:
        plan = disruptions(seconds, self.args.emulator_restarts, self.args.executor_kills)
        begin = time.monotonic()
        next_sample = begin
        while (now := time.monotonic()) - begin < seconds:
            self._raise_if_failed()
            if plan and now - begin >= plan[0][0]:
                self._disrupt(plan.pop(0)[1])
            if now >= next_sample:
                self._sample(now - begin)
                next_sample += self.args.sample_seconds
            time.sleep(0.5)
        self._sample(time.monotonic() - begin)

    def _disrupt(self, kind: str) -> None:
        if kind == "restart":
            self.log(f"emulator: SIGKILL, {self.args.down_seconds:g}s down, start again")
            self.emulator.restart(self.args.down_seconds)
            self.log("emulator: back on the same port")
        else:
            self.log("executor: SIGKILL one executor JVM")
            took = self.spark_processes.kill_one_executor()
            self.log(f"executor: replacement registered after {took:.0f}s")

    def _raise_if_failed(self) -> None:
        if self.query.exception() is not None:
            raise RuntimeError(f"the soak query failed: {self.query.exception()}")

    def _sample(self, seconds: float) -> None:
        self.log(self.sampler.sample(seconds, self.query))

    def _drain_and_check(self, spark: Any, conn: str) -> Any:
        from benchmarks._soak_check import check_output, hub_next_sequence_numbers
        from benchmarks._soak_samples import committed_offsets
        from benchmarks._soak_sender import read_ledger

        target = hub_next_sequence_numbers(conn, self.args.partitions)
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            self._raise_if_failed()
            end = committed_offsets(self.query, HUB)
            if all(end.get(p, 0) >= n for p, n in target.items()):
                break
            time.sleep(1)
        else:
            raise TimeoutError(f"the query did not drain to {target} in 600 s")
        self.batches = json.loads(self.query.lastProgress.json)["batchId"] + 1
        self.query.stop()
        self.log(f"drained after {self.batches} batches; checking the output")
        ledger = read_ledger(self.workdir / "ledger")
        return check_output(spark, self.workdir / "out", target, ledger)

    def _report(self, outcome: Any) -> dict[str, Any]:
        series = self.sampler.series
        print("\n" + table(list(series.values())))
        print()
        for key, value in outcome.as_dict().items():
            print(f"{key.replace('_', ' '):<40} {value}")
        return {
            "minutes": self.args.minutes,
            "rate": self.args.rate,
            "partitions": self.args.partitions,
            "master": self.args.master,
            "batches": self.batches,
            "emulator_restarts": self.emulator.restarts,
            "executors_killed": self.spark_processes.executors_killed,
            "outcome": outcome.as_dict(),
            "series": {name: s.summary() for name, s in series.items()},
            "events": self.events,
        }
