"""pyfile's source against Spark's file stream source on the same files, and its planning cost.

Data is generated once into ``--cache`` (outside the repository) and reused: the same rows as
parquet, csv, JSON Lines and Avro. Spark's wheel has no Avro source (spark-avro is a Maven
package), so the avro row has no native figure: compare it with pyfile's rows of the other
formats, which read the same rows. Each format runs Spark's native source, pyfile and pyfile's
ceiling (already-parsed batches, ``pyfile_ceiling``) side by side: AvailableNow,
``maxFilesPerTrigger``, ``noop`` sink. Before that, pyfile's driver work per batch
(latestOffset + partitions) is timed against a log that has already seen many files.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._harness import bench_session

__all__ = ["HELP", "SPARK", "add_arguments", "generate", "planning_times", "run", "run_stream"]

HELP = "pyfile source vs Spark's file stream source (parquet, csv, JSON Lines, Avro)"
SPARK = True
SCHEMA = "id BIGINT, ts TIMESTAMP, amount DOUBLE, name STRING, qty INT"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--rows-per-file", type=int, default=80_000)
    parser.add_argument("--cache", default="/tmp/pysparksources-bench-files")
    parser.add_argument("--formats", nargs="+", default=["parquet", "csv", "jsonl", "avro"])
    parser.add_argument("--max-files", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--skip-stream", action="store_true", help="planning figures only")


def generate(root: Path, files: int, rows_per_file: int) -> dict[str, Path]:
    """Write the same rows as parquet, csv, JSON Lines and Avro once; reuse them afterwards."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    folders = {fmt: root / f"{fmt}-{files}x{rows_per_file}" for fmt in ("parquet", "csv", "jsonl")}
    folders["avro"] = _avro_folder(root, files, rows_per_file, folders["parquet"])
    if all((f / "_DONE").exists() for f in folders.values()):
        return folders
    rng = np.random.default_rng(7)
    for fmt, folder in folders.items():
        if fmt != "avro":
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
    for fmt, folder in folders.items():
        if fmt != "avro":
            (folder / "_DONE").write_text("")
    folders["avro"] = _avro_folder(root, files, rows_per_file, folders["parquet"])
    return folders


# The schema Spark's Avro writer gives SCHEMA's columns (nullable, timestamp-micros).
AVRO_SCHEMA = {
    "type": "record",
    "name": "topLevelRecord",
    "fields": [
        {"name": "id", "type": ["long", "null"]},
        {"name": "ts", "type": [{"type": "long", "logicalType": "timestamp-micros"}, "null"]},
        {"name": "amount", "type": ["double", "null"]},
        {"name": "name", "type": ["string", "null"]},
        {"name": "qty", "type": ["int", "null"]},
    ],
}


