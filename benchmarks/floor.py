"""The fixed cost of a micro-batch: every source and sink at one row per batch, beside Spark's own.

Each query runs back to back (processingTime 0) with one row, file or event per batch, so a
batch's time is all overhead. The medians of the engine's own phase timings (``durationMs`` in
the query progress) show where it goes: ``latestOffset`` and ``queryPlanning`` are driver-side
planning (for a Python source, calls into its planner process), ``addBatch`` runs the tasks
(Python workers for a Python source or sink, plus a Python sink's commit), ``walCommit`` and
``commitOffsets`` write the offset and commit logs (and commit the previous batch's source
offsets). Two Python references separate Spark's Python path from our code: a source that
yields one cached row and a sink that discards its batches. Rounds interleave every candidate.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks._harness import bench_session

__all__ = ["HELP", "SPARK", "add_arguments", "run"]

HELP = "fixed cost of a 1-row batch for every source and sink vs Spark's own"
SPARK = True

PHASES = ("latestOffset", "queryPlanning", "addBatch", "walCommit", "commitOffsets")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--batches", type=int, default=10, help="measured batches per query")
    parser.add_argument("--warmup", type=int, default=3, help="batches skipped per query")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds (default 2)")
    parser.add_argument(
        "--no-eventhubs", action="store_true", help="skip pyeventhub (no emulator started)"
    )


@dataclass(frozen=True)
class Candidate:
    """One query shape: what it reads, where it writes, and which native query it is set against."""

    label: str
    kind: str  # "source" or "sink"
    native: str  # label of the native candidate it is compared with ("" for native ones)
    read: tuple[str, dict[str, str], str | None]  # format, options, path
    write: tuple[str, dict[str, str]]  # format, options ("path" given per run)


@dataclass
class Phases:
    """Per-batch phase timings (ms) of one candidate over every round."""

    trigger: list[float] = field(default_factory=list)
    phases: dict[str, list[float]] = field(default_factory=dict)

    def add(self, progress: dict[str, Any]) -> None:
        durations = progress["durationMs"]
        self.trigger.append(durations["triggerExecution"])
        for name in PHASES:
            self.phases.setdefault(name, []).append(durations.get(name, 0))

    def medians(self) -> dict[str, float]:
        out = {"trigger": statistics.median(self.trigger)}
        out.update({k: statistics.median(v) for k, v in self.phases.items()})
        return out


def _candidates(files: Path, conn: str | None) -> list[Candidate]:
    one_row = {"rowsPerBatch": "1", "numPartitions": "1"}
    two = {"rowsPerBatch": "1", "numPartitions": "2"}  # a task per core, as by default
    rate = ("rate-micro-batch", one_row, None)
    noop: tuple[str, dict[str, str]] = ("noop", {})
    found = [
        Candidate("rate-micro-batch", "source", "", rate, noop),
        Candidate("python reference source", "source", "rate-micro-batch",
                  ("pybench_cached", {**one_row, "chunkRows": "0"}, None), noop),
        Candidate("pyrate", "source", "rate-micro-batch", ("pyrate", one_row, None), noop),
        Candidate("rate-micro-batch, 2 tasks", "source", "", ("rate-micro-batch", two, None), noop),
        Candidate("python reference, 2 tasks", "source", "rate-micro-batch, 2 tasks",
                  ("pybench_cached", {**two, "chunkRows": "0"}, None), noop),
        Candidate("pyrate, 2 tasks", "source", "rate-micro-batch, 2 tasks",
                  ("pyrate", two, None), noop),
        Candidate("parquet file source", "source", "",
                  ("parquet", {"maxFilesPerTrigger": "1"}, str(files)), noop),
        Candidate("pyfile source", "source", "parquet file source",
                  ("pyfile", {"format": "parquet", "maxFilesPerTrigger": "1"}, str(files)), noop),
        Candidate("parquet file sink", "sink", "", rate, ("parquet", {})),
        Candidate("python reference sink", "sink", "parquet file sink", rate,
                  ("pybench_discard", {})),
        Candidate("pyfile sink", "sink", "parquet file sink", rate,
                  ("pyfile", {"format": "parquet"})),
    ]  # fmt: skip
    if conn is not None:
        events = {"connectionString": conn, "maxEventsPerTrigger": "1"}
        found += [
            Candidate("pyeventhub source", "source", "parquet file source",
                      ("pyeventhub", events, None), noop),
            Candidate("pyeventhub sink", "sink", "parquet file sink",
                      ("rate-micro-batch", one_row, None),
                      ("pyeventhub", {"connectionString": conn})),
        ]  # fmt: skip
    return found


def _run_one(
    spark: Any, c: Candidate, work: Path, batches: int, warmup: int
) -> list[dict[str, Any]]:
    """Run ``c`` for ``warmup + batches`` batches in a fresh checkpoint; return their progress."""
    run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=work))
    fmt, options, path = c.read
    reader = spark.readStream.format(fmt).options(**options)
    if fmt in ("parquet", "pyfile"):
        reader = reader.schema("id BIGINT, name STRING")
    if fmt == "pyfile":
        reader = reader.option("sourceLogLocation", str(run_dir / "source-log"))
    df = reader.load(path) if path else reader.load()
    if c.write[0] == "pyeventhub":
        df = df.selectExpr("CAST(value AS STRING) AS body")
    sink, sink_options = c.write
    writer = df.writeStream.format(sink).options(**sink_options)
    writer = writer.option("checkpointLocation", str(run_dir / "ck"))
    if sink not in ("noop", "pybench_discard", "pyeventhub"):
        writer = writer.option("path", str(run_dir / "out"))
    query = writer.trigger(processingTime="0 seconds").start()
    wanted = warmup + batches
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            if query.exception() is not None:
                raise RuntimeError(f"{c.label} failed: {query.exception()}")
            last = query.lastProgress
            if last is not None and last["batchId"] >= wanted - 1:
                break
            time.sleep(0.05)
        else:
            raise TimeoutError(f"{c.label}: {wanted} batches took over 300 s")
    finally:
        query.stop()
    kept = [p for p in query.recentProgress if warmup <= p["batchId"] < wanted]
    rows = [sum(s.get("numInputRows") or 0 for s in p["sources"]) for p in kept]
    if len(kept) != batches or any(n != 1 for n in rows):
        raise RuntimeError(f"{c.label}: expected one row per batch, got {rows}")
    return kept


def _one_row_files(folder: Path, count: int) -> None:
    """``count`` parquet files of one row each, oldest first (a new file per batch)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True)
    now = time.time() - count
    for i in range(count):
        path = folder / f"part-{i:05d}.parquet"
        pq.write_table(pa.table({"id": pa.array([i], pa.int64()), "name": ["x"]}), path)
        os.utime(path, (now + i, now + i))


