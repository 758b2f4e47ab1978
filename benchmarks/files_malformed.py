"""Malformed csv and json records: pyfile's PERMISSIVE read against Spark's, on the same files.

Three inputs of the same rows, per format: ``clean`` (no malformed record: pyfile's fast
pyarrow path), ``late`` (one malformed record in the last 1% of each file: nearly all of the
file is read fast) and ``early`` (one in the first 1%: the rest of each file goes through the
Python record-by-record path). Each is read by Spark's reader and by pyfile in PERMISSIVE mode
with a corrupt-record column (``spark.read...write.format("noop")``, a whole-folder batch read);
medians of ``--rounds`` reads, rows/s and ratios. Both readers must find the same number of
malformed records.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks._harness import bench_session

__all__ = ["HELP", "SPARK", "add_arguments", "generate", "run"]

HELP = "pyfile PERMISSIVE csv/json reads (clean, malformed late, early) vs Spark's reader"
SPARK = True
SCHEMA = (
    "id BIGINT, name STRING, amount DOUBLE, price DECIMAL(12,2), day DATE, _corrupt_record STRING"
)
INPUTS = ("clean", "late", "early")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--rows-per-file", type=int, default=200_000)
    parser.add_argument("--cache", default="/tmp/pysparksources-bench-malformed")
    parser.add_argument("--formats", nargs="+", default=["csv", "json"])
    parser.add_argument("--rounds", type=int, default=3)


def _row(fmt: str, i: int) -> str:
    if fmt == "csv":
        return f"{i},name {i},{i % 1000}.5,{i % 9999}.25,2024-01-{i % 28 + 1:02d}"
    return (
        f'{{"id":{i},"name":"name {i}","amount":{i % 1000}.5,"price":{i % 9999}.25,'
        f'"day":"2024-01-{i % 28 + 1:02d}"}}'
    )


def _bad(fmt: str, i: int) -> str:
    return (
        f"{i},name {i},not a number,1,2024-01-01" if fmt == "csv" else f'{{"id":{i},"amount":"x"}}'
    )


def generate(root: Path, fmt: str, files: int, rows: int) -> dict[str, Path]:
    """The three inputs of one format, written once into ``root`` and reused."""
    folders = {name: root / f"{fmt}-{name}-{files}x{rows}" for name in INPUTS}
    for name, folder in folders.items():
        if (folder / "_DONE").exists():
            continue
        folder.mkdir(parents=True, exist_ok=True)
        at = {"clean": None, "late": rows - rows // 100, "early": rows // 100}[name]
        for f in range(files):
            base = f * rows
            lines = [_bad(fmt, base + i) if i == at else _row(fmt, base + i) for i in range(rows)]
            (folder / f"part-{f:03d}.{fmt}").write_text("\n".join(lines) + "\n")
        (folder / "_DONE").write_text("")
    return folders


def _read(spark: Any, source: str, fmt: str, folder: Path) -> tuple[float, tuple[int, int, int]]:
    """Seconds for a whole-folder read into noop; the malformed records, rows and a checksum."""
    reader = spark.read.schema(SCHEMA).option("mode", "PERMISSIVE")
    reader = (
        reader.format(fmt) if source == "spark" else reader.format("pyfile").option("format", fmt)
    )
    df = reader.load(str(folder))
    start = time.perf_counter()
    df.write.format("noop").mode("overwrite").save()
    seconds = time.perf_counter() - start
    # Every column referenced: Spark's csv reader converts only the columns a query uses
    # (a record bad in another column is not malformed then) and refuses the corrupt one alone.
    found = df.selectExpr(
        "count_if(_corrupt_record IS NOT NULL)",
        "count(*)",
        "sum(hash(id, name, amount, price, day))",
    ).first()
    return seconds, (int(found[0]), int(found[1]), int(found[2]))


def run(args: argparse.Namespace) -> dict[str, Any]:
    spark = bench_session(args)
    rows = args.files * args.rows_per_file
    results: dict[str, Any] = {"rows": rows, "rounds": args.rounds}
    for fmt in args.formats:
        folders = generate(Path(args.cache), fmt, args.files, args.rows_per_file)
        for name, folder in folders.items():
            figures: dict[str, float] = {}
            found: dict[str, tuple[int, int, int]] = {}
            for source in ("spark", "pyfile"):
                _read(spark, source, fmt, folder)  # warm-up: JIT, Python workers
                times = []
                for _ in range(args.rounds):
                    seconds, found[source] = _read(spark, source, fmt, folder)
                    times.append(seconds)
                figures[source] = rows / statistics.median(times)
            if found["spark"] != found["pyfile"]:
                raise RuntimeError(f"{fmt} {name}: (malformed, rows, checksum) differ: {found}")
            row = {
                "spark_rps": round(figures["spark"]),
                "pyfile_rps": round(figures["pyfile"]),
                "pyfile_vs_spark": round(figures["pyfile"] / figures["spark"], 2),
                "malformed": found["pyfile"][0],
            }
            results[f"{fmt} {name}"] = row
            print(
                f"{fmt:5} {name:6} Spark {row['spark_rps'] / 1e6:5.2f} M rows/s  "
                f"pyfile {row['pyfile_rps'] / 1e6:5.2f}  "
                f"pyfile/Spark {row['pyfile_vs_spark']:.2f}  malformed {row['malformed']}",
                flush=True,
            )
        clean = results[f"{fmt} clean"]["pyfile_rps"]
        results[f"{fmt} early_vs_clean"] = round(results[f"{fmt} early"]["pyfile_rps"] / clean, 2)
    spark.stop()
    return results
