"""pyfile source helpers: write small input files in every format, read a folder as a stream."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pysparksources._core.option_table import Use
from pysparksources.files.config import SourceConfig
from pysparksources.files.datasource import FileDataSource
from pysparksources.files.options import parse_options
from pysparksources.files.reader import FileBatchReader, FileStreamReader

SCHEMA = "id BIGINT, name STRING"


def source_config(options: dict[str, str], use: Use = Use.STREAM_READ) -> SourceConfig:
    """pyfile's config for a read with these options (``Use.READ``: Spark's schema() call)."""
    return parse_options(options, use)


def stream_reader(options: dict[str, str], schema: Any) -> FileStreamReader:
    """The stream reader Spark builds at query start (its errors raised, not deferred)."""
    return FileStreamReader(parse_options(options, Use.STREAM_READ, schema), schema)


def batch_reader(options: dict[str, str], schema: Any) -> FileBatchReader:
    """The batch reader Spark builds for spark.read...load(), through the data source."""
    reader: FileBatchReader = FileDataSource(dict(options)).reader(schema)
    return reader


def write_parquet(path: Path, ids: range, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": list(ids), "name": [f"n{i}" for i in ids]}), path)
    _touch(path, mtime)
    return path


def write_text(path: Path, text: str, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    _touch(path, mtime)
    return path


def write_rows(path: Path, fmt: str, ids: range, mtime: float | None = None) -> Path:
    """``ids`` as (id, name) rows in ``fmt`` (parquet, csv with header, jsonl, orc)."""
    if fmt == "parquet":
        return write_parquet(path, ids, mtime)
    if fmt == "csv":
        return write_text(path, "id,name\n" + "".join(f"{i},n{i}\n" for i in ids), mtime)
    if fmt == "json":
        lines = "".join(json.dumps({"id": i, "name": f"n{i}"}) + "\n" for i in ids)
        return write_text(path, lines, mtime)
    if fmt == "orc":
        import pyarrow.orc as orc

        path.parent.mkdir(parents=True, exist_ok=True)
        orc.write_table(pa.table({"id": list(ids), "name": [f"n{i}" for i in ids]}), str(path))
        _touch(path, mtime)
        return path
    raise ValueError(fmt)


def _touch(path: Path, mtime: float | None) -> None:
    if mtime is not None:
        os.utime(path, (mtime, mtime))


def stream(session: Any, src: Path, log: Path, fmt: str = "parquet", **options: Any) -> Any:
    reader = session.readStream.format("pyfile").option("format", fmt)
    reader = reader.option("sourceLogLocation", str(log))
    if fmt == "csv":
        reader = reader.option("header", "true")
    for key, value in options.items():
        reader = reader.option(key, str(value))
    return reader.schema(options.pop("schema", SCHEMA) if "schema" in options else SCHEMA).load(
        str(src)
    )


def ids_in(session: Any, out: Path) -> list[int]:
    return sorted(r[0] for r in session.read.parquet(str(out)).select("id").collect())