@contextmanager
def _event_backlog(events: int, enabled: bool) -> Iterator[str | None]:
    if not enabled:
        yield None
        return
    from benchmarks._eventhubs import emulator_process, fill_backlog

    with emulator_process("floor", 1) as conn:
        fill_backlog(conn, 1, events, 16)
        yield conn


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Every candidate once per round; print phase medians and ratios to the native query."""
    from benchmarks._reference import CachedBatchDataSource, DiscardDataSource

    spark = bench_session(args)
    spark.dataSource.register(CachedBatchDataSource)
    spark.dataSource.register(DiscardDataSource)
    per_query = args.warmup + args.batches + 2
    with ExitStack() as stack:
        work = Path(tempfile.mkdtemp(prefix="pysparksources-floor-"))
        stack.callback(shutil.rmtree, work, True)
        _one_row_files(work / "files", per_query)
        conn = stack.enter_context(_event_backlog(per_query * args.rounds, not args.no_eventhubs))
        candidates = _candidates(work / "files", conn)
        measured = {c.label: Phases() for c in candidates}
        for round_no in range(args.rounds):
            for c in candidates:
                if c.read[0] == "pyeventhub":  # one backlog, read once per round
                    c = _from_sequence(c, round_no * per_query)
                for progress in _run_one(spark, c, work, args.batches, args.warmup):
                    measured[c.label].add(progress)
            print(f"round {round_no + 1} done", flush=True)
    spark.stop()
    return _report(candidates, measured, args)


def _from_sequence(c: Candidate, seq_no: int) -> Candidate:
    options = dict(c.read[1])
    options["startingPosition"] = json.dumps({"seqNo": seq_no})
    return Candidate(c.label, c.kind, c.native, (c.read[0], options, c.read[2]), c.write)


def _report(
    candidates: list[Candidate], measured: dict[str, Phases], args: argparse.Namespace
) -> dict[str, Any]:
    medians = {label: m.medians() for label, m in measured.items()}
    print(
        f"\nmedian ms per 1-row batch, {args.master}, {args.batches} batches x {args.rounds} "
        "rounds per query (processingTime 0)"
    )
    header = f"{'query':<26}{'trigger':>9}" + "".join(f"{p:>15}" for p in PHASES)
    print(header + f"{'vs native':>11}")
    summary: dict[str, Any] = {"master": args.master, "medians": medians, "ratios": {}}
    for c in candidates:
        m = medians[c.label]
        ratio = ""
        if c.native:
            value = m["trigger"] / medians[c.native]["trigger"]
            summary["ratios"][c.label] = round(value, 2)
            ratio = f"{value:10.2f}x"
        cells = "".join(f"{m[p]:>15.0f}" for p in PHASES)
        print(f"{c.label:<26}{m['trigger']:>9.0f}{cells} {ratio}")
    return summary
