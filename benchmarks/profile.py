"""Where a batch's time goes on the Python path: CPU in the JVM's tasks, in the rest of the JVM,
and in Python workers, per million rows, beside Spark's own source and sink.

The query progress only says how long a batch took; on two cores the cap is set by how much CPU
a row costs, and where. Each query runs ``--rows`` rows per batch, processingTime 0. Around its
measured batches the scenario samples, from /proc, the CPU time of the JVM process and of every
Python process Spark started (workers, the source's planner process, exited children
included), and reads the tasks' own CPU time from Spark's REST API (the UI runs on a free
port). Spark 4.3 gives a streaming Python data source no per-node Python metrics
(``pythonDataSent`` and friends stay empty in the SQL plan), so the Python side is measured from
the processes instead. ``--profile`` adds a pass with ``spark.sql.pyspark.dataSource.profiler``
and prints the Python functions that cost the most (cProfile inflates Python-heavy code, so the
CPU figures come from the pass without it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks._harness import bench_session
from benchmarks._procfs import cpu_seconds

__all__ = ["HELP", "SPARK", "add_arguments", "run"]

HELP = "where a batch's time goes: JVM task CPU, other JVM CPU, Python worker CPU"
SPARK = True


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows per batch")
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--batches", type=int, default=5, help="measured batches per query")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--profile", action="store_true", help="also run the profiler pass")


@dataclass(frozen=True)
class Shape:
    label: str
    source: tuple[str, dict[str, str]]
    sink: str  # noop, parquet, pyfile, pybench_discard


def _shapes(rows: int, partitions: int) -> list[Shape]:
    base = {"rowsPerBatch": str(rows), "numPartitions": str(partitions)}
    rate = ("rate-micro-batch", base)
    return [
        Shape("rate-micro-batch -> noop", rate, "noop"),
        Shape("python reference -> noop", ("pybench_cached", {**base, "chunkRows": "0"}), "noop"),
        Shape("pyrate -> noop", ("pyrate", base), "noop"),
        Shape("rate-micro-batch -> parquet", rate, "parquet"),
        Shape("rate-micro-batch -> discard", rate, "pybench_discard"),
        Shape("rate-micro-batch -> pyfile", rate, "pyfile"),
    ]


def _processes() -> tuple[int, list[int]]:
    """The JVM started for this session, and the Python processes below it."""
    from benchmarks._procfs import children_by_parent, command_line, descendants

    tree = children_by_parent()
    below = descendants(os.getpid(), tree)
    jvm = next(p for p in below if "java" in command_line(p).split(" ", 1)[0])
    python = [p for p in descendants(jvm, tree) if "python" in command_line(p)]
    return jvm, python


@dataclass
class Sample:
    jvm: float
    python: dict[int, float]
    batch: int


def _sample(batch: int) -> Sample:
    jvm, python = _processes()
    return Sample(cpu_seconds(jvm), {p: cpu_seconds(p) for p in python}, batch)


def _python_delta(before: Sample, after: Sample) -> float:
    """CPU the Python processes used in between (processes new since count in full)."""
    return sum(cpu - before.python.get(pid, 0.0) for pid, cpu in after.python.items())


def _rest(port: int, app: str, path: str) -> Any:
    url = f"http://127.0.0.1:{port}/api/v1/applications/{app}/{path}"
    with urllib.request.urlopen(url, timeout=30) as answer:
        return json.load(answer)


def _task_figures(port: int, app: str, run_id: str, batches: range) -> dict[str, float]:
    """Tasks' run time, JVM CPU, GC and deserialization (ms), summed over the given batches."""
    wanted = {f"batch = {b}" for b in batches}
    stage_ids: list[int] = []
    for job in _rest(port, app, "jobs"):
        text = job.get("description") or ""
        if run_id in text and any(line.strip() in wanted for line in text.splitlines()):
            stage_ids += job["stageIds"]
    totals = {"run": 0.0, "cpu": 0.0, "gc": 0.0, "deserialize": 0.0}
    for stage_id in stage_ids:
        for attempt in _rest(port, app, f"stages/{stage_id}"):
            totals["run"] += attempt["executorRunTime"]
            totals["cpu"] += attempt["executorCpuTime"] / 1e6
            totals["gc"] += attempt["jvmGcTime"]
            totals["deserialize"] += attempt["executorDeserializeTime"]
    return totals


