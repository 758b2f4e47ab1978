"""pyfile's per-trigger cost and state as a folder grows: listing vs notifications vs Spark.

An hourly-partitioned folder (``h=NNNNN/part-NNNNNNN.json``, ``--files-per-hour`` files an
hour, one tiny JSON line each, modification times ``3600 / files-per-hour`` seconds apart)
grows to each of ``--steps`` files. After each step, every stream first takes the whole
backlog (not measured), then ``--triggers`` triggers each find ``--per-trigger`` new files.
All streams read with ``maxFileAge`` (``--max-file-age``, 1d: 24,000 files at 1,000 an hour),
so the seen-files map is bounded by the files inside that window, not by history.

Per trigger it prints:

- planning ms: for pyfile, ``latestOffset`` + ``partitions`` on a ``FileStreamReader`` driven
  in this process (the calls Spark's driver makes to the source's Python process, without the
  JVM round trip); for Spark's file source, ``durationMs.latestOffset`` + ``getBatch`` from
  its progress (a real query into ``noop``, restarted from its checkpoint at each step);
- requests: pyfile's filesystem calls, counted by wrapping fsspec's local filesystem in this
  process (LIST = ``ls`` of one folder, HEAD = ``info``, GET / PUT = opening a file to read /
  write, DELETE = ``rm``; an ``ls`` does not also count the ``info`` it makes per entry), and
  the queue's receive and delete calls. Spark's Hadoop calls are not counted: by construction
  it lists every folder each trigger (one LIST per folder), and its files-discovered counter
  (``HiveCatalogMetrics``) shows how many files its listings returned;
- memory: the deep size of the pyfile reader's driver state (``sys.getsizeof`` over what it
  references: seen-files map, log history, pending notifications) after the step, and the
  peak Python allocation of one more trigger (``tracemalloc``, a listing's transient file
  list); for Spark, the driver JVM's live heap after a full GC (``jcmd``): the whole driver,
  not only the source.

Notifications on local disk: pyfile's notification discovery takes ``s3://`` or ``abfs://``
paths, so this process registers fsspec's ``DirFileSystem`` over the same local folder as
``s3`` and replaces the SQS client with an in-memory queue with SQS's semantics (10 messages a
receive, deleted in batches of 10), into which the benchmark posts one S3 ``ObjectCreated``
record per new file, as S3 does (the backlog of a step goes in messages of 100 records, which
only shortens the unmeasured catch-up). The discovery, admission and source log code is the
product's own.

Spark's file source lists every file again at each trigger, through a Spark job over the
folders. At 1,000,000 local files, on this machine, its first trigger after the restart (the
step's backlog) took about 4 minutes and each later one about 18 s; its driver held 1.4 GB
live, so the session gets ``--driver-memory`` (8g). ``--spark-max-files`` leaves it out of
the larger steps when the run must stay short; a step it does not finish within
``--spark-timeout`` (or fails) is reported and the run goes on without it.

Then, on Azurite (``--azurite-steps``; blob and queue servers from ``.tools``), pyfile in both
modes over ``abfs://`` with real Event Grid-shaped messages in a real Storage queue, its
HTTP requests counted at the Azure SDK's transport. Spark's file source cannot read Azurite
without hadoop-azure, so only pyfile runs there.

A step's new blobs are not uploaded one request each (``--azurite-backlog seed``): Azurite
finds a blob by scanning every blob of the account (LokiJS uses the index of the query's first
field, the account name), so an upload costs time in proportion to the blobs already stored.
Here, 64 concurrent uploads with the SDK's async client went at about 340 blobs/s into an empty
container and 67/s between 10,000 and 30,000 blobs; 8 threads did no better (90,000 uploads
after the first 10,000 ran over 18 minutes). The step's blobs are therefore
written into the blob service's database while it is stopped (one extent file holds their
bytes; it starts again on the same port, and what pyfile reads is what an upload makes), and
their Event Grid messages are sent to the queue ``--upload-concurrency`` at a time. The
triggers' new blobs are uploaded through the SDK, one event a message, as Event Grid sends
them; ``--azurite-backlog upload`` uploads the backlog too.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
import tracemalloc
import types
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

from benchmarks._children import REPOSITORY
from benchmarks._harness import bench_session
from benchmarks._jvm_heap import live_heap_bytes
from benchmarks.cluster import free_port, wait_for_port

__all__ = ["HELP", "SPARK", "add_arguments", "run"]

HELP = "pyfile listing vs notifications vs Spark's file source as a folder grows to 1M files"
SPARK = True
SCHEMA = "i BIGINT"
KINDS = ("LIST", "HEAD", "GET", "PUT", "DELETE", "QUEUE")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--steps", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--triggers", type=int, default=5, help="measured triggers per step")
    parser.add_argument("--per-trigger", type=int, default=10, help="new files per trigger")
    parser.add_argument(
        "--spark-triggers-large",
        type=int,
        default=3,
        help="Spark's measured triggers at steps of 1,000,000 files or more",
    )
    parser.add_argument(
        "--spark-max-files",
        type=int,
        default=10_000_000,
        help="run Spark's file source only at steps up to this many files",
    )
    parser.add_argument(
        "--driver-memory",
        default="8g",
        help="spark.driver.memory of the session (Spark's listing of 1,000,000 files)",
    )
    parser.add_argument(
        "--spark-timeout",
        type=float,
        default=3600,
        help="seconds Spark's file source may take for a step's backlog or one trigger; "
        "past it (or on any failure) Spark is left out of that step and the later ones",
    )
    parser.add_argument("--files-per-hour", type=int, default=1_000)
    parser.add_argument("--max-file-age", default="1d")
    parser.add_argument("--work", default="/tmp/pysparksources-bench-scale")
    parser.add_argument(
        "--azurite-steps",
        type=int,
        nargs="*",
        default=[10_000, 100_000],
        help="blob counts on Azurite (none skips it)",
    )
    parser.add_argument(
        "--azurite-backlog",
        choices=("seed", "upload"),
        default="seed",
        help="how a step's new blobs reach Azurite: written into its database while it is "
        "stopped (seed), or uploaded (each upload costs time in proportion to the blobs "
        "already there: under 100/s past 10,000 blobs here); the triggers' new blobs are uploaded",
    )
    parser.add_argument(
        "--upload-concurrency",
        type=int,
        default=64,
        help="blobs uploaded (and queue messages sent) at once to Azurite",
    )
    parser.add_argument("--no-spark", action="store_true")
    parser.add_argument("--plot", default=str(REPOSITORY / "docs" / "img" / "files-scale.png"))


# -- the growing folder ------------------------------------------------------------------------
class Lake:
    """``root/h=NNNNN/part-NNNNNNN.json``; file ``i`` is modified at ``start + i * spacing``."""

    def __init__(self, root: Path, per_hour: int, total: int) -> None:
        self.root = root
        self.per_hour = per_hour
        self.spacing_ms = 3_600_000 // per_hour
        # The newest file of the largest step lands about now.
        self.start_ms = int(time.time() * 1000) - (total + 10_000) * self.spacing_ms
        self.count = 0
        root.mkdir(parents=True, exist_ok=True)

    def relative(self, i: int) -> str:
        return f"h={i // self.per_hour:05d}/part-{i:07d}.json"

    def add(self, n: int, hidden_first: bool = False) -> list[tuple[str, int, int]]:
        """``n`` more files: (relative path, size, mtime ms) each. ``hidden_first`` writes each
        under a dot name and renames it, so a stream listing meanwhile never sees it half done."""
        made = []
        for i in range(self.count, self.count + n):
            rel = self.relative(i)
            target = self.root / rel
            if i % self.per_hour == 0 or i == self.count:
                target.parent.mkdir(exist_ok=True)
            data = b'{"i":%d}\n' % i
            where = target.with_name("." + target.name) if hidden_first else target
            fd = os.open(where, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.write(fd, data)
            os.close(fd)
            mtime_ms = self.start_ms + i * self.spacing_ms
            os.utime(where, ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000))
            if hidden_first:
                os.rename(where, target)
            made.append((rel, len(data), mtime_ms))
        self.count += n
        return made


# -- counting requests -------------------------------------------------------------------------
@dataclass
class Counts:
    by_kind: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    active: bool = False

    def add(self, kind: str, n: int = 1) -> None:
        if self.active:
            self.by_kind[kind] += n

    def snapshot(self) -> dict[str, int]:
        return dict(self.by_kind)


_depth = threading.local()


def _counted(method: Callable[..., Any], counts: Counts, kind: Callable[..., str | None]) -> Any:
    """``method`` counting its outermost calls only (an ``ls`` calls ``info`` per entry)."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        depth = getattr(_depth, "n", 0)
        if depth == 0:
            which = kind(*args, **kwargs)
            if which is not None:
                counts.add(which)
        _depth.n = depth + 1
        try:
            return method(*args, **kwargs)
        finally:
            _depth.n = depth

    return wrapper


