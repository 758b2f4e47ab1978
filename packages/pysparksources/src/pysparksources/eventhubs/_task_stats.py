"""The ``taskStatsPath`` diagnostics: one JSON line per range a read task reads, for measuring
the receiver cache and where partitions run (docs/pyeventhub-source.md lists the fields).

Kept out of the reader: a task calls :func:`record` once per range, after it is read, and it does
nothing unless the option is set. Diagnostics never fail a task: a line that cannot be written
is dropped, with one warning per process.

The folder is the user's choice and may well be shared (``/tmp/stats``, a team folder), so
whoever else can write there must not be able to aim our appends at another file of this
user's: the folder's own name is followed if it is a symbolic link of this user's or root's
(as the kernel's ``protected_symlinks`` would), never one of another user's; the file is
opened without following a link, without blocking (a FIFO planted under its name), and written
only if it is a regular file of this user's with no other name (a hard link to another file).
Who may read the folder is the user's choice too: the lines hold host names, pids, partition
ids, sequence numbers and timings, nothing secret.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import threading

from pysparksources.eventhubs import NAME
from pysparksources.eventhubs.planning import EventHubPartition

__all__ = ["record"]

log = logging.getLogger(__name__)
_OPEN_FLAGS = (
    os.O_WRONLY
    | os.O_APPEND
    | os.O_CREAT
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_warned = False
_warn_lock = threading.Lock()


def _executor_id() -> str:
    """Which executor runs this worker, as far as a Python worker can tell.

    PySpark does not hand Python workers their executor id. Kubernetes sets SPARK_EXECUTOR_ID;
    elsewhere a worker runs in its executor's working directory, named after the executor on a
    standalone cluster (``<app-id>/<executor-id>``) and after the container on YARN.
    """
    return os.environ.get("SPARK_EXECUTOR_ID") or os.path.basename(os.getcwd())


def _task_context() -> tuple[str | None, str | None, int | None]:
    try:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        if ctx is None:
            return None, None, None
        batch = ctx.getLocalProperty("streaming.sql.batchId")
        return batch, _executor_id(), int(ctx.taskAttemptId())
    except Exception:
        return None, None, None


def record(
    part: EventHubPartition, reuse: str, events: int, seconds: float, ranges_in_task: int = 1
) -> None:
    """Append this range's line to ``<taskStatsPath>/tasks-<pid>.jsonl`` when the option is
    set: one per range, so a task that reads several partitions writes several lines, with the
    same ``taskAttemptId``."""
    path = part.config.task_stats_path
    if path is None:
        return
    batch, executor, attempt = _task_context()
    line = {
        "batchId": None if batch is None else int(batch),
        "partition": part.partition_id,
        "start": part.start,
        "until": part.until,
        "executorId": executor,
        "host": os.uname().nodename,
        "pid": os.getpid(),
        "taskAttemptId": attempt,
        "rangesInTask": ranges_in_task,
        "cacheHit": reuse != "miss",
        "reuse": reuse,
        "events": events,
        "seconds": round(seconds, 6),
    }
    text = json.dumps(line, sort_keys=True) + "\n"
    try:
        problem = _append(path, f"tasks-{os.getpid()}.jsonl", text.encode())
    except OSError as error:
        problem = str(error.strerror or error)
    if problem is not None:
        _warn_once(path, problem)


def _append(path: str, name: str, data: bytes) -> str | None:
    """Append ``data`` to ``name`` in the folder; why not, if it was not."""
    folder, problem = _open_folder(path)
    if folder is None:
        return problem
    try:
        fd = os.open(name, _OPEN_FLAGS, 0o644, dir_fd=folder)
    except OSError as error:
        return _file_problem(folder, name) or f"{name}: {error.strerror}"
    finally:
        os.close(folder)
    try:
        seen = os.fstat(fd)
        if not stat.S_ISREG(seen.st_mode):
            return f"{name} is not a regular file"
        if seen.st_uid != os.geteuid():
            return f"{name} belongs to user id {seen.st_uid}, not to this user"
        if seen.st_nlink != 1:
            return f"{name} has {seen.st_nlink} names (a hard link to another file)"
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        return None
    finally:
        os.close(fd)


def _open_folder(path: str) -> tuple[int | None, str | None]:
    """The folder, made if missing, or why not: its own name is followed only if it is a link
    of this user's or root's."""
    os.makedirs(path, exist_ok=True)
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0)), None
    except OSError:
        seen = os.lstat(path)
        if not stat.S_ISLNK(seen.st_mode):
            return None, "it is not a folder"
        if seen.st_uid not in (os.geteuid(), 0):
            return None, f"it is a symbolic link of user id {seen.st_uid}'s, not of this user's"
    return os.open(path, flags), None


def _file_problem(folder: int, name: str) -> str | None:
    try:
        seen = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except OSError:
        return None
    if stat.S_ISLNK(seen.st_mode):
        return f"{name} is a symbolic link"
    if stat.S_ISFIFO(seen.st_mode):
        return f"{name} is a FIFO"
    return None


def _warn_once(path: str, reason: str) -> None:
    global _warned
    with _warn_lock:
        if _warned:
            return
        _warned = True
    log.warning(
        "%s: taskStatsPath %s: %s; this process writes no task statistics there (the tasks "
        "go on). Choose a folder of your own, or remove what is in the way.",
        NAME,
        path,
        reason,
    )
