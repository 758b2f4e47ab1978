"""Part files, written from Arrow record batches in the sink's format.

One :class:`PartFile` is one output file: it streams batches into the file as they arrive, in
the content the format writes (its ``open_writer``). A format whose codec does not compress
inside the file (csv, json, text) is compressed whole, with the suffix Hadoop uses to
recognise the codec (``.gz``, ``.bz2``, ``.zst``), so Spark's readers decompress it.
"""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa

from pysparksources.errors import OptionError
from pysparksources.files import NAME
from pysparksources.files.config import SinkConfig
from pysparksources.files.formats import STREAM_COMPRESSORS, writable_format_named
from pysparksources.files.storage.partition_folders import check_partition_types

__all__ = ["PartFile", "check_schema", "file_suffix", "open_part"]


def file_suffix(config: SinkConfig) -> str:
    """``.snappy.parquet``, ``.json.gz``, ``.csv``...: how Spark's readers tell the codec."""
    return writable_format_named(config.format).file_suffix(config.compression)


def check_schema(config: SinkConfig, schema: pa.Schema) -> None:
    """Reject, at query start, columns the chosen format or partitioning cannot write."""
    problem = check_partition_types(schema, config.partition_by)
    if problem:
        raise OptionError.invalid(NAME, "partitionBy", problem, ",".join(config.partition_by))
    data = [f for f in schema if f.name not in config.partition_by]
    problem = writable_format_named(config.format).write_problem(data)
    if problem:
        raise OptionError.invalid(NAME, "format", problem, config.format)


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
        fmt = writable_format_named(config.format)
        self._raw = _open_stream(fs, config.location.protocol, path)
        self._stream = self._raw
        compressor = None if fmt.codec_inside_file else STREAM_COMPRESSORS.get(config.compression)
        if compressor is not None:
            self._stream = pa.CompressedOutputStream(self._raw, compressor)
        self._content = fmt.open_writer(self._stream, schema, config)

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        self.rows += batch.num_rows
        self._content.write(batch)

    def close(self) -> None:
        """Finish the file (footer, compression trailer) and close it."""
        self._content.close()
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
