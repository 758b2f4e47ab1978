"""pyeventhub at scale on a standalone cluster against as many SDK consumers in separate processes.

In one run: the emulator, in its own process, serves a hub of ``--partitions`` partitions that
``--fill-processes`` sender processes fill with ``--events`` events of ``--size`` bytes. Then
``--sdk-processes`` (default: one per Spark core, ``--workers``) OS processes each read their
share of the partitions from the start to the end with one plain azure-eventhub
``EventHubConsumerClient`` (one ``receive_batch`` thread per partition): timed from their launch
(interpreter start and imports included) to the last event of the last process, so the figure
is what that many cores of the SDK reach, each process bound by its own GIL. Then a standalone
cluster of ``--workers`` one-core workers starts (``cluster.py``) and a pyeventhub AvailableNow
query reads the whole backlog into ``noop`` under ``--max-per-trigger``, with executors of
``--executor-memory``; timed from ``start()`` to its end (query start-up included, after one
small warm-up read that starts the executors' Python workers) and over its busy batches. Once
the cluster has stopped the SDK processes read the backlog again: the ratios are against the
mean of the two SDK runs, which bracket the query as the machine's load drifts.

While the query runs, ``/proc`` is sampled every ``--sample-seconds``: each executor JVM and
the Python workers below it (RSS, and the Python workers' sockets: one AMQP connection per
open receiver, plus one or two to their JVM). The query's ``taskStatsPath`` lines give the
receivers each executor opened (cache misses), reused (hits, skips) and the partitions each
Python worker read (what its receiver cache can hold). The event counts are checked: the query,
its tasks and the SDK processes together must each have read exactly ``--events``.

Child processes: ``python -m benchmarks.eventhubs_scale send|consume ...`` (see ``_child``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["HELP", "SPARK", "add_arguments", "receiver_figures", "run", "shares"]

HELP = "pyeventhub on a standalone cluster vs SDK consumers in separate processes, at scale"
SPARK = False  # its own cluster: --workers one-core workers started here
HUB = "scale"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=100, help="event body bytes (100)")
    parser.add_argument("--partitions", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2, help="one-core workers started here")
    parser.add_argument(
        "--sdk-processes", type=int, help="SDK consumer processes (default: --workers)"
    )
    parser.add_argument("--fill-processes", type=int, default=2, help="sender processes (2)")
    parser.add_argument("--max-per-trigger", type=int, default=200_000)
    parser.add_argument("--executor-memory", default="1g", help="spark.executor.memory (1g)")
    parser.add_argument("--sample-seconds", type=float, default=0.5)
    parser.add_argument("--timeout", type=float, default=1800, help="per phase, seconds")
    parser.add_argument(
        "--conf", action="append", default=[], metavar="KEY=VALUE", help="Spark setting"
    )
    parser.add_argument(
        "--source-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a pyeventhub option for the measured query (repeatable)",
    )


def shares(partitions: int, events: int, processes: int) -> list[dict[str, int]]:
    """Partition id -> event count for each of ``processes`` processes, partitions dealt
    round-robin (so each process gets every ``processes``-th partition)."""
    counts = {str(p): events // partitions + (p < events % partitions) for p in range(partitions)}
    out: list[dict[str, int]] = [{} for _ in range(min(processes, partitions))]
    for p, count in counts.items():
        out[int(p) % len(out)][p] = count
    return out


# -- child processes ------------------------------------------------------------------------


def _child_command(mode: str, conn: str, share: dict[str, int], *extra: str) -> list[str]:
    spec = ",".join(f"{p}:{n}" for p, n in share.items())
    return [sys.executable, "-m", "benchmarks.eventhubs_scale", mode, conn, spec, *extra]


def _send(conn: str, share: dict[str, int], size: int) -> dict[str, Any]:
    from azure.eventhub import EventHubProducerClient

    from benchmarks._eventhubs import send_full_batches

    payload = b"x" * size
    with EventHubProducerClient.from_connection_string(conn) as client:
        for partition, count in share.items():
            send_full_batches(client, partition, count, payload)
    return {"sent": sum(share.values())}


def _consume(conn: str, share: dict[str, int], timeout: float) -> dict[str, Any]:
    """Read each partition of ``share`` from the start until its count: one client, one
    ``receive_batch`` thread per partition (the SDK allows one receive per partition)."""
    from azure.eventhub import EventHubConsumerClient

    imported = time.monotonic()
    client = EventHubConsumerClient.from_connection_string(conn, consumer_group="$Default")
    received = dict.fromkeys(share, 0)
    lock = threading.Lock()
    done = threading.Event()
    left = [len(share)]
    stamps: dict[str, float] = {}

    def on_event_batch(context: Any, batch: list[Any]) -> None:
        if not batch:
            return
        partition = context.partition_id
        with lock:
            stamps.setdefault("first", time.monotonic())
            before = received[partition]
            received[partition] = before + len(batch)
            if before < share[partition] <= received[partition]:
                stamps["last"] = time.monotonic()
                left[0] -= 1
                if left[0] == 0:
                    done.set()

    threads = [
        threading.Thread(
            target=client.receive_batch,
            kwargs={
                "on_event_batch": on_event_batch,
                "partition_id": partition,
                "starting_position": "-1",
                "max_batch_size": 300,
                "max_wait_time": 5,
            },
            daemon=True,
        )
        for partition in share
    ]
    for thread in threads:
        thread.start()
    finished = done.wait(timeout)
    # A moment more: anything past the expected count would show as an excess.
    time.sleep(0.5)
    client.close()
    with lock:
        counts = dict(received)
    return {
        "finished": finished,
        "received": counts,
        "imported": imported,
        "first": stamps.get("first"),
        "last": stamps.get("last"),
    }


def _child(argv: list[str]) -> int:
    """``send CONN P:N,... SIZE`` or ``consume CONN P:N,... TIMEOUT``: one JSON line out."""
    mode, conn, spec, extra = argv
    share = {p: int(n) for p, n in (item.split(":") for item in spec.split(","))}
    result = (
        _send(conn, share, int(extra)) if mode == "send" else _consume(conn, share, float(extra))
    )
    print(json.dumps(result), flush=True)
    return 0


@dataclass
class _Children:
    """Child processes started together; stopped by their ids whatever happens."""

    procs: list[subprocess.Popen[str]] = field(default_factory=list)

    def start(self, command: list[str]) -> subprocess.Popen[str]:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        self.procs.append(proc)
        return proc

    def results(self, timeout: float) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        out = []
        for proc in self.procs:
            stdout, _ = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
            if proc.returncode != 0:
                # Its traceback is on stderr; its command line holds the connection string.
                raise RuntimeError(f"child process {proc.pid} exited with {proc.returncode}")
            out.append(json.loads(stdout.strip().splitlines()[-1]))
        return out

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


# -- sampling -------------------------------------------------------------------------------


class _Sampler:
    """Peak figures of processes, sampled from /proc on a thread until stopped."""

    def __init__(self, period: float, sample: Any) -> None:
        self.period = period
        self.sample = sample  # () -> {name: ProcessFigures}
        self.peak_rss: dict[str, int] = defaultdict(int)
        self.peak_sockets: dict[str, int] = defaultdict(int)
        self.peak_total_rss = 0
        self.first_cpu: dict[str, float] = {}
        self.last_cpu: dict[str, float] = {}
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="scale-sampler")

    def __enter__(self) -> _Sampler:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(30)

    def cpu_used(self, name: str) -> float:
        """CPU seconds ``name`` used between the first and the last sample."""
        return self.last_cpu.get(name, 0.0) - self.first_cpu.get(name, 0.0)

    def _run(self) -> None:
        while not self._stop.is_set():
            found = self.sample()
            for name, fig in found.items():
                self.peak_rss[name] = max(self.peak_rss[name], fig.rss_bytes)
                self.peak_sockets[name] = max(self.peak_sockets[name], fig.sockets)
                self.first_cpu.setdefault(name, fig.cpu)
                self.last_cpu[name] = fig.cpu
            self.peak_total_rss = max(
                self.peak_total_rss, sum(fig.rss_bytes for fig in found.values())
            )
            self.samples += 1
            self._stop.wait(self.period)


@dataclass(frozen=True)
class _Figures:
    """A process's (or a group's) /proc figures and the CPU seconds it has used."""

    rss_bytes: int
    sockets: int
    cpu: float


def _executor_figures(spark_processes: Any) -> dict[str, Any]:
    """Per executor JVM: ``jvm <pid>`` -> its figures, ``python <pid>`` -> its Python workers'
    (their CPU: the live ones', so a worker that exited takes its CPU with it)."""
    from benchmarks._procfs import (
        ProcessFigures,
        children_by_parent,
        command_line,
        cpu_seconds,
        descendants,
        figures,
    )

    tree = children_by_parent()
    found: dict[str, Any] = {}
    for jvm in spark_processes.executor_jvms():
        own = figures(jvm)
        found[f"jvm {jvm}"] = _Figures(own.rss_bytes, own.sockets, cpu_seconds(jvm))
        python, cpu = ProcessFigures(), 0.0
        for child in descendants(jvm, tree):
            if "python" in command_line(child).split(" ", 1)[0]:
                python += figures(child)
                cpu += cpu_seconds(child)
        found[f"python {jvm}"] = _Figures(python.rss_bytes, python.sockets, cpu)
    return found


def _pids_figures(pids: list[int]) -> dict[str, Any]:
    from benchmarks._procfs import cpu_seconds, figures

    found = {}
    for pid in pids:
        fig = figures(pid)
        found[str(pid)] = _Figures(fig.rss_bytes, fig.sockets, cpu_seconds(pid))
    return found


# -- the receivers, from taskStatsPath ------------------------------------------------------


def receiver_figures(lines: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per executor: read tasks, events, receivers opened (misses) and reused (hits, skips),
    Python worker processes, and the most partitions one of its workers read (what that
    worker's receiver cache can hold at once)."""
    per: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"tasks": 0, "events": 0, "opened": 0, "reused": 0, "pids": defaultdict(set)}
    )
    for line in lines:
        ex = per[str(line["executorId"])]
        ex["tasks"] += 1
        ex["events"] += int(line["events"])
        ex["opened" if line["reuse"] == "miss" else "reused"] += 1
        ex["pids"][line["pid"]].add(line["partition"])
    return {
        executor: {
            "tasks": ex["tasks"],
            "events": ex["events"],
            "receivers_opened": ex["opened"],
            "receivers_reused": ex["reused"],
            "python_workers": len(ex["pids"]),
            "max_partitions_per_worker": max(len(p) for p in ex["pids"].values()),
        }
        for executor, ex in sorted(per.items())
    }


def _read_task_stats(folder: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for path in sorted(folder.glob("tasks-*.jsonl"))
        for line in path.read_text().splitlines()
        if line.strip()
    ]


# -- the two sides --------------------------------------------------------------------------


def _fill(conn: str, args: argparse.Namespace) -> float:
    children = _Children()
    started = time.monotonic()
    try:
        for share in shares(args.partitions, args.events, args.fill_processes):
            children.start(_child_command("send", conn, share, str(args.size)))
        sent = sum(r["sent"] for r in children.results(args.timeout))
    finally:
        children.stop()
    elapsed = time.monotonic() - started
    if sent != args.events:
        raise RuntimeError(f"the senders sent {sent} events, expected {args.events}")
    return elapsed


def _sdk(conn: str, args: argparse.Namespace, processes: int) -> dict[str, Any]:
    children = _Children()
    share_list = shares(args.partitions, args.events, processes)
    # The SDK processes' CPU: what this process's waited-for children used meanwhile (they are
    # the only children it waits for during the run).
    cpu_before = _children_cpu()
    launched = time.monotonic()
    try:
        for share in share_list:
            children.start(_child_command("consume", conn, share, str(args.timeout)))
        pids = [proc.pid for proc in children.procs]
        with _Sampler(args.sample_seconds, lambda: _pids_figures(pids)) as sampler:
            results = children.results(args.timeout + 60)
    finally:
        children.stop()
    problems = []
    total = 0
    for share, result in zip(share_list, results, strict=True):
        for partition, expected in share.items():
            got = result["received"][partition]
            total += got
            if got != expected:
                problems.append(f"partition {partition}: {got} of {expected}")
    if problems or total != args.events:
        raise RuntimeError(
            f"the SDK processes read {total} events, expected {args.events}: " + "; ".join(problems)
        )
    last = max(r["last"] for r in results)
    first = min(r["first"] for r in results)
    return {
        "processes": len(share_list),
        "seconds": last - launched,
        "rate": args.events / (last - launched),
        "rate_from_first_event": args.events / (last - first),
        "start_up_seconds": first - launched,
        "peak_rss_per_process": max(sampler.peak_rss.values(), default=0),
        "peak_rss_total": sampler.peak_total_rss,
        "cpu": _children_cpu() - cpu_before,
    }


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _spark(conn: str, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    from benchmarks._harness import bench_session
    from benchmarks._soak_processes import SparkProcesses
    from benchmarks.cluster import StandaloneCluster

    (workdir / "cluster").mkdir()
    memory = _memory_for(args.executor_memory)
    cluster = StandaloneCluster(workdir / "cluster", workers=args.workers, memory=memory)
    spark = None
    try:
        args.master = cluster.url
        spark = bench_session(args, **{"spark.executor.memory": args.executor_memory})
        cluster.wait_for_busy_workers()
        cluster.wait_for_registered_executors()
        # Warm-up, not measured: each executor starts its Python workers and imports the SDK
        # and pyarrow (the SDK processes' time includes their imports; the query's would
        # include those of two workers at once, but not the executors' JVM start).
        spark.read.format("pyeventhub").option("connectionString", conn).option(
            "endingPosition", json.dumps({"seqNo": 10})
        ).load().write.format("noop").mode("overwrite").save()
        processes = SparkProcesses(spark.sparkContext.applicationId)
        stats = workdir / "task-stats"
        reader = (
            spark.readStream.format("pyeventhub")
            .option("connectionString", conn)
            .option("startingPosition", json.dumps({"offset": "-1"}))
            .option("taskStatsPath", str(stats))
        )
        if args.max_per_trigger:
            reader = reader.option("maxEventsPerTrigger", str(args.max_per_trigger))
        reader = reader.options(**dict(item.split("=", 1) for item in args.source_option))
        with _Sampler(args.sample_seconds, lambda: _executor_figures(processes)) as sampler:
            started = time.monotonic()
            query = reader.load().writeStream.format("noop").trigger(availableNow=True).start()
            if not query.awaitTermination(args.timeout):
                query.stop()
                raise TimeoutError(f"the query did not end within {args.timeout}s")
            elapsed = time.monotonic() - started
        if query.exception() is not None:
            raise RuntimeError(f"the query failed: {query.exception()}")
        progress = [json.loads(p.json) for p in query.recentProgress]
    finally:
        if spark is not None:
            spark.stop()
        cluster.stop()
    rows = sum(int(p["numInputRows"]) for p in progress)
    if rows != args.events:
        raise RuntimeError(f"pyeventhub read {rows} events, expected {args.events}")
    receivers = receiver_figures(_read_task_stats(stats))
    task_events = sum(r["events"] for r in receivers.values())
    if task_events != args.events:
        raise RuntimeError(f"pyeventhub's tasks recorded {task_events} events, not {args.events}")
    busy = [p for p in progress if p["numInputRows"]]
    busy_ms = sum(p["durationMs"]["triggerExecution"] for p in busy)
    jvms = sorted({name.split()[1] for name in sampler.peak_rss})
    executors = {
        jvm: {
            "jvm_rss": sampler.peak_rss[f"jvm {jvm}"],
            "python_rss": sampler.peak_rss[f"python {jvm}"],
            "python_sockets": sampler.peak_sockets[f"python {jvm}"],
            "jvm_cpu": sampler.cpu_used(f"jvm {jvm}"),
            "python_cpu": sampler.cpu_used(f"python {jvm}"),
        }
        for jvm in jvms
    }
    if not executors:
        raise RuntimeError("no executor process was sampled")
    return {
        "seconds": elapsed,
        "rate": args.events / elapsed,
        "rate_batches": args.events / (busy_ms / 1000),
        "batches": len(busy),
        "samples": sampler.samples,
        "executors": executors,
        "peak_executor_rss": max(e["jvm_rss"] + e["python_rss"] for e in executors.values()),
        "peak_executors_rss_total": sampler.peak_total_rss,
        "receivers": receivers,
    }


def _memory_for(executor_memory: str) -> str:
    """A worker's memory: room for one executor of ``executor_memory`` (at least 2g)."""
    units = {"k": 1 / 1024 / 1024, "m": 1 / 1024, "g": 1, "t": 1024}
    text = executor_memory.strip().lower().rstrip("b")
    gib = float(text[:-1]) * units[text[-1]] if text[-1] in units else float(text) / 2**30
    return f"{max(2, int(gib + 1.999))}g"


def run(args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks._eventhubs import emulator_process

    processes = args.sdk_processes or args.workers
    workdir = Path(tempfile.mkdtemp(prefix="pysparksources-bench-scale-"))
    try:
        with emulator_process(HUB, args.partitions) as conn:
            fill_s = _fill(conn, args)
            print(
                f"filled {args.events:,} events of {args.size} B on {args.partitions} "
                f"partitions in {fill_s:.1f} s ({args.events / fill_s:,.0f} events/s, "
                f"{args.fill_processes} sender processes)",
                flush=True,
            )
            # The SDK processes read before the query and again after its cluster stopped:
            # the machine's load drifts, and their mean brackets the query's run.
            runs = [_sdk_run(conn, args, processes, "before")]
            spark = _spark(conn, args, workdir)
            print(
                f"pyeventhub: {spark['rate']:,.0f} events/s ({spark['seconds']:.1f} s from "
                f"start() to the end, {spark['batches']} batches)",
                flush=True,
            )
            runs.append(_sdk_run(conn, args, processes, "after"))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    sdk = {
        "processes": processes,
        "rates": [r["rate"] for r in runs],
        "rate": statistics.mean(r["rate"] for r in runs),
        "rate_from_first_event": statistics.mean(r["rate_from_first_event"] for r in runs),
        "peak_rss_per_process": max(r["peak_rss_per_process"] for r in runs),
        "cpus": [r["cpu"] for r in runs],
        "cpu": statistics.mean(r["cpu"] for r in runs),
    }
    return _report(args, fill_s, sdk, spark)


def _sdk_run(conn: str, args: argparse.Namespace, processes: int, when: str) -> dict[str, Any]:
    sdk = _sdk(conn, args, processes)
    print(
        f"SDK ({when}): {sdk['processes']} consumer processes: {sdk['rate']:,.0f} events/s "
        f"({sdk['seconds']:.1f} s from launch to the last event)",
        flush=True,
    )
    return sdk


def _micros(cpu_seconds: float, events: int) -> str:
    return f"{cpu_seconds * 1e6 / events:,.1f} µs"


def _mib(value: int) -> str:
    return f"{value / 2**20:,.0f} MiB"


def _report(
    args: argparse.Namespace, fill_s: float, sdk: dict[str, Any], spark: dict[str, Any]
) -> dict[str, Any]:
    receivers = spark["receivers"]
    opened = [r["receivers_opened"] for r in receivers.values()]
    per_worker = max(r["max_partitions_per_worker"] for r in receivers.values())
    sockets = max(e["python_sockets"] for e in spark["executors"].values())
    jvm_cpu = sum(e["jvm_cpu"] for e in spark["executors"].values())
    python_cpu = sum(e["python_cpu"] for e in spark["executors"].values())
    limit = f"maxEventsPerTrigger={args.max_per_trigger:,}" if args.max_per_trigger else "no limit"
    limit = ", ".join([limit, *args.source_option])
    print(
        f"\n{args.events:,} events of {args.size} B on {args.partitions} partitions; "
        f"{args.workers} one-core workers (spark.executor.memory={args.executor_memory}), "
        f"{limit}, {spark['batches']} batches; {sdk['processes']} SDK processes"
    )
    rows = [
        (
            "SDK consumers, launch to last event (before, after)",
            " / ".join(f"{rate:,.0f}" for rate in sdk["rates"]),
            "",
        ),
        ("SDK consumers, launch to last event (mean)", f"{sdk['rate']:,.0f} events/s", ""),
        ("SDK consumers, first to last event", f"{sdk['rate_from_first_event']:,.0f} events/s", ""),
        (
            "pyeventhub, whole query (incl. start-up)",
            f"{spark['rate']:,.0f} events/s",
            f"{spark['rate'] / sdk['rate']:.2f}x",
        ),
        (
            "pyeventhub, over its batches",
            f"{spark['rate_batches']:,.0f} events/s",
            f"{spark['rate_batches'] / sdk['rate']:.2f}x",
        ),
        (
            "CPU per event, SDK processes",
            f"{_micros(sdk['cpu'], args.events)}",
            "",
        ),
        ("CPU per event, executors' JVMs", _micros(jvm_cpu, args.events), ""),
        ("CPU per event, executors' Python workers", _micros(python_cpu, args.events), ""),
        ("peak RSS of one executor (JVM + Python workers)", _mib(spark["peak_executor_rss"]), ""),
        ("peak RSS of all executors together", _mib(spark["peak_executors_rss_total"]), ""),
        ("peak RSS of one SDK process", _mib(sdk["peak_rss_per_process"]), ""),
        ("receivers opened per executor (max / total)", f"{max(opened)} / {sum(opened)}", ""),
        ("most partitions one Python worker read", str(per_worker), ""),
        ("peak sockets of one executor's Python workers", str(sockets), ""),
    ]
    print(f"{'figure':<52} {'value':>18} {'/ SDK':>8}")
    for name, value, ratio in rows:
        print(f"{name:<52} {value:>18} {ratio:>8}")
    print("\nper executor (JVM pid): peak RSS JVM / Python workers, peak Python sockets")
    for jvm, e in spark["executors"].items():
        print(f"  {jvm}: {_mib(e['jvm_rss'])} / {_mib(e['python_rss'])}, {e['python_sockets']}")
    print("per executor (id): tasks, events, receivers opened / reused, Python workers")
    for executor, r in receivers.items():
        print(
            f"  {executor}: {r['tasks']} tasks, {r['events']:,} events, "
            f"{r['receivers_opened']} / {r['receivers_reused']}, {r['python_workers']}"
        )
    return {
        "events": args.events,
        "size": args.size,
        "partitions": args.partitions,
        "workers": args.workers,
        "max_per_trigger": args.max_per_trigger,
        "source_options": args.source_option,
        "fill_rate": round(args.events / fill_s),
        "sdk_processes": sdk["processes"],
        "sdk": round(sdk["rate"]),
        "sdk_before_after": [round(rate) for rate in sdk["rates"]],
        "sdk_from_first_event": round(sdk["rate_from_first_event"]),
        "pyeventhub": round(spark["rate"]),
        "pyeventhub_batches": round(spark["rate_batches"]),
        "ratio": round(spark["rate"] / sdk["rate"], 2),
        "ratio_batches": round(spark["rate_batches"] / sdk["rate"], 2),
        "batches": spark["batches"],
        "peak_executor_rss_mib": round(spark["peak_executor_rss"] / 2**20),
        "peak_executors_rss_total_mib": round(spark["peak_executors_rss_total"] / 2**20),
        "peak_sdk_process_rss_mib": round(sdk["peak_rss_per_process"] / 2**20),
        "receivers_opened_max": max(opened),
        "receivers_opened_total": sum(opened),
        "max_partitions_per_worker": per_worker,
        "peak_python_sockets_per_executor": sockets,
        "cpu_us_per_event": {
            "sdk": round(sdk["cpu"] * 1e6 / args.events, 1),
            "executor_jvms": round(jvm_cpu * 1e6 / args.events, 1),
            "executor_python": round(python_cpu * 1e6 / args.events, 1),
        },
        "receivers": receivers,
    }


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
