"""Schemas: inference at ``load()``, and what rescuing costs, pyfile against Spark's reader.

Inference: folders of ``--files`` small files (json, csv with a header and ``inferSchema``,
parquet), each read without a schema by Spark's reader and by pyfile: seconds from ``load()``
to the schema (the inference, listing included), medians of ``--rounds``. pyfile runs twice:
over every file (``schemaSampleFiles`` = the file count: the work Spark does) and with its
default sample (the first 1000 files). Both readers must infer the same schema.

Rescue: ``--rescue-rows`` rows in 4 json and csv files, read whole into noop by Spark's reader
(the schema given), by pyfile the same way, and by pyfile in ``schemaEvolutionMode=rescue``
twice: files whose columns all fit the schema, and files with one column more in every row
(rescued as JSON). Rows/s and ratios; the rescued rows are counted.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks._harness import bench_session

__all__ = ["HELP", "SPARK", "add_arguments", "generate", "run"]

HELP = "schema inference at load() on 1k and 10k files, pyfile vs Spark's reader"
SPARK = True
OPTIONS = {
    "json": {},
    "csv": {"header": "true", "inferSchema": "true"},
    "parquet": {},
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--files", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--rows-per-file", type=int, default=20)
    parser.add_argument("--cache", default="/tmp/pysparksources-bench-schema")
    parser.add_argument("--formats", nargs="+", default=list(OPTIONS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rescue-rows", type=int, default=400_000)
    parser.add_argument(
        "--parts", nargs="+", choices=("rescue", "inference"), default=["rescue", "inference"]
    )


def _lines(fmt: str, first: int, rows: int) -> str:
    if fmt == "csv":
        body = [
            f"{i},name {i},{i % 1000}.5,2024-01-{i % 28 + 1:02d} 10:00:00,true"
            for i in range(first, first + rows)
        ]
        return "id,name,amount,at,ok\n" + "\n".join(body) + "\n"
    return "".join(
        f'{{"id":{i},"name":"name {i}","amount":{i % 1000}.5,"tags":["a","b"],'
        f'"st":{{"x":{i},"y":"z"}}}}\n'
        for i in range(first, first + rows)
    )


def generate(root: Path, fmt: str, files: int, rows: int) -> Path:
    """``files`` files of ``rows`` rows each, written once into ``root`` and reused."""
    folder = root / f"{fmt}-{files}x{rows}"
    if (folder / "_DONE").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        for f in range(files):
            ids = list(range(f * rows, (f + 1) * rows))
            table = pa.table({"id": ids, "name": [f"name {i}" for i in ids]})
            pq.write_table(table, folder / f"part-{f:05d}.parquet")
    else:
        for f in range(files):
            (folder / f"part-{f:05d}.{fmt}").write_text(_lines(fmt, f * rows, rows))
    (folder / "_DONE").write_text("")
    return folder


def _infer(
    spark: Any, source: str, fmt: str, folder: Path, sample: int | None
) -> tuple[float, str]:
    reader = spark.read.options(**OPTIONS[fmt])
    if source == "spark":
        reader = reader.format(fmt)
    else:
        reader = reader.format("pyfile").option("format", fmt)
        if sample is not None:
            reader = reader.option("schemaSampleFiles", str(sample))
    start = time.perf_counter()
    schema = reader.load(str(folder)).schema
    return time.perf_counter() - start, schema.simpleString()


RESCUE_SCHEMA = "id BIGINT, name STRING, amount DOUBLE"


def _rescue_inputs(root: Path, fmt: str, rows: int) -> dict[str, Path]:
    """``fits`` (the schema's columns) and ``extra`` (one more column), 4 files each."""
    folders = {name: root / f"rescue-{fmt}-{name}-{rows}" for name in ("fits", "extra")}
    for name, folder in folders.items():
        if (folder / "_DONE").exists():
            continue
        folder.mkdir(parents=True, exist_ok=True)
        per_file = rows // 4
        for f in range(4):
            ids = range(f * per_file, (f + 1) * per_file)
            if fmt == "csv":
                header = "id,name,amount" + (",extra" if name == "extra" else "")
                lines = [
                    f"{i},name {i},{i % 1000}.5" + (f",x{i}" if name == "extra" else "")
                    for i in ids
                ]
                text = header + "\n" + "\n".join(lines) + "\n"
            else:
                extra = ',"extra":"x{i}"' if name == "extra" else ""
                text = "".join(
                    f'{{"id":{i},"name":"name {i}","amount":{i % 1000}.5'
                    + extra.format(i=i)
                    + "}\n"
                    for i in ids
                )
            (folder / f"part-{f}.{fmt}").write_text(text)
        (folder / "_DONE").write_text("")
    return folders


def _read_rows(spark: Any, how: str, fmt: str, folder: Path) -> tuple[float, int]:
    header = {"header": "true"} if fmt == "csv" else {}
    if how == "spark":
        df = spark.read.format(fmt).options(**header).schema(RESCUE_SCHEMA).load(str(folder))
    else:
        reader = spark.read.format("pyfile").option("format", fmt).options(**header)
        if how == "pyfile":
            df = reader.schema(RESCUE_SCHEMA).load(str(folder))
        else:
            reader = reader.option("schemaEvolutionMode", "rescue")
            df = reader.schema(RESCUE_SCHEMA + ", _rescued_data STRING").load(str(folder))
    start = time.perf_counter()
    df.write.format("noop").mode("overwrite").save()
    seconds = time.perf_counter() - start
    rescued = 0
    if how == "rescue":
        rescued = int(df.selectExpr("count_if(_rescued_data IS NOT NULL)").first()[0])
    return seconds, rescued


def _rescue(spark: Any, args: argparse.Namespace, results: dict[str, Any]) -> None:
    for fmt in ("json", "csv"):
        folders = _rescue_inputs(Path(args.cache), fmt, args.rescue_rows)
        runs = [("spark", "fits"), ("pyfile", "fits"), ("rescue", "fits"), ("rescue", "extra")]
        rates: dict[str, float] = {}
        rescued: dict[str, int] = {}
        for how, name in runs:
            _read_rows(spark, how, fmt, folders[name])  # warm-up
            times = []
            for _ in range(args.rounds):
                took, rescued[f"{how} {name}"] = _read_rows(spark, how, fmt, folders[name])
                times.append(took)
            rates[f"{how} {name}"] = args.rescue_rows / statistics.median(times)
        row = {
            "spark_rps": round(rates["spark fits"]),
            "pyfile_rps": round(rates["pyfile fits"]),
            "rescue_fits_rps": round(rates["rescue fits"]),
            "rescue_extra_rps": round(rates["rescue extra"]),
            "rescue_fits_vs_plain": round(rates["rescue fits"] / rates["pyfile fits"], 2),
            "rescue_extra_vs_plain": round(rates["rescue extra"] / rates["pyfile fits"], 2),
            "rescue_extra_vs_spark": round(rates["rescue extra"] / rates["spark fits"], 2),
            "rescued_rows": rescued["rescue extra"],
        }
        if rescued["rescue fits"] or rescued["rescue extra"] != args.rescue_rows:
            raise RuntimeError(f"{fmt}: rescued rows {rescued}, expected 0 and every row")
        results[f"rescue {fmt}"] = row
        print(
            f"rescue {fmt:4}  Spark {row['spark_rps'] / 1e6:5.2f} M rows/s  pyfile "
            f"{row['pyfile_rps'] / 1e6:5.2f}  rescue (all fit) {row['rescue_fits_rps'] / 1e6:5.2f}"
            f" = {row['rescue_fits_vs_plain']:.2f}x plain  rescue (a column more) "
            f"{row['rescue_extra_rps'] / 1e6:5.2f} = {row['rescue_extra_vs_plain']:.2f}x plain, "
            f"{row['rescue_extra_vs_spark']:.2f}x Spark",
            flush=True,
        )


def run(args: argparse.Namespace) -> dict[str, Any]:
    spark = bench_session(args)
    results: dict[str, Any] = {"rounds": args.rounds, "rows_per_file": args.rows_per_file}
    if "rescue" in args.parts:
        _rescue(spark, args, results)
    for fmt in args.formats if "inference" in args.parts else []:
        for files in args.files:
            folder = generate(Path(args.cache), fmt, files, args.rows_per_file)
            runs = {
                "spark": ("spark", None),
                "pyfile_all": ("pyfile", files),
                "pyfile": ("pyfile", None),
            }
            seconds: dict[str, float] = {}
            schemas: dict[str, str] = {}
            for name, (source, sample) in runs.items():
                _infer(spark, source, fmt, folder, sample)  # warm-up: JIT, Python workers, cache
                times = []
                for _ in range(args.rounds):
                    took, schemas[name] = _infer(spark, source, fmt, folder, sample)
                    times.append(took)
                seconds[name] = statistics.median(times)
            if schemas["spark"] != schemas["pyfile_all"]:
                raise RuntimeError(f"{fmt} {files}: schemas differ: {schemas}")
            row = {
                "spark_s": round(seconds["spark"], 3),
                "pyfile_all_s": round(seconds["pyfile_all"], 3),
                "pyfile_default_s": round(seconds["pyfile"], 3),
                "all_vs_spark": round(seconds["pyfile_all"] / seconds["spark"], 2),
                "default_vs_spark": round(seconds["pyfile"] / seconds["spark"], 2),
            }
            results[f"{fmt} {files}"] = row
            print(
                f"{fmt:7} {files:6} files  Spark {row['spark_s']:6.2f} s  pyfile (every file) "
                f"{row['pyfile_all_s']:6.2f} s = {row['all_vs_spark']:.2f}x  pyfile (default "
                f"sample) {row['pyfile_default_s']:6.2f} s = {row['default_vs_spark']:.2f}x",
                flush=True,
            )
    spark.stop()
    return results
