"""Spark's file sink option ``retention``, pyfile's sink beside Spark's own on one input: files
written longer ago than it leave the manifest at the next compaction, so Spark's reader of the
output no longer sees them (the files stay on storage)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]
RETENTION_S = 12  # batches 3 to 9 (the compaction) must take less than this on a busy machine


def _add_inputs(src: Path, first: int, count: int) -> None:
    for n in range(first, first + count):
        (src / f"in-{n:03d}.json").write_text(json.dumps({"n": n}) + "\n")


def _run(spark: Any, src: Path, fmt: str, out: Path, ck: Path) -> None:
    stream = (
        spark.readStream.format("json")
        .schema("n long")
        .option("maxFilesPerTrigger", 1)  # one batch per file: batch b holds n == b
        .load(str(src))
    )
    writer = stream.writeStream.format(fmt).option("checkpointLocation", str(ck))
    if fmt == "pyfile":
        writer = writer.option("format", "parquet")
    query = writer.option("retention", f"{RETENTION_S}s").trigger(availableNow=True).start(str(out))
    query.awaitTermination(300)
    assert query.exception() is None, query.exception()


def test_retention_drops_old_output_from_the_manifest_like_sparks_sink(
    spark: Any, tmp_path: Path
) -> None:
    src = tmp_path / "in"
    src.mkdir()
    sinks = {
        fmt: (tmp_path / f"{fmt}-out", tmp_path / f"{fmt}-ck") for fmt in ("parquet", "pyfile")
    }
    _add_inputs(src, 0, 3)
    for fmt, (out, ck) in sinks.items():
        _run(spark, src, fmt, out, ck)  # batches 0-2
    time.sleep(RETENTION_S + 1)  # batches 0-2 are now older than the retention
    _add_inputs(src, 3, 9)
    began = time.monotonic()
    for fmt, (out, ck) in sinks.items():
        _run(spark, src, fmt, out, ck)  # batches 3-11; 9 compacts
    took = time.monotonic() - began
    seen = {
        fmt: sorted(r.n for r in spark.read.parquet(str(out)).collect())
        for fmt, (out, _) in sinks.items()
    }
    print(f"second runs took {took:.1f}s; Spark's reader sees {seen}")
    assert seen["pyfile"] == seen["parquet"], "pyfile's sink keeps other files than Spark's"
    assert seen["pyfile"] == list(range(3, 12)), "batches 0-2 should have left the manifest"
    assert len(list(sinks["pyfile"][0].glob("part-*"))) == 12  # the files themselves stay
