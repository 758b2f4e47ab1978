"""End-to-end latency from Event Hubs to files: pyeventhub -> pyfile (parquet) against the SDK's own
consumer writing parquet, at steady send rates; and how long a new query takes to its first rows.

The emulator, the sender and the SDK anchor each run in their own process. A row's latency is
the time its batch became visible to ``spark.read.parquet`` (its ``_spark_metadata`` file
appeared; Spark's readers list only what the manifest names) minus its ``enqueuedTime`` (the
emulator's clock; same machine). The anchor's latency is the time its file was renamed into
place minus the same stamp. Every event sent must arrive exactly once, or the scenario fails.
The pipeline uses Spark's default trigger and no limits, as a user's first query would.

Beside them, at each rate, the floor of any Python source with the same sink and trigger: the
do-nothing ``pybench_clock`` (``_reference``), whose rows arrive on a clock at that rate and
which knows of each the moment it arrives, -> pyfile. Ratios: ours over the SDK's p50, ours
over the floor's, and the floor over the SDK's (how much of the gap is Spark's micro-batch).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks._harness import bench_session
from benchmarks._latency_pieces import CONNECTION_ENV, ManifestWatcher, percentile

__all__ = ["HELP", "SPARK", "add_arguments", "run", "source_options"]

HELP = "end-to-end latency pyeventhub -> pyfile vs the SDK consumer writing parquet"
SPARK = True
_PIECES = [sys.executable, "-m", "benchmarks._latency_pieces"]
OURS = "pyeventhub -> pyfile"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rates", nargs="+", default=["1000", "10000", "max"], help="events/s, or max"
    )
    parser.add_argument("--seconds", type=float, default=20, help="sending time per rate")
    parser.add_argument(
        "--warmup", type=float, default=5, help="seconds sent first and left out of the figures"
    )
    parser.add_argument(
        "--jvm-warmup",
        type=float,
        default=20,
        help="seconds of an unmeasured floor pipeline first, while the JVM's JIT warms up",
    )
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--size", type=int, default=100, help="body bytes")
    parser.add_argument("--first-rounds", type=int, default=3, help="fresh queries timed")
    parser.add_argument("--drain-timeout", type=float, default=300)
    parser.add_argument(
        "--source-option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a pyeventhub option for the measured pipeline (repeatable), e.g. "
        "partitionInfoCacheInterval=250ms",
    )
    parser.add_argument(
        "--also",
        action="append",
        default=[],
        metavar="NAME=VALUE[,NAME=VALUE]",
        help="also run the measured pipeline with these pyeventhub options on top, in the same "
        "run, as a row of its own (repeatable), e.g. partitionInfoCacheInterval=250ms",
    )


def source_options(args: argparse.Namespace) -> dict[str, str]:
    """``--source-option NAME=VALUE`` as a dict; a malformed one is an argument error."""
    return _pairs(args.source_option, "--source-option")


def _pairs(items: list[str], flag: str) -> dict[str, str]:
    options = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise SystemExit(f"{flag} {item!r}: expected NAME=VALUE")
        options[name] = value
    return options


def _variants(args: argparse.Namespace) -> dict[str, dict[str, str]]:
    """Row label -> pyeventhub options: the measured pipeline, then each ``--also``."""
    base = source_options(args)
    found = {OURS: base}
    for item in args.also:
        found[f"{OURS} [{item}]"] = {**base, **_pairs(item.split(","), "--also")}
    return found


class _Visible:
    """Rows per data file and when each file became visible (filled by the watcher thread)."""

    def __init__(self) -> None:
        self.files: dict[str, float] = {}
        self.rows = 0
        self._lock = threading.Lock()

    def add(self, path: str, seen_at: float) -> None:
        import pyarrow.parquet as pq

        rows = pq.read_metadata(path).num_rows
        with self._lock:
            self.files[path] = seen_at
            self.rows += rows

    def first_enqueued(self) -> list[float]:
        """The earliest enqueued time of each file (epoch seconds)."""
        import pyarrow.parquet as pq

        found = []
        for path in self.files:
            column = pq.read_table(path, columns=["enqueuedTime"]).column(0)
            if len(column):
                found.append(min(_epoch_seconds(column)))
        return found

    def latencies_ms(self, since: float) -> list[float]:
        """Latencies of the rows enqueued at or after ``since`` (epoch seconds)."""
        import pyarrow.parquet as pq

        found: list[float] = []
        for path, seen_at in self.files.items():
            column = pq.read_table(path, columns=["enqueuedTime"]).column(0)
            found += [(seen_at - t) * 1000 for t in _epoch_seconds(column) if t >= since]
        return found


def _epoch_seconds(column: Any) -> list[float]:
    """A timestamp column's values as epoch seconds."""
    import pyarrow as pa

    micros = column.cast(pa.timestamp("us", tz=column.type.tz)).cast(pa.int64())
    return [us / 1e6 for us in micros.to_pylist()]


