"""pyfile sink helpers: columns derived from pyrate, the sink, what Spark's readers see."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pysparksources._core.option_table import Use
from pysparksources.files.config import SinkConfig
from pysparksources.files.datasource import FileDataSource
from pysparksources.files.options import parse_options
from pysparksources.files.writer import FileBatchWriter, FileStreamWriter

# Columns derived from pyrate's value, so the expected rows can be computed by Spark itself.
EXPRS = [
    "value AS id",
    "CAST(value AS STRING) AS s",
    "CAST(value AS DOUBLE) * 0.25 AS d",
    "value % 2 = 0 AS b",
    "date_add(DATE'2024-01-01', CAST(value % 400 AS INT)) AS day",
    "timestamp_micros(value * 1000003 + 1700000000000000) AS ts",
    "IF(value % 7 = 0, NULL, concat('q\"\\\\,é', value)) AS n",
]
SCHEMA = "id BIGINT, s STRING, d DOUBLE, b BOOLEAN, day DATE, ts TIMESTAMP, n STRING"


def sink(df: Any, out: Path | str, checkpoint: Path, **options: Any) -> Any:
    """Start ``df`` into pyfile under AvailableNow; options as given (format etc.)."""
    writer = df.writeStream.format("pyfile").option("checkpointLocation", str(checkpoint))
    for key, value in options.items():
        writer = writer.option(key, str(value))
    return writer.option("path", str(out)).trigger(availableNow=True).start()


def run(df: Any, out: Path | str, checkpoint: Path, **options: Any) -> Any:
    query = sink(df, out, checkpoint, **options)
    query.awaitTermination(180)
    assert query.exception() is None, query.exception()
    return query


def read_with_spark(session: Any, fmt: str, out: Path | str, schema: str = SCHEMA) -> Any:
    """The output as Spark's own batch reader sees it (it honours _spark_metadata)."""
    reader = session.read
    if fmt != "parquet":
        reader = reader.schema(schema)
    return getattr(reader, fmt)(str(out))


def ids(session: Any, fmt: str, out: Path | str, column: str = "id") -> list[int]:
    df = read_with_spark(session, fmt, out, f"{column} BIGINT" if fmt == "csv" else SCHEMA)
    return sorted(int(r[0]) for r in df.select(column).collect())


def manifest_names(out: Path) -> list[str]:
    folder = out / "_spark_metadata"
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))


def data_files(out: Path) -> list[str]:
    """Every file under ``out`` except hidden ones and the manifest."""
    found = []
    for root, dirs, files in os.walk(out):
        dirs[:] = [d for d in dirs if not d.startswith(("_", "."))]
        found += [os.path.join(root, f) for f in files if not f.startswith(("_", "."))]
    return sorted(found)


def sink_config(options: dict[str, str], schema: Any) -> SinkConfig:
    """pyfile's config for a writeStream of ``schema`` (a StructType) with these options."""
    return parse_options(options, Use.STREAM_WRITE, schema)


def stream_writer(
    options: dict[str, str], schema: Any, overwrite: bool = False
) -> FileStreamWriter:
    """The stream writer Spark builds at query start, through the data source."""
    writer: FileStreamWriter = FileDataSource(dict(options)).streamWriter(schema, overwrite)
    return writer


def batch_writer(options: dict[str, str], schema: Any, overwrite: bool = False) -> FileBatchWriter:
    """The batch writer Spark builds at save(), through the data source."""
    writer: FileBatchWriter = FileDataSource(dict(options)).writer(schema, overwrite)
    return writer
