"""sourceLogCompactInterval against Spark's own file source: with the same interval, pyfile's
source log at sourceLogLocation and Spark's FileStreamSourceLog in the checkpoint's sources/0
hold the same files (the same batch ids compacted) after the same batches, and both read the
same rows."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from support.streams import run_available_now

pytestmark = pytest.mark.spark

INTERVAL_CONF = "spark.sql.streaming.fileSource.log.compactInterval"
SCHEMA = "id BIGINT, name STRING"


def log_files(folder: Path) -> list[str]:
    """Batch file names (``3``, ``5.compact``) in batch order; checksums and pyfile's own json
    files (lease, identity) left out."""
    names = [p.name for p in folder.iterdir() if p.name[:1].isdigit()]
    return sorted(names, key=lambda name: int(name.split(".")[0]))


def ids(spark: Any, out: Path) -> list[int]:
    return sorted(row[0] for row in spark.read.parquet(str(out)).select("id").collect())


@pytest.mark.slow
def test_compact_interval_matches_spark_file_source(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    base = time.time() - 600
    for i in range(7):
        path = src / f"f{i}.json"
        path.write_text(json.dumps({"id": i, "name": f"n{i}"}) + "\n")
        # Distinct, increasing modification times: both sources take the files in this order.
        os.utime(path, (base + i, base + i))

    previous = spark.conf.get(INTERVAL_CONF, None)
    spark.conf.set(INTERVAL_CONF, "3")
    try:
        native = spark.readStream.format("json").schema(SCHEMA).option("maxFilesPerTrigger", 1)
        run_available_now(native.load(str(src)), tmp_path / "out-spark", tmp_path / "ck-spark")
    finally:
        if previous is None:
            spark.conf.unset(INTERVAL_CONF)
        else:
            spark.conf.set(INTERVAL_CONF, previous)

    pyfile = (
        spark.readStream.format("pyfile")
        .option("format", "json")
        .option("sourceLogLocation", str(tmp_path / "log"))
        .option("sourceLogCompactInterval", 3)
        .option("maxFilesPerTrigger", 1)
        .schema(SCHEMA)
    )
    run_available_now(pyfile.load(str(src)), tmp_path / "out-py", tmp_path / "ck-py")

    expected = ["0", "1", "2.compact", "3", "4", "5.compact", "6"]
    # Spark deletes nothing here (its superseded files are younger than cleanupDelay, 10
    # minutes, and within minBatchesToRetain); pyfile keeps them for the same delay.
    assert log_files(tmp_path / "ck-spark" / "sources" / "0") == expected
    assert log_files(tmp_path / "log") == expected
    assert ids(spark, tmp_path / "out-spark") == ids(spark, tmp_path / "out-py") == list(range(7))
