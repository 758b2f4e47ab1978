"""Where a received event's CPU goes on one core, stage by stage, without Spark.

``bench eventhubs-scale`` measures the executors' Python workers and JVMs per event; this says
what, inside the Python side, no Python source can avoid. The emulator, in its own process,
serves a backlog of ``--partitions`` x ``--per-partition`` events of ``--size`` bytes; then each
stage reads all of it in a fresh process pinned to one core, one receiving thread per
partition, and reports its CPU seconds (imports and connection set-up excluded):

- ``sdk``: one plain ``EventHubConsumerClient``, ``receive_batch`` per partition, events dropped
  in the callback (what the SDK processes of ``bench eventhubs-scale`` do per event);
- ``receivers``: pyeventhub's positioned receivers (queue, byte budget, read-ahead), a thread
  per partition taking events up to the range's end and dropping them;
- ``task``: one read task of every partition as an executor runs it
  (``reader.read_task``: the ranges at once, rows into Arrow record batches, the worker's
  garbage collector collecting young objects rarely);
- ``task, default gc``: the same with the collector's default thresholds.

Stages run in turn, ``--rounds`` times, and medians are reported; the differences between
consecutive stages are what each layer adds per event.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

from benchmarks._eventhubs import emulator_process, fill_backlog

__all__ = ["HELP", "SPARK", "STAGES", "add_arguments", "run"]

HELP = "one core, no Spark: CPU per event of the SDK, our receivers, a read task, Arrow, gc"
SPARK = False
STAGES = ("sdk", "receivers", "task", "task, default gc")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--per-partition", type=int, default=20_000)
    parser.add_argument("--size", type=int, default=100, help="event body bytes (100)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600)


# -- one stage, in a child process ---------------------------------------------------------


def _pin_to_one_core() -> None:
    cores = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cores[-1]})


def _sdk(conn: str, partitions: int, count: int) -> int:
    from benchmarks.eventhubs_scale import _consume  # what bench eventhubs-scale's SDK side runs

    received = _consume(conn, {str(p): count for p in range(partitions)}, timeout=600)
    return sum(received["received"].values())


def _ranges(conn: str, partitions: int, count: int) -> tuple[Any, ...]:
    from pysparksources._core.option_table import Use
    from pysparksources.eventhubs.options import parse_options
    from pysparksources.eventhubs.planning import EventHubPartition

    config = parse_options({"connectionString": conn}, Use.STREAM_READ)
    return tuple(EventHubPartition(config, str(p), 0, count, 0) for p in range(partitions))


def _receivers(conn: str, partitions: int, count: int) -> int:
    from pysparksources.eventhubs._receivers import acquire, release

    taken = [0] * partitions

    def drain(part: Any) -> None:
        receiver, _ = acquire(part.config, part.partition_id, part.start)
        for events in receiver.take(part.until, lambda _expected, _got: None):
            taken[int(part.partition_id)] += len(events)
        release(receiver, False)

    threads = [
        threading.Thread(target=drain, args=(part,)) for part in _ranges(conn, partitions, count)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(taken)


def _task(conn: str, partitions: int, count: int, rarer_gc: bool) -> int:
    from pysparksources.eventhubs import reader
    from pysparksources.eventhubs._task_ranges import read_ranges
    from pysparksources.eventhubs.planning import EventHubTask

    task = EventHubTask(_ranges(conn, partitions, count))
    if rarer_gc:
        batches = reader.read_task(task)
    else:
        batches = read_ranges(task.ranges, reader.read_partition)
    return sum(batch.num_rows for batch in batches)


def _child(argv: list[str]) -> int:
    """``STAGE PARTITIONS PER_PARTITION`` (the connection string on stdin): one JSON line."""
    stage, partitions, count = argv[0], int(argv[1]), int(argv[2])
    conn = sys.stdin.readline().strip()
    _pin_to_one_core()
    import azure.eventhub  # noqa: F401 -- imports are not measured

    import pysparksources.eventhubs.reader  # noqa: F401
    from pysparksources._core.worker_gc import freeze_imports

    freeze_imports()  # as a Spark read task does before reading
    cpu, wall = time.process_time(), time.monotonic()
    if stage == "sdk":
        events = _sdk(conn, partitions, count)
    elif stage == "receivers":
        events = _receivers(conn, partitions, count)
    else:
        events = _task(conn, partitions, count, rarer_gc=stage == "task")
    print(
        json.dumps(
            {"events": events, "cpu": time.process_time() - cpu, "wall": time.monotonic() - wall}
        ),
        flush=True,
    )
    return 0


# -- the run ---------------------------------------------------------------------------------


def _stage(conn: str, stage: str, args: argparse.Namespace) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks.eventhubs_stages", stage]
    command += [str(args.partitions), str(args.per_partition)]
    done = subprocess.run(
        command, input=conn + "\n", capture_output=True, text=True, timeout=args.timeout
    )
    if done.returncode != 0:
        raise RuntimeError(f"stage {stage} failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    expected = args.partitions * args.per_partition
    if result["events"] != expected:
        raise RuntimeError(f"stage {stage} read {result['events']} events, expected {expected}")
    return result


def run(args: argparse.Namespace) -> dict[str, Any]:
    total = args.partitions * args.per_partition
    cpus: dict[str, list[float]] = {stage: [] for stage in STAGES}
    with emulator_process("stages", args.partitions) as conn:
        fill_backlog(conn, args.partitions, total, args.size)
        for round_no in range(args.rounds):
            for stage in STAGES:
                cpus[stage].append(_stage(conn, stage, args)["cpu"])
            figures = ", ".join(f"{s} {c[-1]:.2f} s" for s, c in cpus.items())
            print(f"round {round_no + 1}: {figures}")
    micros = {stage: statistics.median(c) * 1e6 / total for stage, c in cpus.items()}
    print(
        f"\n{total:,} events of {args.size} B on {args.partitions} partitions, one core, "
        f"median of {args.rounds} rounds: CPU per event"
    )
    previous = None
    for stage in STAGES:
        added = "" if previous is None else f"  (+{micros[stage] - micros[previous]:.1f})"
        print(f"  {stage:<18} {micros[stage]:6.1f} µs{added}")
        previous = stage
    return {
        "events": total,
        "partitions": args.partitions,
        "size": args.size,
        "rounds": args.rounds,
        "cpu_us_per_event": {stage: round(value, 1) for stage, value in micros.items()},
    }


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