def count_local_filesystem(counts: Counts) -> None:
    """Wrap fsspec's LocalFileSystem in this process: every request pyfile makes to the disk."""
    from fsspec.implementations.local import LocalFileSystem

    def by_mode(self: Any, path: Any, mode: str = "rb", *a: Any, **k: Any) -> str:
        return "GET" if "r" in mode else "PUT"

    for name, kind in (
        ("ls", lambda *a, **k: "LIST"),
        ("info", lambda *a, **k: "HEAD"),
        ("_open", by_mode),
        ("rm", lambda *a, **k: "DELETE"),
        ("rm_file", lambda *a, **k: "DELETE"),
        ("mv", lambda *a, **k: "PUT"),
    ):
        setattr(LocalFileSystem, name, _counted(getattr(LocalFileSystem, name), counts, kind))


def count_azure_http(counts: Counts, queue_port: int) -> None:
    """Count every HTTP request the Azure SDK sends (adlfs's async client, the queue client)."""
    from azure.core.pipeline.transport import AioHttpTransport, RequestsTransport

    def kind(request: Any) -> str:
        url = str(request.url)
        if f":{queue_port}/" in url:
            return "QUEUE"
        if "comp=list" in url:
            return "LIST"
        return {"HEAD": "HEAD", "GET": "GET", "PUT": "PUT", "DELETE": "DELETE"}.get(
            request.method, "GET"
        )

    async_send = AioHttpTransport.send
    sync_send = RequestsTransport.send

    async def send_async(self: Any, request: Any, **kwargs: Any) -> Any:
        counts.add(kind(request))
        return await async_send(self, request, **kwargs)

    def send_sync(self: Any, request: Any, **kwargs: Any) -> Any:
        counts.add(kind(request))
        return sync_send(self, request, **kwargs)

    AioHttpTransport.send = send_async  # type: ignore[method-assign]
    RequestsTransport.send = send_sync  # type: ignore[method-assign]