def _measure(spark: Any, shape: Shape, args: argparse.Namespace, port: int) -> dict[str, float]:
    work = Path(tempfile.mkdtemp(prefix="pysparksources-profile-"))
    try:
        fmt, options = shape.source
        writer = spark.readStream.format(fmt).options(**options).load().writeStream
        writer = writer.format("pyfile" if shape.sink == "pyfile" else shape.sink)
        if shape.sink == "pyfile":
            writer = writer.option("format", "parquet")
        if shape.sink in ("parquet", "pyfile"):
            writer = writer.option("path", str(work / "out"))
        writer = writer.option("checkpointLocation", str(work / "ck"))
        query = writer.trigger(processingTime="0 seconds").start()
        first, last = args.warmup, args.warmup + args.batches - 1
        try:
            before = _wait_for_batch(query, first - 1)
            after = _wait_for_batch(query, last)
        finally:
            query.stop()
        done = range(before.batch + 1, after.batch + 1)
        progress = [p for p in query.recentProgress if p["batchId"] in done]
        rows = sum(s.get("numInputRows") or 0 for p in progress for s in p["sources"])
        tasks = _task_figures(port, spark.sparkContext.applicationId, str(query.runId), done)
        wall = sum(p["durationMs"]["triggerExecution"] for p in progress)
        python = _python_delta(before, after) * 1000
        jvm = (after.jvm - before.jvm) * 1000
        per_m = 1e6 / rows
        return {
            "batches": len(done),
            "rows/s": rows * 1000 / wall,
            "wall ms/M": wall * per_m,
            "task run ms/M": tasks["run"] * per_m,
            "task JVM CPU ms/M": tasks["cpu"] * per_m,
            "other JVM CPU ms/M": max(jvm - tasks["cpu"], 0.0) * per_m,
            "GC ms/M": tasks["gc"] * per_m,
            "Python CPU ms/M": python * per_m,
            "CPU ms/M": (jvm + python) * per_m,
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _wait_for_batch(query: Any, batch: int, timeout: float = 600) -> Sample:
    """Sample CPU as soon as ``batch`` is reported done (its successor has just begun)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if query.exception() is not None:
            raise RuntimeError(f"the query failed: {query.exception()}")
        last = query.lastProgress
        if last is not None and last["batchId"] >= batch:
            return _sample(last["batchId"])
        time.sleep(0.01)
    raise TimeoutError(f"batch {batch} took over {timeout}s")


def _profile_pass(spark: Any, shapes: list[Shape], args: argparse.Namespace) -> None:
    """Run the Python shapes once more under the data source profiler; print the top functions."""
    import pstats

    spark.conf.set("spark.sql.pyspark.dataSource.profiler", "perf")
    try:
        for shape in shapes:
            if shape.source[0] == "rate-micro-batch" and shape.sink in ("noop", "parquet"):
                continue
            spark.profile.clear()
            _measure(spark, shape, args, _ui_port(spark))
            dump = Path(tempfile.mkdtemp(prefix="pysparksources-pstats-"))
            spark.profile.dump(str(dump), type="perf")
            files = sorted(dump.glob("*.pstats"))
            print(f"\n{shape.label}: Python functions by own time, all batches ({len(files)} UDFs)")
            if files:
                _print_top(pstats.Stats(*map(str, files)))
            shutil.rmtree(dump, ignore_errors=True)
    finally:
        spark.conf.unset("spark.sql.pyspark.dataSource.profiler")


def _print_top(stats: Any, count: int = 10) -> None:
    """The functions with the most own time: ms, calls, where."""
    rows = sorted(stats.stats.items(), key=lambda item: item[1][2], reverse=True)[:count]
    print(f"  {'own ms':>8} {'total ms':>9} {'calls':>8}  function")
    for (path, line, name), (_, calls, own, total, _callers) in rows:
        where = f"{Path(path).name}:{line}({name})" if path != "~" else name
        print(f"  {own * 1000:8.0f} {total * 1000:9.0f} {calls:8d}  {where}")


def _ui_port(spark: Any) -> int:
    return int(spark.sparkContext.uiWebUrl.rsplit(":", 1)[1])


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Every shape once; one row per shape, figures per million rows."""
    from benchmarks._reference import CachedBatchDataSource, DiscardDataSource
    from benchmarks.cluster import free_port
    from pysparksources import register

    spark = bench_session(args, **{"spark.ui.enabled": "true", "spark.ui.port": str(free_port())})
    spark.dataSource.register(CachedBatchDataSource)
    spark.dataSource.register(DiscardDataSource)
    register(spark)  # sources found by Spark's lookup are not profiled: register them here
    shapes = _shapes(args.rows, args.partitions)
    port = _ui_port(spark)
    results = {s.label: _measure(spark, s, args, port) for s in shapes}
    columns = list(next(iter(results.values())))[1:]
    print(f"\n{args.rows:,} rows per batch, {args.partitions} partitions, {args.master}")
    print(f"{'query':<30}" + "".join(f"{c:>19}" for c in columns))
    for label, row in results.items():
        print(f"{label:<30}" + "".join(_cell(c, row[c]) for c in columns))
    if args.profile:
        _profile_pass(spark, shapes, args)
    spark.stop()
    return {"rows": args.rows, "partitions": args.partitions, "master": args.master, **results}


def _cell(column: str, value: float) -> str:
    return f"{value / 1e6:17.2f} M" if column == "rows/s" else f"{value:19.0f}"
