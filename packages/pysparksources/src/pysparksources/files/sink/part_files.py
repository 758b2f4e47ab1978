"""Part files in parquet, csv, json (JSON Lines) and text, written from Arrow record batches.

One :class:`PartFile` is one output file: it streams batches into the file as they arrive
(parquet buffers up to one row group, because Spark sends batches of 10,000 rows and a row
group per batch would make files slow to read). Text formats compress the whole file with the
suffix Hadoop uses to recognise the codec (``.gz``, ``.bz2``, ``.zst``), so Spark's readers
decompress them.
"""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from pysparksources.errors import OptionError
from pysparksources.files import NAME
from pysparksources.files.config import COMPRESSION_SUFFIXES, SinkConfig
from pysparksources.files.storage.partition_folders import check_partition_types
from pysparksources.files.values.rendering import concatenated, csv_header, csv_lines, json_lines

__all__ = ["PartFile", "check_schema", "file_suffix", "open_part"]

_EXTENSION = {"parquet": ".parquet", "csv": ".csv", "json": ".json", "text": ".txt"}
_STREAM_CODEC = {"gzip": "gzip", "bzip2": "bz2", "zstd": "zstd"}
_ROW_GROUP_BYTES = 64 << 20


def file_suffix(config: SinkConfig) -> str:
    """``.snappy.parquet``, ``.json.gz``, ``.csv``...: how Spark's readers tell the codec."""
    codec = COMPRESSION_SUFFIXES[config.format][config.compression]
    if config.format == "parquet":
        return codec + ".parquet"
    return _EXTENSION[config.format] + codec


def check_schema(config: SinkConfig, schema: pa.Schema) -> None:
    """Reject, at query start, columns the chosen format or partitioning cannot write."""
    problem = check_partition_types(schema, config.partition_by)
    if problem:
        raise OptionError.invalid(NAME, "partitionBy", problem, ",".join(config.partition_by))
    data = [f for f in schema if f.name not in config.partition_by]
    if config.format == "text" and (len(data) != 1 or not pa.types.is_string(data[0].type)):
        shown = ", ".join(f"{f.name} {f.type}" for f in data)
        raise OptionError.invalid(
            NAME,
            "format",
            f"text writes exactly one string column besides partition columns; got {shown}",
            "text",
        )
    if config.format == "csv":
        for f in data:
            if pa.types.is_nested(f.type) or pa.types.is_binary(f.type):
                raise OptionError.invalid(
                    NAME, "format", f"csv cannot write column {f.name!r} of {f.type}", "csv"
                )


def _open_stream(fs: Any, protocol: str, path: str) -> Any:
    if protocol in ("file", "local"):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return pa.OSFile(path, "wb")
    handle = fs.open(path, "wb")
    return pa.PythonFile(handle, mode="w")


class PartFile:
    """One output file being written; ``close()`` makes it complete on storage."""

    def __init__(self, config: SinkConfig, fs: Any, path: str, schema: pa.Schema) -> None:
        self.path = path
        self.rows = 0
        self._config = config
        self._raw = _open_stream(fs, config.location.protocol, path)
        self._stream = self._raw
        self._writer: Any = None
        self._pending: list[pa.RecordBatch] = []
        self._pending_rows = 0
        self._pending_bytes = 0
        codec = _STREAM_CODEC.get(config.compression)
        if config.format != "parquet" and codec is not None:
            self._stream = pa.CompressedOutputStream(self._raw, codec)
        if config.format == "parquet":
            import pyarrow.parquet as pq

            compression = "none" if config.compression == "none" else config.compression
            self._writer = pq.ParquetWriter(
                self._stream, schema, compression=compression, write_statistics=True
            )
        elif config.format == "csv" and config.csv_header:
            self._stream.write(csv_header(schema.names, config.csv_sep))

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        self.rows += batch.num_rows
        fmt = self._config.format
        if fmt == "parquet":
            self._pending.append(batch)
            self._pending_rows += batch.num_rows
            self._pending_bytes += batch.nbytes
            if (
                self._pending_rows >= self._config.row_group_rows
                or self._pending_bytes >= _ROW_GROUP_BYTES
            ):
                self._flush_row_group()
        elif fmt == "json":
            lines = json_lines(batch, self._config.ignore_null_fields, self._config.time_zone)
            self._stream.write(concatenated(lines))
        elif fmt == "text":
            column = batch.column(0)
            lines = pc.binary_join_element_wise(column.fill_null(""), "\n", "")
            self._stream.write(concatenated(lines))
        else:
            lines = csv_lines(batch, self._config.csv_sep, self._config.time_zone)
            self._stream.write(concatenated(lines))

    def _flush_row_group(self) -> None:
        if self._pending:
            table = pa.Table.from_batches(self._pending)
            self._writer.write_table(table, row_group_size=len(table))
            self._pending = []
            self._pending_rows = self._pending_bytes = 0

    def close(self) -> None:
        """Finish the file (footer, compression trailer) and close it."""
        if self._config.format == "parquet":
            self._flush_row_group()
            self._writer.close()
        if self._stream is not self._raw:
            self._stream.close()
        if not self._raw.closed:
            self._raw.close()

    def discard(self) -> None:
        """Close without caring about errors (the file is deleted next)."""
        for closable in (self._stream, self._raw):
            try:
                if not closable.closed:
                    closable.close()
            except Exception:  # best effort on a failure path
                pass


def open_part(config: SinkConfig, fs: Any, path: str, schema: pa.Schema) -> PartFile:
    return PartFile(config, fs, path, schema)