# -- an SQS double for local disk --------------------------------------------------------------
class SqsDouble:
    """SQS's semantics, in memory: 10 messages a receive, deletions in batches of 10.

    Messages are kept as the files they name and rendered as S3 event JSON when received, so
    a backlog of a million files does not hold a million bodies.
    """

    def __init__(self, bucket: str, prefix: str, counts: Counts) -> None:
        self._bucket, self._prefix, self._counts = bucket, prefix, counts
        self._waiting: deque[tuple[str, list[tuple[str, int, int]]]] = deque()
        self._in_flight: dict[str, list[tuple[str, int, int]]] = {}

    def post(self, files: list[tuple[str, int, int]], per_message: int = 1) -> None:
        for start in range(0, len(files), per_message):
            self._waiting.append((uuid.uuid4().hex, files[start : start + per_message]))

    def _body(self, files: list[tuple[str, int, int]]) -> str:
        records = [
            {
                "eventVersion": "2.1",
                "eventSource": "aws:s3",
                "eventTime": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000))
                + f".{ms % 1000:03d}Z",
                "eventName": "ObjectCreated:Put",
                "s3": {
                    "bucket": {"name": self._bucket},
                    "object": {"key": quote_plus(f"{self._prefix}/{rel}"), "size": size},
                },
            }
            for rel, size, ms in files
        ]
        return json.dumps({"Records": records})

    def receive(self, visibility_timeout_s: int, wait_s: int) -> list[Any]:
        from pysparksources.files.source.notifications.queues import QueueMessage

        self._counts.add("QUEUE")
        out: list[QueueMessage] = []
        while self._waiting and len(out) < 10:
            message_id, files = self._waiting.popleft()
            self._in_flight[message_id] = files
            out.append(QueueMessage(message_id, message_id, self._body(files)))
        return out

    def delete(self, messages: Any) -> int:
        self._counts.add("QUEUE", -(-len(messages) // 10))
        for message in messages:
            self._in_flight.pop(message.id, None)
        return 0

    def hide(self, message: Any, seconds: int) -> None:
        self._counts.add("QUEUE")

    def close(self) -> None:
        pass

    def __len__(self) -> int:
        return len(self._waiting) + len(self._in_flight)


def register_local_as_s3() -> None:
    """``s3://bucket/...`` in this process = a local folder (fsspec's DirFileSystem)."""
    import fsspec
    from fsspec.implementations.dirfs import DirFileSystem

    class LocalAsS3(DirFileSystem):  # type: ignore[misc]
        protocol = "s3"

        @classmethod
        def _strip_protocol(cls, path: Any) -> Any:
            text = str(path)
            return (text[5:] if text.startswith("s3://") else text).rstrip("/")

    fsspec.register_implementation("s3", LocalAsS3, clobber=True)


# -- driving a pyfile reader as Spark's driver does -----------------------------------------------
def deep_size(root: Any) -> int:
    """Bytes of everything ``root`` references, except code, modules, classes, filesystems,
    queue clients and threads (shared, or not state)."""
    from fsspec import AbstractFileSystem

    skip = (
        type,
        types.ModuleType,
        types.FunctionType,
        types.BuiltinFunctionType,
        types.MethodType,
        AbstractFileSystem,
        SqsDouble,
        threading.Thread,
    )
    seen: set[int] = set()
    stack = [root]
    total = 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, skip):
            continue
        seen.add(id(obj))
        if type(obj).__module__.startswith(("azure", "logging", "threading", "_thread")):
            continue
        total += sys.getsizeof(obj)
        stack.extend(gc.get_referents(obj))
    return total


def _log_offset(offset: Any) -> int:
    return int((json.loads(offset) if isinstance(offset, str) else offset)["logOffset"])


class PyfileStream:
    """One pyfile stream: offsets carried from trigger to trigger, committed as Spark would."""

    def __init__(self, label: str, options: dict[str, str], counts: Counts) -> None:
        from pyspark.sql.types import LongType, StructField, StructType

        from pysparksources._core.option_table import Use
        from pysparksources.files.options import parse_options
        from pysparksources.files.reader import FileStreamReader

        self.label = label
        self.counts = counts
        schema = StructType([StructField("i", LongType())])
        self.reader = FileStreamReader(parse_options(options, Use.STREAM_READ, schema), schema)
        self.offset = self.reader.initialOffset()

    def trigger(self) -> tuple[float, int, dict[str, int]]:
        """One trigger: planning ms (latestOffset + partitions), files taken, requests."""
        from pysparksources._core.compat import ReadAllAvailable

        before = self.counts.snapshot()
        self.counts.active = True
        try:
            t0 = time.perf_counter()
            end = self.reader.latestOffset(self.offset, ReadAllAvailable())
            if end != self.offset:
                self.reader.partitions(self.offset, end)
            ms = (time.perf_counter() - t0) * 1000
            taken = 0
            if end != self.offset:
                state = self.reader._state
                assert state is not None
                first, last = _log_offset(self.offset) + 1, _log_offset(end)
                taken = len(state.log.get_range(first, last))
                self.reader.commit(end)
                self.offset = end
        finally:
            self.counts.active = False
        after = self.counts.snapshot()
        return ms, taken, {k: after[k] - before[k] for k in KINDS}

    def catch_up(self) -> int:
        taken = total = 0
        while True:
            _, taken, _ = self.trigger()
            if not taken:
                return total
            total += taken

    def state_bytes(self) -> int:
        return deep_size(self.reader._state)

    def state_entries(self) -> dict[str, int]:
        """What the state holds: the seen-files map (bounded by maxFileAge), the log history
        (pruned at each compaction) and the log's cache of its last 20 batches."""
        state = self.reader._state
        assert state is not None
        recent = sum(len(v) for v in state.log._recent.values())
        return {"seen": len(state.seen), "history": len(state.history), "recent": recent}

    def stop(self) -> None:
        self.reader.stop()


@dataclass
class Figures:
    """One stream's figures at one step."""

    planning_ms: list[float] = field(default_factory=list)
    requests: list[dict[str, int]] = field(default_factory=list)
    files: list[int] = field(default_factory=list)
    state_mb: float | None = None
    peak_mb: float | None = None
    listed_per_trigger: float | None = None
    entries: dict[str, int] | None = None

    def summary(self) -> dict[str, Any]:
        med = statistics.median
        out: dict[str, Any] = {
            "planning_ms": round(med(self.planning_ms), 1) if self.planning_ms else None,
            "planning_ms_max": round(max(self.planning_ms), 1) if self.planning_ms else None,
            "triggers": len(self.planning_ms),
            "files_per_trigger": med(self.files) if self.files else None,
        }
        for kind in KINDS:
            values = [r[kind] for r in self.requests]
            out[kind] = med(values) if values else None
        out["state_mb"] = None if self.state_mb is None else round(self.state_mb, 2)
        out["peak_mb"] = None if self.peak_mb is None else round(self.peak_mb, 1)
        out["listed_per_trigger"] = self.listed_per_trigger
        if self.entries is not None:
            out["entries"] = self.entries
        return out


def measure_pyfile(
    streams: list[PyfileStream],
    new_files: Callable[[], list[tuple[str, int, int]]],
    triggers: int,
) -> dict[str, Figures]:
    """``triggers`` rounds: new files appear, then each stream runs one trigger (interleaved,
    so both see the same machine load); then state size and one trigger's peak allocation."""
    figures = {s.label: Figures() for s in streams}
    for _ in range(triggers + 1):
        new_files()
        for stream in streams:
            fig = figures[stream.label]
            if len(fig.planning_ms) == triggers:  # the last round: peak allocation
                tracemalloc.start()
                stream.trigger()
                fig.peak_mb = tracemalloc.get_traced_memory()[1] / 2**20
                tracemalloc.stop()
                continue
            ms, taken, requests = stream.trigger()
            fig.planning_ms.append(ms)
            fig.files.append(taken)
            fig.requests.append(requests)
    for stream in streams:
        figures[stream.label].state_mb = stream.state_bytes() / 2**20
        figures[stream.label].entries = stream.state_entries()
    return figures


# -- Spark's own file source ---------------------------------------------------------------------
class SparkStream:
    """Spark's JSON file stream into ``noop``, restarted from its checkpoint at every step."""

    def __init__(
        self, spark: Any, folder: Path, checkpoint: Path, max_file_age: str, timeout: float
    ) -> None:
        self.spark, self.folder, self.checkpoint = spark, folder, checkpoint
        self.max_file_age, self.timeout = max_file_age, timeout
        self.rows = 0
        self._batches: set[int] = set()
        self.query: Any = None

    def start(self) -> None:
        self.query = (
            self.spark.readStream.format("json")
            .schema(SCHEMA)
            .option("maxFileAge", self.max_file_age)
            .load(str(self.folder))
            .writeStream.format("noop")
            .option("checkpointLocation", str(self.checkpoint))
            .trigger(processingTime="0 seconds")
            .start()
        )

    def wait_for(self, rows: int) -> list[dict[str, Any]]:
        """Until ``rows`` rows in all were read; the progress of the batches that read rows."""
        deadline = time.monotonic() + self.timeout
        found: list[dict[str, Any]] = []
        while self.rows < rows:
            if self.query.exception() is not None:
                raise RuntimeError(f"Spark's file source failed: {self.query.exception()}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"Spark's file source read {self.rows} of {rows} rows")
            for entry in self.query.recentProgress:
                progress = json.loads(entry.json)
                read = sum(s.get("numInputRows") or 0 for s in progress["sources"])
                if progress["batchId"] in self._batches or not read:
                    continue
                self._batches.add(progress["batchId"])
                self.rows += read
                found.append(progress)
            time.sleep(0.05)
        return found

    def jvm_pid(self) -> int:
        return int(self.spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())

    def files_discovered(self) -> int:
        metrics = self.spark.sparkContext._jvm.org.apache.spark.metrics.source.HiveCatalogMetrics
        return int(metrics.METRIC_FILES_DISCOVERED().getCount())

    def stop(self) -> None:
        if self.query is not None:
            self.query.stop()
            self.query = None


def measure_spark(
    stream: SparkStream, lake: Lake, triggers: int, new_files: Callable[[], object]
) -> Figures:
    figures = Figures()
    t0 = time.monotonic()
    stream.start()
    backlog = stream.wait_for(lake.count)  # the step's backlog: not measured
    durations = ", ".join(
        f"latestOffset {p['durationMs'].get('latestOffset', 0) / 1000:.0f}s + getBatch "
        f"{p['durationMs'].get('getBatch', 0) / 1000:.0f}s of "
        f"{p['durationMs'].get('triggerExecution', 0) / 1000:.0f}s"
        for p in backlog
    )
    print(f"  Spark: backlog taken in {time.monotonic() - t0:.0f}s ({durations})", flush=True)
    discovered = stream.files_discovered()
    batches = 0
    for _ in range(triggers):
        new_files()
        for progress in stream.wait_for(lake.count):
            d = progress["durationMs"]
            figures.planning_ms.append(d.get("latestOffset", 0) + d.get("getBatch", 0))
            figures.files.append(sum(s.get("numInputRows") or 0 for s in progress["sources"]))
            batches += 1
    # Spark lists again whenever it polls for data, so this is per listing, not per batch:
    # the files its listings returned over the measured triggers, over the batches.
    figures.listed_per_trigger = round((stream.files_discovered() - discovered) / max(batches, 1))
    heap = live_heap_bytes(stream.jvm_pid())
    figures.state_mb = None if heap is None else heap / 2**20
    stream.stop()
    return figures


# -- the run -------------------------------------------------------------------------------------
@contextlib.contextmanager
def queue_double(queue: SqsDouble) -> Iterator[None]:
    """Notification discovery opens ``queue`` instead of an SQS client, until exit."""
    from pysparksources.files.source.notifications.discovery import OPEN_QUEUE

    with OPEN_QUEUE.installed(lambda kind, url, settings: queue):
        yield


def _local_streams(work: Path, lake: Lake, counts: Counts, max_age: str) -> tuple[Any, Any]:
    register_local_as_s3()
    common = {"format": "json", "maxFileAge": max_age}
    listing = PyfileStream(
        "pyfile listing",
        {**common, "path": str(lake.root), "sourceLogLocation": str(work / "log-listing")},
        counts,
    )
    notifications = PyfileStream(
        "pyfile notifications",
        {
            **common,
            "path": "s3://bucket/lake",
            "sourceLogLocation": str(work / "log-notifications"),
            "discovery": "notifications",
            "queueUrl": "https://sqs.us-east-1.amazonaws.com/000000000000/files-scale",
            "fs.path": str(work / "s3"),
            "fs.target_protocol": "file",
        },
        counts,
    )
    return listing, notifications


def run_local(args: argparse.Namespace, work: Path) -> list[dict[str, Any]]:
    counts = Counts()
    count_local_filesystem(counts)
    lake = Lake(work / "s3" / "bucket" / "lake", args.files_per_hour, max(args.steps))
    queue = SqsDouble("bucket", "lake", counts)
    with queue_double(queue):
        return _run_local(args, work, lake, counts, queue)


def _run_local(
    args: argparse.Namespace, work: Path, lake: Lake, counts: Counts, queue: SqsDouble
) -> list[dict[str, Any]]:
    listing, notifications = _local_streams(work, lake, counts, args.max_file_age)
    spark_stream = None
    if not args.no_spark:
        spark = bench_session(
            args,
            **{
                "spark.driver.memory": args.driver_memory,
                # The backlog of a step is read in a few large tasks, not one per 32 files:
                # it is not measured, and a million tasks would take most of the run.
                "spark.sql.files.openCostInBytes": "1",
                "spark.sql.shuffle.partitions": "2",
            },
        )
        spark_stream = SparkStream(
            spark, lake.root, work / "spark-checkpoint", args.max_file_age, args.spark_timeout
        )

    def new_files(hidden_first: bool = False) -> list[tuple[str, int, int]]:
        made = lake.add(args.per_trigger, hidden_first)
        queue.post(made)  # one message per file, as S3 sends them
        return made

    rows = []
    for step in sorted(args.steps):
        t0 = time.monotonic()
        queue.post(lake.add(step - lake.count), per_message=100)
        made_s = time.monotonic() - t0
        t0 = time.monotonic()
        caught = {s.label: s.catch_up() for s in (listing, notifications)}
        catch_s = time.monotonic() - t0
        print(
            f"\n{step:,} files: written in {made_s:.0f}s; pyfile backlog taken in "
            f"{catch_s:.0f}s ({caught}); queue holds {len(queue)} messages",
            flush=True,
        )
        figures = measure_pyfile([listing, notifications], new_files, args.triggers)
        if spark_stream is not None and step <= args.spark_max_files:
            triggers = args.spark_triggers_large if step >= 1_000_000 else args.triggers
            t0 = time.monotonic()
            try:
                figures["spark"] = measure_spark(
                    spark_stream, lake, triggers, lambda: new_files(hidden_first=True)
                )
            except Exception as error:  # keep pyfile's figures; report what Spark did
                print(
                    f"  Spark failed at {step:,} files after {time.monotonic() - t0:.0f}s, "
                    f"left out from here: {type(error).__name__}: {str(error)[:2000]}",
                    flush=True,
                )
                with contextlib.suppress(Exception):
                    spark_stream.stop()
                spark_stream = None
            else:
                print(f"  Spark: backlog and {triggers} triggers in {time.monotonic() - t0:.0f}s")
        row = {"files": step, **{k: f.summary() for k, f in figures.items()}}
        rows.append(row)
        _print_step(row)
    listing.stop()
    notifications.stop()
    return rows


def _print_step(row: dict[str, Any]) -> None:
    print(
        f"  {'stream':22} {'plan ms':>8} {'max':>8} {'files':>6} "
        + " ".join(f"{k:>6}" for k in KINDS)
        + f" {'state MB':>9} {'peak MB':>8}"
    )
    for label, f in row.items():
        if not isinstance(f, dict):
            continue
        kinds = " ".join(f"{'-' if f[k] is None else f[k]:>6}" for k in KINDS)
        state = "-" if f["state_mb"] is None else f"{f['state_mb']:.2f}"
        peak = "-" if f["peak_mb"] is None else f"{f['peak_mb']:.1f}"
        print(
            f"  {label:22} {f['planning_ms']:8.1f} {f['planning_ms_max']:8.1f} "
            f"{f['files_per_trigger']:>6} {kinds} {state:>9} {peak:>8}"
        )
        if f.get("entries") is not None:
            print(f"  {'':22} state holds {f['entries']}")
        if f.get("listed_per_trigger") is not None:
            print(f"  {'':22} Spark's listings returned {f['listed_per_trigger']:,} files a batch")
    spark = row.get("spark")
    if spark:
        for label in ("pyfile listing", "pyfile notifications"):
            ratio = row[label]["planning_ms"] / max(spark["planning_ms"], 0.1)
            print(f"  planning {label} / Spark: {ratio:.2f}")
    print(flush=True)


# -- Azurite -------------------------------------------------------------------------------------
class Azurite:
    """Azurite's blob and queue services from ``.tools`` on free ports of 127.0.0.1.

    The blob service keeps its database in ``work`` so that :meth:`seed` can add blobs to it
    while it is stopped; the queue service keeps its messages in memory.
    """

    def __init__(self, work: Path) -> None:
        self.work = work
        self.blob_port, self.queue_port = free_port(), free_port()
        self._blob: subprocess.Popen[bytes] | None = None
        self._queue: subprocess.Popen[bytes] | None = None

    def _start(self, service: str, port: int) -> subprocess.Popen[bytes]:
        tools = REPOSITORY / ".tools" / "node_modules" / ".bin"
        command = [
            str(tools / f"azurite-{service}"),
            f"--{service}Host",
            "127.0.0.1",
            f"--{service}Port",
            str(port),
            "--skipApiVersionCheck",
            "--loose",
            "--silent",
            *(["--location", str(self.work)] if service == "blob" else ["--inMemoryPersistence"]),
            *(["--disableTelemetry"] if service == "queue" else []),
        ]
        log = self.work / f"azurite-{service}.log"
        with log.open("ab") as out:
            process = subprocess.Popen(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                cwd=self.work,
            )
        try:
            wait_for_port(port, process, 60, log)
        except BaseException:
            process.kill()
            raise
        return process

    @staticmethod
    def _stop(process: subprocess.Popen[bytes] | None) -> None:
        if process is not None and process.poll() is None:
            process.terminate()  # Azurite saves its database as it exits
            try:
                process.wait(120)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def __enter__(self) -> Azurite:
        self.work.mkdir(parents=True, exist_ok=True)
        try:
            self._blob = self._start("blob", self.blob_port)
            self._queue = self._start("queue", self.queue_port)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop(self._blob)
        self._stop(self._queue)

    def seed(self, account: str, container: str, blobs: list[tuple[str, bytes]]) -> None:
        """Add ``blobs`` (name, data) to ``container`` as block blobs written now, through the
        blob service's database: stop it, add them (one extent file holds their bytes), start
        it again on the same port. Uploading them one request each would cost too much here:
        Azurite looks a blob up by scanning every blob of the account (LokiJS takes the index
        of the query's first field, the account name), so each upload costs time in
        proportion to the blobs already stored."""
        self._stop(self._blob)
        self._blob = None
        _add_to_blob_database(self.work, account, container, blobs)
        self._blob = self._start("blob", self.blob_port)


def _add_to_blob_database(
    location: Path, account: str, container: str, blobs: list[tuple[str, bytes]]
) -> None:
    """Append block blobs to the LokiJS database of a stopped Azurite blob service."""
    import hashlib
    from datetime import datetime, timezone

    def load(name: str) -> Any:
        return json.loads((location / name).read_text())

    def collection(db: Any, name: str) -> Any:
        return next(c for c in db["collections"] if c["name"] == name)

    db, extent_db = load("__azurite_db_blob__.json"), load("__azurite_db_blob_extent__.json")
    blob_docs, extent_docs = (
        collection(db, "$BLOBS_COLLECTION$"),
        collection(extent_db, "$EXTENTS_COLLECTION$"),
    )
    now = datetime.now(timezone.utc)
    iso = now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"
    now_ms = int(now.timestamp() * 1000)
    extent = str(uuid.uuid4())
    offset = 0
    (location / "__blobstorage__").mkdir(exist_ok=True)
    with open(location / "__blobstorage__" / extent, "wb") as out:
        for name, data in blobs:
            out.write(data)
            blob_docs["maxId"] += 1
            digest = list(hashlib.md5(data).digest())  # Content-MD5
            blob_docs["data"].append(
                {
                    "deleted": False,
                    "accountName": account,
                    "containerName": container,
                    "name": name,
                    "properties": {
                        "creationTime": iso,
                        "lastModified": iso,
                        "etag": f'"0x{uuid.uuid4().hex[:15].upper()}"',
                        "contentLength": len(data),
                        "contentType": "application/octet-stream",
                        "contentMD5": {"type": "Buffer", "data": digest},
                        "blobType": "BlockBlob",
                        "leaseStatus": "unlocked",
                        "leaseState": "available",
                        "serverEncrypted": True,
                        "accessTier": "Hot",
                        "accessTierInferred": True,
                        "accessTierChangeTime": iso,
                    },
                    "snapshot": "",
                    "isCommitted": True,
                    "persistency": {"id": extent, "offset": offset, "count": len(data)},
                    "meta": {"revision": 0, "created": now_ms, "version": 0},
                    "$loki": blob_docs["maxId"],
                }
            )
            offset += len(data)
    extent_docs["maxId"] += 1
    extent_docs["data"].append(
        {
            "id": extent,
            "locationId": "Default",
            "path": extent,
            "size": offset,
            "lastModifiedInMS": now_ms,
            "meta": {"revision": 0, "created": now_ms, "version": 0},
            "$loki": extent_docs["maxId"],
            "LastModifyInMS": now_ms,
        }
    )
    for docs in (blob_docs, extent_docs):
        # LokiJS's binary indices: positions in data, in the order of the field (ASCII here).
        rows = docs["data"]
        for field_name, index in docs["binaryIndices"].items():
            index["values"] = sorted(range(len(rows)), key=lambda i: rows[i][field_name])
            index["dirty"] = False
        if docs["idIndex"] is not None:
            docs["idIndex"] = [row["$loki"] for row in rows]
    for name, value in (
        ("__azurite_db_blob__.json", db),
        ("__azurite_db_blob_extent__.json", extent_db),
    ):
        (location / name).write_text(json.dumps(value))


def _event_grid(container: str, rel: str, size: int, ms: int) -> dict[str, Any]:
    """A BlobCreated event as Event Grid writes it into a Storage queue (from Azurite's
    development account, which pyfile compares with the path's)."""
    return {
        "topic": "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/"
        "providers/Microsoft.Storage/storageAccounts/devstoreaccount1",
        "subject": f"/blobServices/default/containers/{container}/blobs/lake/{rel}",
        "eventType": "Microsoft.Storage.BlobCreated",
        "eventTime": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000))
        + f".{ms % 1000:03d}0000Z",
        "id": uuid.uuid4().hex,
        "data": {"api": "PutBlob", "contentLength": size, "blobType": "BlockBlob"},
        "dataVersion": "",
        "metadataVersion": "1",
    }


