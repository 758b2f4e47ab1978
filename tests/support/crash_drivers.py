"""Crash drivers: one streaming query per process, so a test can SIGKILL it mid-stream.

A test starts a driver with :func:`start` (``python crash_drivers.py SCENARIO ARGS...`` in its
own process group, so the kill takes the JVM and its Python workers too) and kills it at a
chosen moment with :func:`kill_when`. The restart on the same checkpoint runs on the test's own
session (:func:`restart_here`): a driver other than the killed one, without the cost of
another JVM.

Scenarios:
  pyfile-source SRC LOG OUT CHECKPOINT (continuous|availablenow)   pyfile -> parquet; more
                pyfile options (e.g. an object store's fs.*) as JSON in PYFILE_OPTIONS; with
                NOTIFY_PAUSE_AT, through the source that pauses at a moment of notification
                discovery (support/notification_hooks.py)
  pyfile-sink OUT CHECKPOINT TOTAL PER_BATCH   pyrate -> pyfile, with crash hooks if SINK_CRASH_AT
  pyeventhub OUT CHECKPOINT PER_TRIGGER        pyeventhub -> pyfile (EH_CONN in the environment;
                more options as JSON in EH_OPTIONS; with STORE_CONN and STORE_CONTAINER, into a
                checkpoint store too)
  pyfile-evolving SRC ROOT                     json with schemaLocation (under ROOT, with the
                log, checkpoint and output) -> parquet under AvailableNow, pausing at a step
                of a schema change if EVOLUTION_PAUSE_AT, in EVOLUTION_MODE (addNewColumns)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1]


def start(scenario: str, *args: object, env: dict[str, str] | None = None) -> Any:
    """Run a scenario in its own process group; ``env`` adds to the Spark worker environment."""
    from support.spark_processes import worker_env

    full = worker_env()
    # Spark's Python workers unpickle the hooked sink class, so they need the tests on the path.
    full["PYTHONPATH"] = os.pathsep.join([str(TESTS), full.get("PYTHONPATH", "")]).rstrip(
        os.pathsep
    )
    full.update(env or {})
    return subprocess.Popen(
        [sys.executable, __file__, scenario, *map(str, args)],
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # the JVM and its Python workers die with the group
    )


def kill_when(proc: Any, ready: Callable[[], bool], what: str, timeout: float = 180) -> None:
    """SIGKILL the driver's process group once ``ready()``; fail if it ends or stalls first."""
    import pytest

    try:
        deadline = time.monotonic() + timeout
        while not ready():
            if proc.poll() is not None:
                output = proc.stdout.read().decode() if proc.stdout else ""
                pytest.fail(f"the query ended before {what}:\n{output[-3000:]}")
            assert time.monotonic() < deadline, f"no {what} in {timeout:.0f} s"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)


def restart_here(
    spark: Any, scenario: str, *args: object, env: dict[str, str] | None = None
) -> None:
    """Run ``scenario`` to its end on ``spark`` (a session of this process), e.g. the restart
    after a kill; ``env`` holds what :func:`start` would put in the driver's environment."""
    SCENARIOS[scenario](spark, *map(str, args), env=env or {})


def _session(**conf: str) -> Any:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _run_available_now(df: Any, sink: str, out: str, checkpoint: str) -> None:
    """Everything the source holds, in admission-sized batches (on every Spark line)."""
    from support.streams import drain

    writer = df.writeStream.format(sink).option("path", out)
    drain(writer.option("checkpointLocation", checkpoint), timeout=1e9)


