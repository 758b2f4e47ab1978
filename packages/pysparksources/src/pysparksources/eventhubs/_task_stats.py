"""The ``taskStatsPath`` diagnostics: one JSON line per read task, for measuring the receiver
cache and where partitions run (docs/pyeventhub-source.md lists the fields).

Kept out of the reader: a task calls :func:`record` once, after its range is read, and it does
nothing unless the option is set.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pysparksources.eventhubs.planning import EventHubPartition

__all__ = ["record"]


def _executor_id() -> str:
    """Which executor runs this worker, as far as a Python worker can tell.

    PySpark does not hand Python workers their executor id. Kubernetes sets SPARK_EXECUTOR_ID;
    elsewhere a worker runs in its executor's working directory, named after the executor on a
    standalone cluster (``<app-id>/<executor-id>``) and after the container on YARN.
    """
    return os.environ.get("SPARK_EXECUTOR_ID") or os.path.basename(os.getcwd())


def _task_context() -> tuple[str | None, str | None]:
    try:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        if ctx is None:
            return None, None
        batch = ctx.getLocalProperty("streaming.sql.batchId")
        return batch, _executor_id()
    except Exception:
        return None, None


def record(part: EventHubPartition, reuse: str, events: int, seconds: float) -> None:
    """Append this task's line to ``<taskStatsPath>/tasks-<pid>.jsonl`` when the option is set."""
    path = part.config.task_stats_path
    if path is None:
        return
    batch, executor = _task_context()
    line = {
        "batchId": None if batch is None else int(batch),
        "partition": part.partition_id,
        "start": part.start,
        "until": part.until,
        "executorId": executor,
        "host": os.uname().nodename,
        "pid": os.getpid(),
        "cacheHit": reuse != "miss",
        "reuse": reuse,
        "events": events,
        "seconds": round(seconds, 6),
    }
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"tasks-{os.getpid()}.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps(line, sort_keys=True) + "\n")