async def _in_parallel(calls: Iterable[Callable[[], Any]], concurrency: int) -> None:
    """Await each of ``calls``, at most ``concurrency`` at a time."""
    pending = iter(calls)

    async def worker() -> None:
        for call in pending:  # shared: each call is taken by one worker
            await call()

    await asyncio.gather(*(worker() for _ in range(concurrency)))


def upload_and_publish(
    blob_cs: str,
    queue_cs: str,
    blobs: list[tuple[str, bytes]],
    messages: list[str],
    concurrency: int,
) -> None:
    """Upload ``blobs`` (name, data) to the container ``landing``, then send ``messages`` to
    the queue ``landing-events``, ``concurrency`` requests at a time (the SDK's async clients)."""
    from azure.storage.blob.aio import ContainerClient
    from azure.storage.queue.aio import QueueClient

    async def go() -> None:
        async with (
            ContainerClient.from_connection_string(blob_cs, "landing") as container,
            QueueClient.from_connection_string(queue_cs, "landing-events") as queue,
        ):
            uploads = (partial(container.upload_blob, n, d, overwrite=True) for n, d in blobs)
            await _in_parallel(uploads, concurrency)
            await _in_parallel((partial(queue.send_message, t) for t in messages), concurrency)

    asyncio.run(go())