def pyfile_source(
    spark: Any, src: str, log: str, out: str, checkpoint: str, mode: str, env: Mapping[str, str]
) -> None:
    # Storage options travel in the environment, not on a command line others can list.
    extra = json.loads(env.get("PYFILE_OPTIONS", "{}"))
    source = "pyfile"
    if env.get("NOTIFY_PAUSE_AT"):
        from support.notification_hooks import PausingNotificationSource  # for the workers too

        spark.dataSource.register(PausingNotificationSource)
        source = "pyfile_notify_pausing"
    df = (
        spark.readStream.format(source)
        .schema("id BIGINT, name STRING")
        .option("sourceLogLocation", log)
        .option("maxFilesPerTrigger", "1")
        .options(**extra)
        .load(src)
    )
    writer = (
        df.writeStream.format("parquet")
        .option("path", out)
        .option("checkpointLocation", checkpoint)
    )
    if mode == "availablenow":
        from support.streams import drain

        drain(writer, timeout=1e9)
    else:
        print("STARTED", flush=True)
        writer.trigger(processingTime="0 seconds").start().awaitTermination()


def pyfile_sink(
    spark: Any, out: str, checkpoint: str, total: str, per_batch: str, env: Mapping[str, str]
) -> None:
    """pyrate -> the pyfile sink; the hooked sink (crash_hooks) only when a crash point is set,
    so a restart writes through the real one, as a user's restarted job would."""
    sink = "pyfile"
    if env.get("SINK_CRASH_AT"):
        from support.crash_hooks import HookedSource  # importable by this process's workers

        spark.dataSource.register(HookedSource)
        sink = "pyfile_hooked"
    df = (
        spark.readStream.format("pyrate")
        .option("rowsPerBatch", per_batch)
        .option("maxRowsPerTrigger", per_batch)
        .option("totalRows", total)
        .option("numPartitions", 2)
        .load()
        .selectExpr("value AS id")
    )
    _run_available_now(df, sink, out, checkpoint)


def pyeventhub(
    spark: Any, out: str, checkpoint: str, per_trigger: str, env: Mapping[str, str]
) -> None:
    # The connection string travels in the environment, not on a command line others can list.
    reader = (
        spark.readStream.format("pyeventhub")
        .option("connectionString", env["EH_CONN"])
        .option("startingPosition", "start")
        .option("maxEventsPerTrigger", per_trigger)
    )
    if env.get("EH_OPTIONS"):  # more pyeventhub options, as JSON
        reader = reader.options(**json.loads(env["EH_OPTIONS"]))
    if env.get("STORE_CONTAINER"):  # mirror committed positions into a checkpoint store
        reader = reader.option("checkpointStore.container", env["STORE_CONTAINER"]).option(
            "checkpointStore.connectionString", env["STORE_CONN"]
        )
    events = reader.load().selectExpr("partition", "sequenceNumber", "CAST(body AS STRING) AS body")
    _run_available_now(events, "pyfile", out, checkpoint)


def pyfile_evolving(spark: Any, src: str, root: str, env: Mapping[str, str]) -> None:
    """One json file per batch, schema kept under ROOT/schema (addNewColumns by default)."""
    source = "pyfile"
    if env.get("EVOLUTION_PAUSE_AT"):
        from support.evolution_hooks import PausingSource  # importable by the workers

        spark.dataSource.register(PausingSource)
        source = "pyfile_pausing"
    df = (
        spark.readStream.format(source)
        .option("format", "json")
        .option("sourceLogLocation", f"{root}/log")
        .option("schemaLocation", f"{root}/schema")
        .option("maxFilesPerTrigger", "1")
        .option("schemaEvolutionMode", env.get("EVOLUTION_MODE", "addNewColumns"))
        .load(src)
    )
    _run_available_now(df, "parquet", f"{root}/out", f"{root}/ck")


SCENARIOS: dict[str, Callable[..., None]] = {
    "pyfile-source": pyfile_source,
    "pyfile-sink": pyfile_sink,
    "pyeventhub": pyeventhub,
    "pyfile-evolving": pyfile_evolving,
}

if __name__ == "__main__":
    os.environ["PYSPARK_PYTHON"] = sys.executable
    sys.path.insert(0, str(TESTS))  # for support.crash_hooks
    session = _session(**{"spark.sql.shuffle.partitions": "2"})
    SCENARIOS[sys.argv[1]](session, *sys.argv[2:], env=os.environ)
    session.stop()
