"""A scheduled job's whole run, in a process of its own: ``python -m benchmarks._cold_job
spark|floor|sdk OUT [MASTER [KEY=VALUE ...]]``.

``spark``: what a scheduled pyeventhub job is: a fresh JVM and session, pyeventhub -> pyfile
(parquet) with ``trigger(availableNow=True)`` from the start of the hub, then the session stops.
``floor``: the same job with the do-nothing Python source (``pybench_cached``, 1,000 rows in
one batch) in place of pyeventhub: what any Python source's cold job costs in Spark.
``sdk``: the script a user would write instead with azure-eventhub alone: read each partition's
last sequence number, receive from the start until every partition reached it, write one
parquet file with pyarrow, exit. Both read the same events (body, partition, sequence number,
enqueued time); the parent times each process from spawn to exit, interpreter start and
imports included. Prints one JSON line: rows written and the seconds of each step.
The connection string arrives in the environment (``CONNECTION_ENV``), never in argv.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks._latency_pieces import CONNECTION_ENV

__all__ = ["sdk_job", "spark_job"]


def spark_job(
    conn: str, out: Path, master: str, conf: dict[str, str], floor: bool = False
) -> dict[str, Any]:
    from benchmarks._children import executor_path_conf
    from pysparksources._commands.local_session import local_session

    began = time.monotonic()
    spark = local_session(
        "pysparksources-bench-cold-job", master=master, conf={**executor_path_conf(), **conf}
    )
    session_s = time.monotonic() - began
    try:
        if floor:
            from benchmarks._reference import CachedBatchDataSource

            spark.dataSource.register(CachedBatchDataSource)
            source = spark.readStream.format("pybench_cached").option("rowsPerBatch", 1000)
        else:
            source = (
                spark.readStream.format("pyeventhub")
                .option("connectionString", conn)
                .option("startingPosition", "start")
            )
        query = (
            source.load()
            .writeStream.format("pyfile")
            .option("format", "parquet")
            .option("path", str(out / "data"))
            .option("checkpointLocation", str(out / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        rows = sum(p["numInputRows"] for p in query.recentProgress)
        query_s = time.monotonic() - began - session_s
    finally:
        spark.stop()
    return {"rows": rows, "session_s": session_s, "query_s": query_s}


def sdk_job(conn: str, out: Path) -> dict[str, Any]:
    """The SDK-only script: the SDK's own calls, one after the other, as its samples do."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from azure.eventhub import EventHubConsumerClient

    began = time.monotonic()
    client = EventHubConsumerClient.from_connection_string(conn, consumer_group="$Default")
    ends = {}
    for pid in client.get_partition_ids():
        props = client.get_partition_properties(pid)
        if not props["is_empty"]:
            ends[pid] = props["last_enqueued_sequence_number"]
    columns: dict[str, list[Any]] = {"body": [], "partition": [], "seq": [], "enqueued": []}
    reached: set[str] = set()
    lock = threading.Lock()
    done = threading.Event()

    def on_event_batch(context: Any, events: list[Any]) -> None:
        with lock:
            for event in events:
                columns["body"].append(event.body_as_str())
                columns["partition"].append(context.partition_id)
                columns["seq"].append(event.sequence_number)
                columns["enqueued"].append(event.enqueued_time)
            if events and events[-1].sequence_number >= ends[context.partition_id]:
                reached.add(context.partition_id)
            if reached >= set(ends):
                done.set()

    metadata_s = time.monotonic() - began
    if ends:
        thread = threading.Thread(
            target=client.receive_batch,
            kwargs={
                "on_event_batch": on_event_batch,
                "starting_position": "-1",
                "max_batch_size": 300,
                "max_wait_time": 1,
            },
            daemon=True,
        )
        thread.start()
        if not done.wait(300):
            raise TimeoutError("the SDK job did not reach the partitions' ends")
    client.close()
    out.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns), out / "events.parquet")
    return {"rows": len(columns["seq"]), "metadata_s": metadata_s}


def _main(argv: list[str]) -> int:
    kind, out, *rest = argv
    conn = os.environ[CONNECTION_ENV]
    if kind in ("spark", "floor"):
        master, *conf = rest
        settings = dict(item.split("=", 1) for item in conf)
        result = spark_job(conn, Path(out), master, settings, floor=kind == "floor")
    elif kind == "sdk":
        result = sdk_job(conn, Path(out))
    else:
        raise SystemExit(f"unknown job {kind!r}: spark, floor or sdk")
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