def run_azurite(args: argparse.Namespace, work: Path) -> list[dict[str, Any]]:
    from azure.storage.blob import ContainerClient
    from azure.storage.queue import QueueClient

    account = "devstoreaccount1"
    key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
    rows: list[dict[str, Any]] = []
    with Azurite(work) as azurite:
        blob_port, queue_port = azurite.blob_port, azurite.queue_port
        counts = Counts()
        count_azure_http(counts, queue_port)
        blob_cs = (
            f"DefaultEndpointsProtocol=http;AccountName={account};AccountKey={key};"
            f"BlobEndpoint=http://127.0.0.1:{blob_port}/{account};"
        )
        queue_cs = (
            f"DefaultEndpointsProtocol=http;AccountName={account};AccountKey={key};"
            f"QueueEndpoint=http://127.0.0.1:{queue_port}/{account};"
        )
        container = ContainerClient.from_connection_string(blob_cs, "landing")
        container.create_container()
        # A folder exists in blob storage once a blob is under it; "_" names are never read.
        container.upload_blob("lake/_started", b"")
        queue = QueueClient.from_connection_string(queue_cs, "landing-events")
        queue.create_queue()
        spacing = 3_600_000 // args.files_per_hour
        start_ms = int(time.time() * 1000) - (max(args.azurite_steps) + 10_000) * spacing
        written = 0

        def add(n: int, per_message: int, seed: bool = False) -> list[tuple[str, int, int]]:
            """``n`` more blobs (uploaded, or ``seed``ed), then their events, ``per_message``
            to a queue message."""
            nonlocal written
            blobs = []
            made = []
            for i in range(written, written + n):
                rel = f"h={i // args.files_per_hour:05d}/part-{i:07d}.json"
                data = b'{"i":%d}\n' % i
                blobs.append((f"lake/{rel}", data))
                made.append((rel, len(data), start_ms + i * spacing))
            events = [_event_grid("landing", *f) for f in made]
            bodies = [events[i : i + per_message] for i in range(0, len(events), per_message)]
            texts = [
                base64.b64encode(json.dumps(b if per_message > 1 else b[0]).encode()).decode()
                for b in bodies
            ]
            if seed:
                azurite.seed(account, "landing", blobs)
                blobs = []
            upload_and_publish(blob_cs, queue_cs, blobs, texts, args.upload_concurrency)
            written += n
            return made

        common = {"format": "json", "maxFileAge": args.max_file_age}
        fs_options = {"path": "abfs://landing/lake", "fs.connection_string": blob_cs}
        listing = PyfileStream(
            "pyfile listing",
            {**common, **fs_options, "sourceLogLocation": str(work / "az-log-listing")},
            counts,
        )
        notifications = PyfileStream(
            "pyfile notifications",
            {
                **common,
                **fs_options,
                "sourceLogLocation": str(work / "az-log-notifications"),
                "discovery": "notifications",
                "queueUrl": f"http://127.0.0.1:{queue_port}/{account}/landing-events",
                "queue.connection_string": queue_cs,
            },
            counts,
        )
        for step in sorted(args.azurite_steps):
            t0 = time.monotonic()
            # Event Grid sends one event a message; the backlog goes 40 to a message (under
            # the queue's 64 KiB) only to keep this unmeasured part short.
            n = step - written
            seed = args.azurite_backlog == "seed"
            add(n, per_message=40, seed=seed)
            made_s = time.monotonic() - t0
            how = "seeded" if seed else f"uploaded {args.upload_concurrency} at a time"
            t0 = time.monotonic()
            caught = {s.label: s.catch_up() for s in (listing, notifications)}
            print(
                f"\nAzurite, {step:,} blobs: {n:,} {how} and their {-(-n // 40):,} messages "
                f"sent in {made_s:.0f}s ({n / max(made_s, 1e-3):,.0f} blobs/s); backlog taken "
                f"in {time.monotonic() - t0:.0f}s ({caught})",
                flush=True,
            )
            figures = measure_pyfile(
                [listing, notifications], lambda: add(args.per_trigger, 1), args.triggers
            )
            row = {"files": step, **{k: f.summary() for k, f in figures.items()}}
            rows.append(row)
            _print_step(row)
        listing.stop()
        notifications.stop()
        queue.close()
        container.close()
    return rows