def _send(
    env: dict[str, str], rate: int, seconds: float, args: argparse.Namespace
) -> dict[str, Any]:
    command = [*_PIECES, "send", str(rate), str(seconds), str(args.size), str(args.partitions)]
    done = subprocess.run(command, env=env, stdout=subprocess.PIPE, text=True, check=True)
    sent: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return sent


def _iso(epoch: float) -> str:
    """Spark's progress timestamp format (UTC, milliseconds) for comparisons as text."""
    whole = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch))
    return f"{whole}.{int(epoch * 1000) % 1000:03d}Z"


def _wait(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} within {timeout:.0f}s")
        time.sleep(0.05)


def _figures(latencies: list[float], sent: dict[str, Any]) -> dict[str, Any]:
    return {
        "sent": sent["sent"],
        "send rate": round(sent["rate"]),
        "p50 ms": round(percentile(latencies, 0.5)),
        "p95 ms": round(percentile(latencies, 0.95)),
        "max ms": round(max(latencies, default=0.0)),
    }


def _into_pyfile(source: Any, work: Path) -> Any:
    """Start ``source`` -> pyfile (parquet) under ``work``, Spark's default trigger."""
    return (
        source.writeStream.format("pyfile")
        .option("format", "parquet")
        .option("path", str(work / "out"))
        .option("checkpointLocation", str(work / "ck"))
        .start()
    )


def _drain(query: Any, visible: _Visible, total: int, timeout: float, what: str) -> None:
    """Wait until ``total`` rows are visible; the query's own failure first."""
    _wait(
        lambda: visible.rows >= total or query.exception() is not None,
        timeout,
        f"{total} rows of {what} visible",
    )
    if query.exception() is not None:
        raise RuntimeError(f"{what} failed: {query.exception()}")


def _measured(query: Any, visible: _Visible, sent: dict[str, Any], since: float) -> dict[str, Any]:
    """Latency figures of the rows enqueued from ``since`` on, with the batches run since."""
    batches = [
        p["durationMs"]["triggerExecution"]
        for p in query.recentProgress
        if p["numInputRows"] > 0 and p["timestamp"] >= _iso(since)
    ]
    figures = _figures(visible.latencies_ms(since=since), sent)
    figures["batch ms"] = round(statistics.median(batches)) if batches else 0
    figures["batches"] = len(batches)
    return figures


