"""pyfile against Spark's file stream source on the same files, plus pyfile's ceiling.

``pyfile_ceiling`` plans exactly like pyfile but its tasks yield batches already parsed (one file
of the same format, parsed once per Python worker and repeated for every file of the task):
what is left is the engine's Arrow hop and task round trip at the same batch shape, i.e. the
best any Python file source can reach. ``planning_times`` measures pyfile's driver work per
batch (latestOffset + partitions) against a log that has already seen many files.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pyspark.sql.datasource import DataSource, InputPartition

from pysparksources.files.planning import FilePartition
from pysparksources.files.reader import FileStreamReader, read_partition

__all__ = ["CeilingFileSource", "generate", "planning_times", "run_stream"]

SCHEMA = "id BIGINT, ts TIMESTAMP, amount DOUBLE, name STRING, qty INT"
_CACHE: dict[str, list[Any]] = {}


class _CeilingReader(FileStreamReader):
    def read(self, partition: InputPartition) -> Iterator[Any]:
        assert isinstance(partition, FilePartition)
        first = partition.splits[0].path
        key = f"{partition.context.reader.format}:{Path(first).parent}"
        if key not in _CACHE:
            one = FilePartition(0, partition.splits[:1], partition.context)
            _CACHE[key] = list(read_partition(one))
        for _ in partition.splits:
            yield from _CACHE[key]


class CeilingFileSource(DataSource):  # type: ignore[misc]
    @classmethod
    def name(cls) -> str:
        return "pyfile_ceiling"

    def streamReader(self, schema: Any) -> Any:
        return _CeilingReader(dict(self.options), schema)


def generate(root: Path, files: int, rows_per_file: int) -> dict[str, Path]:
    """Write the same rows as parquet, csv and JSON Lines once; reuse them afterwards."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    folders = {fmt: root / f"{fmt}-{files}x{rows_per_file}" for fmt in ("parquet", "csv", "jsonl")}
    if all((f / "_DONE").exists() for f in folders.values()):
        return folders
    rng = np.random.default_rng(7)
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        ids = np.arange(i * rows_per_file, (i + 1) * rows_per_file, dtype=np.int64)
        micros = 1_700_000_000_000_000 + ids * 1000
        table = pa.table(
            {
                "id": ids,
                "ts": pa.array(micros, pa.int64()).view(pa.timestamp("us", tz="UTC")),
                "amount": np.round(rng.random(rows_per_file) * 1000, 2),
                "name": pa.array([f"customer-{v % 5000:05d}" for v in ids.tolist()]),
                "qty": rng.integers(0, 100, rows_per_file, dtype=np.int32),
            }
        )
        pq.write_table(table, folders["parquet"] / f"part-{i:05d}.parquet")
        pacsv.write_csv(
            table, folders["csv"] / f"part-{i:05d}.csv", pacsv.WriteOptions(include_header=False)
        )
        with (folders["jsonl"] / f"part-{i:05d}.json").open("w") as out:
            names = table.column("name").to_pylist()
            amounts = table.column("amount").to_pylist()
            qty = table.column("qty").to_pylist()
            stamps = [
                time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(m // 1_000_000))
                + f".{m % 1_000_000:06d}Z"
                for m in micros.tolist()
            ]
            for k, v in enumerate(ids.tolist()):
                out.write(
                    json.dumps(
                        {
                            "id": v,
                            "ts": stamps[k],
                            "amount": amounts[k],
                            "name": names[k],
                            "qty": qty[k],
                        }
                    )
                    + "\n"
                )
    for folder in folders.values():
        (folder / "_DONE").write_text("")
    return folders


def run_stream(
    spark: Any, fmt: str, folder: Path, options: dict[str, str], max_files: int
) -> dict[str, float]:
    """One AvailableNow query into ``noop``; rows/s over the batches' trigger time."""
    reader = spark.readStream.format(fmt).schema(SCHEMA).option("maxFilesPerTrigger", max_files)
    query = (
        reader.options(**options)
        .load(str(folder))
        .writeStream.format("noop")
        .trigger(availableNow=True)
        .start()
    )
    started = time.monotonic()
    query.awaitTermination()
    wall = time.monotonic() - started
    rows = 0
    busy_ms = 0
    for entry in query.recentProgress:
        progress = json.loads(entry.json)
        rows += sum(s.get("numInputRows") or 0 for s in progress["sources"])
        busy_ms += progress["durationMs"].get("triggerExecution", 0)
    return {"rows": rows, "seconds": busy_ms / 1000, "wall": wall, "rps": rows * 1000 / busy_ms}


def planning_times(seen: int, batches: int = 20, per_batch: int = 5) -> dict[str, float]:
    """Median and max ms of latestOffset + partitions with ``seen`` files already in the log."""
    from pyspark.sql.streaming.datasource import ReadMaxFiles
    from pyspark.sql.types import IntegerType, StringType, StructField, StructType

    from pysparksources.files._source_log import VERSION, LogEntry, prune

    work = Path(tempfile.mkdtemp(prefix="pyfile-plan-"))
    src, log = work / "in", work / "log"
    src.mkdir()
    log.mkdir()
    now = int(time.time() * 1000)
    # The seen files were read 100 per batch, one every 10 minutes up to now (1,000 files span
    # 7 days, 100,000 span 694): the log holds the compact file of the last batch, pruned as
    # the source prunes it with the default maxFileAge of 7 days.
    every_ms, max_age_ms, last = 600_000, 7 * 86_400_000, seen // 100 - 1
    history = [
        LogEntry(f"/archived/f{i}.csv", now - (seen - i) * every_ms, i // 100, 1)
        for i in range(seen)
    ]
    kept = prune(history, now - every_ms - max_age_ms, last - 1)
    lines = [VERSION] + [e.to_json() for e in kept]
    (log / f"{last}.compact").write_text("\n".join(lines) + "\n")
    for i in range(batches * per_batch):
        (src / f"new-{i:05d}.csv").write_text("1,a\n")
        os.utime(src / f"new-{i:05d}.csv", (now / 1000 + i, now / 1000 + i))
    options = {
        "path": str(src),
        "format": "csv",
        "sourceLogLocation": str(log),
        "maxFilesPerTrigger": str(per_batch),
    }
    schema = StructType([StructField("a", IntegerType()), StructField("b", StringType())])
    reader = FileStreamReader(options, schema)
    t0 = time.perf_counter()
    offset = reader.initialOffset()
    reader._driver()
    startup_ms = (time.perf_counter() - t0) * 1000
    offset = {"logOffset": last}
    times = []
    for _ in range(batches):
        t0 = time.perf_counter()
        end = reader.latestOffset(offset, ReadMaxFiles(per_batch))
        reader.partitions(offset, end)
        times.append((time.perf_counter() - t0) * 1000)
        offset = end
    reader.stop()
    return {
        "seen": seen,
        "kept": len(kept),
        "startup_ms": startup_ms,
        "median_ms": statistics.median(times),
        "max_ms": max(times),
    }
