"""Schema inference's memory on one large JSON Lines file: peak RSS against a stated bound.

Writes one JSON Lines file of ``--gb`` GiB (the rows of ``files-schema``: numbers, a string,
an array and a nested object) into a fresh temporary folder, then runs pyfile's inference
(``load()`` without a schema runs exactly this on the driver) in a Python process of its own,
twice: over the whole file (``schemaSampleBytes`` larger than the file) and with the default
sample. Each child reports its peak RSS (``ru_maxrss``) after importing everything and after
inferring; the growth must stay under ``--bound-mib`` or the run fails. Compared with the file
itself: before inference was streamed, a file was read whole and its growth was 3.6x its size
(92.6 MB: +330 MiB). No Spark session: the same code runs in Spark's planner process.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["HELP", "SPARK", "add_arguments", "run"]

HELP = "peak RSS of schema inference over a multi-GB JSON Lines file, against a bound"
SPARK = False
ROWS_PER_WRITE = 100_000

CHILD = """
import json, resource, sys, time
from pysparksources._core.option_table import Use
from pysparksources.files.schema.inference import infer_schema
from pysparksources.files.options import parse_options

options = {"path": sys.argv[1], "format": "json", **json.loads(sys.argv[2])}
config = parse_options(options, Use.READ)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
schema = infer_schema(config)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": seconds, "base_kib": base, "peak_kib": peak,
                  "schema": schema.simpleString()}))
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gb", type=float, default=3.0, help="file size in GiB (3)")
    parser.add_argument(
        "--bound-mib", type=int, default=256, help="allowed peak RSS growth in MiB (256)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the generated folder")


def _line(i: int) -> str:
    return (
        f'{{"id":{i},"name":"name {i}","amount":{i % 1000}.5,"tags":["a","b"],'
        f'"st":{{"x":{i},"y":"z"}}}}\n'
    )


def generate(folder: Path, gib: float) -> int:
    """Write ``folder/big.json`` of about ``gib`` GiB of whole lines; its size in bytes."""
    target = int(gib * 2**30)
    size = first = 0
    with open(folder / "big.json", "w", encoding="utf-8") as out:
        while size < target:
            chunk = "".join(_line(i) for i in range(first, first + ROWS_PER_WRITE))
            out.write(chunk)
            size += len(chunk)
            first += ROWS_PER_WRITE
    return size


def _infer(folder: Path, options: dict[str, str]) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder), json.dumps(options)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"inference failed: {result.stderr[-2000:]}")
    measured: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return measured


def run(args: argparse.Namespace) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="pysparksources-bench-infer-"))
    try:
        size = generate(folder, args.gb)
        print(f"file {folder / 'big.json'}: {size / 2**30:.2f} GiB", flush=True)
        results: dict[str, Any] = {"file_bytes": size, "bound_mib": args.bound_mib}
        runs = {"whole file": {"schemaSampleBytes": str(size * 2)}, "default sample": {}}
        schemas = set()
        for name, options in runs.items():
            measured = _infer(folder, options)
            growth = (measured["peak_kib"] - measured["base_kib"]) / 1024
            row = {
                "seconds": round(measured["seconds"], 1),
                "base_rss_mib": round(measured["base_kib"] / 1024),
                "peak_rss_mib": round(measured["peak_kib"] / 1024),
                "growth_mib": round(growth),
                "growth_vs_file": round(growth * 2**20 / size, 3),
            }
            results[name] = row
            schemas.add(measured["schema"])
            print(
                f"{name:15} {row['seconds']:7.1f} s  peak RSS {row['peak_rss_mib']} MiB "
                f"(+{row['growth_mib']} MiB over {row['base_rss_mib']} after imports; "
                f"{row['growth_vs_file']:.3f}x the file; bound +{args.bound_mib} MiB)",
                flush=True,
            )
            if growth > args.bound_mib:
                raise RuntimeError(f"{name}: RSS grew {growth:.0f} MiB > {args.bound_mib} MiB")
        if len(schemas) != 1:
            raise RuntimeError(f"the two samples inferred different schemas: {schemas}")
        results["schema"] = schemas.pop()
        return results
    finally:
        if args.keep:
            print(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