def _pipeline(
    spark: Any,
    conn: str,
    env: dict[str, str],
    rate: int,
    args: argparse.Namespace,
    options: dict[str, str],
) -> dict[str, Any]:
    """pyeventhub -> pyfile from the end of the hub while the sender runs at ``rate``.

    The warm-up send is left out of the figures: the first rows after an idle start also pay
    for starting the executors' Python workers and attaching receivers (see the first-rows
    figure for that)."""
    work = Path(tempfile.mkdtemp(prefix="pysparksources-latency-"))
    visible = _Visible()
    try:
        source = (
            spark.readStream.format("pyeventhub")
            .option("connectionString", conn)
            .options(**options)
            .load()
            .select("enqueuedTime")
        )
        query = _into_pyfile(source, work)
        try:
            _wait(lambda: query.lastProgress is not None, 120, "the query's first batch")
            with ManifestWatcher(work / "out", visible.add):
                warm = _send(env, rate, args.warmup, args)
                sent = _send(env, rate, args.seconds, args)
                total = warm["sent"] + sent["sent"]
                _drain(query, visible, total, args.drain_timeout, "the pipeline")
        finally:
            query.stop()
        if visible.rows != total:
            raise RuntimeError(f"sent {total} events but {visible.rows} rows are visible")
        return _measured(query, visible, sent, since=sent["started"])
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _floor(spark: Any, rate: int, args: argparse.Namespace) -> dict[str, Any]:
    """The do-nothing Python source -> pyfile at ``rate`` (0: the last measured send rate is
    not known beforehand, so "max" uses 100,000/s), warm-up left out as for ours."""
    from benchmarks._reference import ClockDataSource

    spark.dataSource.register(ClockDataSource)
    per_second = rate or 100_000
    total = int(per_second * (args.warmup + args.seconds))
    work = Path(tempfile.mkdtemp(prefix="pysparksources-latency-floor-"))
    visible = _Visible()
    try:
        with ManifestWatcher(work / "out", visible.add):
            started = time.time()
            source = (
                spark.readStream.format("pybench_clock")
                .option("rowsPerSecond", per_second)
                .option("totalRows", total)
                .option("numPartitions", args.partitions)
                .load()
            )
            query = _into_pyfile(source, work)
            try:
                timeout = args.drain_timeout + args.warmup + args.seconds
                _drain(query, visible, total, timeout, "the floor pipeline")
            finally:
                query.stop()
        # The source's clock starts at its first initialOffset, a moment after start().
        origin = min(visible.first_enqueued(), default=started)
        sent = {"sent": int(per_second * args.seconds), "rate": per_second}
        return _measured(query, visible, sent, since=origin + args.warmup)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _anchor(env: dict[str, str], rate: int, args: argparse.Namespace) -> dict[str, Any]:
    """The SDK consumer writing one parquet file per received batch, same sender, same rate."""
    work = Path(tempfile.mkdtemp(prefix="pysparksources-latency-anchor-"))
    result_file = work / "result.json"
    command = [*_PIECES, "anchor", str(work / "out"), str(args.drain_timeout), str(result_file)]
    proc = subprocess.Popen(
        command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError("the SDK anchor did not attach to the hub")
        warm = _send(env, rate, args.warmup, args)
        sent = _send(env, rate, args.seconds, args)
        proc.stdin.write(f"{warm['sent'] + sent['sent']}\n")
        proc.stdin.flush()
        proc.wait(timeout=args.drain_timeout + 60)
        result = json.loads(result_file.read_text())
        total = warm["sent"] + sent["sent"]
        if result["received"] != total:
            raise RuntimeError(f"the SDK anchor got {result['received']} of {total} events")
        measured = [ms for enqueued, ms in result["latencies_ms"] if enqueued >= sent["started"]]
        return _figures(measured, sent)
    finally:
        if proc.poll() is None:
            proc.kill()
        shutil.rmtree(work, ignore_errors=True)


def _first_rows(start: Any, out: Path) -> float:
    """Seconds from starting a query to its first rows visible in ``out``."""
    seen = threading.Event()
    started = time.time()
    with ManifestWatcher(out, lambda path, at: seen.set()):
        query = start()
        try:
            if not seen.wait(300):
                raise TimeoutError("no rows visible 300 s after the query started")
            elapsed = time.time() - started
        finally:
            query.stop()
    return elapsed


def _first_batch(spark: Any, conn: str, args: argparse.Namespace) -> dict[str, float]:
    """A fresh query's time to its first rows: ours from 1,000 events already in the hub,
    Spark's rate-micro-batch -> parquet file sink with 1,000 rows per batch beside it."""
    from azure.eventhub import EventHubConsumerClient

    with EventHubConsumerClient.from_connection_string(conn, consumer_group="$Default") as c:
        last = {p: c.get_partition_properties(p)["last_enqueued_sequence_number"]
                for p in c.get_partition_ids()}  # fmt: skip
    per_partition = 1000 // len(last)
    positions = json.dumps({p: {"seqNo": max(n - per_partition + 1, 0)} for p, n in last.items()})
    times: dict[str, list[float]] = {"pyeventhub -> pyfile": [], "rate-micro-batch -> parquet": []}
    for _ in range(args.first_rounds):
        work = Path(tempfile.mkdtemp(prefix="pysparksources-first-"))
        try:
            ours = (
                spark.readStream.format("pyeventhub")
                .option("connectionString", conn)
                .option("startingPositions", positions)
                .load()
                .writeStream.format("pyfile")
                .option("format", "parquet")
                .option("path", str(work / "ours"))
                .option("checkpointLocation", str(work / "ours-ck"))
            )
            native = (
                spark.readStream.format("rate-micro-batch")
                .option("rowsPerBatch", 1000)
                .load()
                .writeStream.format("parquet")
                .option("path", str(work / "native"))
                .option("checkpointLocation", str(work / "native-ck"))
            )
            times["pyeventhub -> pyfile"].append(_first_rows(ours.start, work / "ours"))
            times["rate-micro-batch -> parquet"].append(_first_rows(native.start, work / "native"))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return {label: round(statistics.median(v), 2) for label, v in times.items()}


def run(args: argparse.Namespace) -> dict[str, Any]:
    """A JVM warm-up; each rate: our pipeline, then the SDK anchor, then the floor; then fresh
    queries' first rows."""
    from benchmarks._eventhubs import emulator_process

    spark = bench_session(args)
    results: dict[str, Any] = {"master": args.master, "partitions": args.partitions}
    rates = {label: 0 if label == "max" else int(label) for label in args.rates}
    with emulator_process("latency", args.partitions) as conn:
        env = {**os.environ, CONNECTION_ENV: conn}
        if args.jvm_warmup > 0:
            # Unmeasured: the first pipeline of a fresh JVM ran while its JIT compiled Spark's
            # streaming code, and was slower for its whole run (pyeventhub pipelines with
            # partitionInfoCacheInterval 100, 250, 100 ms: p50 347, 304, 264 ms at 1,000/s).
            warm = argparse.Namespace(**{**vars(args), "seconds": args.jvm_warmup, "warmup": 0})
            _floor(spark, next(iter(rates.values())) or 1000, warm)
        for label, rate in rates.items():
            rows = {
                name: _pipeline(spark, conn, env, rate, args, options)
                for name, options in _variants(args).items()
            }
            ours = rows[OURS]
            anchor = _anchor(env, rate, args)
            floor = _floor(spark, rate, args)
            results[label] = {
                **rows,
                "SDK consumer -> parquet": anchor,
                "python floor -> pyfile": floor,
            }
            results[label]["ratios"] = latency_ratios(ours, anchor, floor)
            for name, row in rows.items():
                if name != OURS:
                    for key, value in latency_ratios(row, anchor, floor).items():
                        results[label]["ratios"][f"{name[len(OURS) + 1 :]} {key}"] = value
            print(f"rate {label}: ours {ours}, anchor {anchor}, floor {floor}", flush=True)
        if args.first_rounds:
            results["first rows s"] = _first_batch(spark, conn, args)
    spark.stop()
    _print(results, rates)
    return results


def latency_ratios(
    ours: dict[str, Any], sdk: dict[str, Any], floor: dict[str, Any]
) -> dict[str, Any]:
    """p50 and p95 of ours over the SDK's and over the floor's, and the floor's over the SDK's."""

    def ratio(a: dict[str, Any], b: dict[str, Any], key: str) -> float | None:
        return round(a[key] / b[key], 2) if b[key] else None

    return {
        f"{name} {key.split()[0]}": ratio(a, b, key)
        for key in ("p50 ms", "p95 ms")
        for name, a, b in (("ours x sdk", ours, sdk), ("ours x floor", ours, floor),
                           ("floor x sdk", floor, sdk))
    }  # fmt: skip


def _print(results: dict[str, Any], rates: dict[str, int]) -> None:
    print(f"\n{'requested':>10} {'sent/s':>8} {'pipeline':<26} {'p50 ms':>8} {'p95 ms':>8}"
          f" {'batch ms':>9} {'batches':>8}")  # fmt: skip
    for label in rates:
        for pipeline, row in results[label].items():
            if pipeline == "ratios":
                continue
            print(
                f"{label:>10} {row['send rate']:>8,} {pipeline:<26} {row['p50 ms']:>8,}"
                f" {row['p95 ms']:>8,} {row.get('batch ms', '-'):>9} {row.get('batches', '-'):>8}"
            )
    print()
    for label in rates:
        cells = ", ".join(
            f"{name} {value:.2f}x" if value is not None else f"{name} -"
            for name, value in results[label]["ratios"].items()
        )
        print(f"rate {label}: {cells}")
    first = results.get("first rows s")
    if first is None:
        return
    ours, native = first["pyeventhub -> pyfile"], first["rate-micro-batch -> parquet"]
    print(
        f"\nfirst rows visible after start(): pyeventhub -> pyfile {ours:.2f} s, "
        f"rate-micro-batch -> parquet {native:.2f} s ({ours / native:.2f}x)"
    )