def plot(local: list[dict[str, Any]], azurite: list[dict[str, Any]], target: Path) -> None:
    """Three panels over the files already seen: planning ms, requests, memory."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    styles = {
        "pyfile listing": ("tab:blue", "o"),
        "pyfile notifications": ("tab:green", "s"),
        "spark": ("tab:red", "^"),
    }
    names = {"spark": "Spark file source"}
    for rows, where, line in ((local, "local disk", "-"), (azurite, "Azurite", ":")):
        if not rows:
            continue
        for label, (color, marker) in styles.items():
            measured = [r for r in rows if label in r]  # Spark may stop at --spark-max-files
            if not measured:
                continue
            x = [r["files"] for r in measured]
            name = f"{names.get(label, label)} ({where})"
            kw = {"color": color, "marker": marker, "linestyle": line, "label": name}
            axes[0].plot(x, [r[label]["planning_ms"] for r in measured], **kw)
            if label != "spark":
                requests = [sum(r[label][k] or 0 for k in KINDS) for r in measured]
                axes[1].plot(x, requests, **kw)
                axes[2].plot(x, [r[label]["state_mb"] for r in measured], **kw)
                peak = {**kw, "linestyle": "--", "label": f"{name}, trigger peak", "alpha": 0.5}
                axes[2].plot(x, [r[label]["peak_mb"] for r in measured], **peak)
            elif where == "local disk":
                axes[2].plot(
                    x,
                    [r[label]["state_mb"] for r in measured],
                    **{**kw, "label": "Spark driver JVM live heap"},
                )
    titles = (
        "planning per trigger (ms, median)",
        "pyfile requests per trigger (median)",
        "driver memory (MB)",
    )
    for ax, title in zip(axes, titles, strict=True):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("files already in the folder")
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=110)
    plt.close(fig)


def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.work)
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    azurite: list[dict[str, Any]] = []
    try:
        local = run_local(args, work)
        if args.azurite_steps:
            try:
                azurite = run_azurite(args, work / "azurite")
            except Exception as error:  # keep the local figures and their plot
                print(f"Azurite part failed: {type(error).__name__}: {error}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    plot(local, azurite, Path(args.plot))
    print(f"plot: {args.plot}")
    return {
        "local": local,
        "azurite": azurite,
        "per_trigger": args.per_trigger,
        "max_file_age": args.max_file_age,
        "master": args.master,
    }