def _avro_folder(root: Path, files: int, rows_per_file: int, parquet: Path) -> Path:
    """The parquet files' rows as Avro (snappy, Spark's default), written once by fastavro."""
    folder = root / f"avro-{files}x{rows_per_file}"
    if (folder / "_DONE").exists() or not (parquet / "_DONE").exists():
        return folder  # made with the others when the parquet files are new
    import fastavro
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    schema = fastavro.parse_schema(AVRO_SCHEMA)
    for i in range(files):
        table = pq.read_table(parquet / f"part-{i:05d}.parquet")
        table = table.set_column(1, "ts", table.column("ts").cast(pa.int64()))
        with (folder / f"part-{i:05d}.avro").open("wb") as out:
            fastavro.writer(out, schema, table.to_pylist(), codec="snappy")
    (folder / "_DONE").write_text("")
    return folder


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
    from pyspark.sql.types import IntegerType, StringType, StructField, StructType

    from pysparksources._core.compat import ReadMaxFiles
    from pysparksources._core.option_table import Use
    from pysparksources.files.options import parse_options
    from pysparksources.files.reader import FileStreamReader
    from pysparksources.files.source.source_log import VERSION, LogEntry, prune

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
    reader = FileStreamReader(parse_options(options, Use.STREAM_READ, schema), schema)
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


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Planning figures, then every format's three sources, one row per format and round."""
    from benchmarks._file_ceiling import CeilingFileSource

    planning = [planning_times(n) for n in (1_000, 100_000)]
    results: dict[str, Any] = {"planning": planning}
    for p in planning:
        print(
            f"planning with {p['seen']:>7} files seen ({p['kept']} in the log): "
            f"median {p['median_ms']:.1f} ms/batch, "
            f"max {p['max_ms']:.1f} ms, start-up {p['startup_ms']:.0f} ms"
        )
    if args.skip_stream:
        return results

    folders = generate(Path(args.cache), args.files, args.rows_per_file)
    sizes = {
        fmt: sum(f.stat().st_size for f in folder.iterdir()) / 1e9
        for fmt, folder in folders.items()
    }
    spark = bench_session(args, **{"spark.driver.memory": "4g"})
    spark.dataSource.register(CeilingFileSource)
    streams: dict[str, dict[str, Any]] = {}
    # Each round's pyfile figures by format: the avro row is compared with its round's.
    by_round: dict[int, dict[str, dict[str, float]]] = {}
    for fmt in args.formats:
        folder = folders[fmt]
        pyfile_fmt = "json" if fmt == "jsonl" else fmt
        for round_no in range(args.rounds):
            figures = {}
            for label, source, options in (
                ("native", pyfile_fmt, {}),
                ("pyfile", "pyfile", {"format": pyfile_fmt}),
                ("ceiling", "pyfile_ceiling", {"format": pyfile_fmt}),
            ):
                if label == "native" and fmt == "avro":
                    continue  # not in Spark's wheel (spark-avro comes from Maven)
                if label != "native":
                    options["sourceLogLocation"] = tempfile.mkdtemp(prefix="pyfile-bench-log-")
                figures[label] = run_stream(spark, source, folder, options, args.max_files)
            streams_pyfile = by_round.setdefault(round_no, {})
            base = figures.get("native") or streams_pyfile.get("parquet")
            row: dict[str, Any] = {
                "gb": round(sizes[fmt], 2),
                **{f"{k}_rps": round(v["rps"]) for k, v in figures.items()},
                "rows": figures["pyfile"]["rows"],
                "pyfile_vs_native": round(figures["pyfile"]["rps"] / figures["native"]["rps"], 2)
                if "native" in figures
                else None,
                "pyfile_vs_ceiling": round(figures["pyfile"]["rps"] / figures["ceiling"]["rps"], 2),
            }
            if base is not None and figures["pyfile"]["rows"] != base["rows"]:
                raise RuntimeError(f"{fmt}: a different row count than {base}: {figures}")
            streams_pyfile[fmt] = figures["pyfile"]
            streams[fmt if args.rounds == 1 else f"{fmt} round {round_no}"] = row
            native = (
                f"native {row['native_rps'] / 1e6:5.2f} M rows/s"
                if "native_rps" in row
                else "native   n/a (no spark-avro)"
            )
            others = "  ".join(
                f"pyfile {name} {f['rps'] / 1e6:5.2f}"
                for name, f in streams_pyfile.items()
                if name != fmt and fmt == "avro"
            )
            print(
                f"{fmt:8} {row['gb']:.2f} GB  {native}  "
                f"pyfile {row['pyfile_rps'] / 1e6:5.2f}  ceiling {row['ceiling_rps'] / 1e6:5.2f}  "
                + (
                    f"pyfile/native {row['pyfile_vs_native']:.2f}  "
                    if row["pyfile_vs_native"] is not None
                    else ""
                )
                + f"pyfile/ceiling {row['pyfile_vs_ceiling']:.2f}  {others}",
                flush=True,
            )
    results["streams"] = streams
    results["master"] = args.master
    spark.stop()
    return results
