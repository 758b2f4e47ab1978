"""parquet: row groups read in batches, split across tasks by row group, the sink's default.

A task of a split file reads the row groups whose middle falls in its byte range, as Spark
does. Spark writes INT96 timestamps by default: they are read in microseconds (nanoseconds
would overflow outside 1677-2262). The sink buffers up to one row group (Spark sends batches
of 10,000 rows, and a row group per batch would make files slow to read).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa

from pysparksources.files.formats._columnar import ColumnarFormat, columns_wanted
from pysparksources.files.formats._file_format import (
    BATCH_ROWS,
    Batch,
    FileSplit,
    PartWriter,
    WritableFormat,
)

if TYPE_CHECKING:
    from pyspark.sql.types import DataType

    from pysparksources.files.config import ReaderOptions, SinkConfig

__all__ = ["FORMAT", "Parquet"]

_MAGIC = (b"PAR1", b"PARE")  # plain, and with an encrypted footer
_ROW_GROUP_BYTES = 64 << 20


class Parquet(ColumnarFormat, WritableFormat):
    name = "parquet"
    listed = 0
    title = "parquet"
    extension = ".parquet"
    splittable = True
    codec_inside_file = True
    codecs: ClassVar[Mapping[str, str]] = {
        "none": "",
        "uncompressed": "",
        "snappy": ".snappy",
        "gzip": ".gz",
        "zstd": ".zstd",
        "lz4": ".lz4raw",
    }
    default_codec = "snappy"

    def file_suffix(self, codec: str) -> str:
        return self.codecs[codec] + self.extension  # part-...c000.snappy.parquet

    # -- reading --------------------------------------------------------------------------
    def natural_batches(
        self, f: Any, split: FileSplit, wanted: pa.Schema | None, opts: ReaderOptions
    ) -> Iterator[Batch]:
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(f, coerce_int96_timestamp_unit="us")
        groups = list(range(pf.metadata.num_row_groups))
        if not split.whole:
            groups = [g for g in groups if split.holds(_row_group_mid(pf.metadata, g))]
        if not groups:
            return
        names = columns_wanted(pf.schema_arrow.names, wanted)
        columns = sorted(set(names.values()))
        for batch in pf.iter_batches(batch_size=BATCH_ROWS, row_groups=groups, columns=columns):
            yield batch, names

    # -- inference ------------------------------------------------------------------------
    def footer_size(self, f: Any) -> int:
        end = int(f.seek(0, 2))
        if end < 12:
            return 0
        f.seek(end - 8)
        tail = f.read(8)
        if len(tail) != 8 or tail[4:] not in _MAGIC:
            return 0
        return int.from_bytes(tail[:4], "little")

    def footer_schema(self, f: Any) -> pa.Schema:
        import pyarrow.parquet as pq

        return pq.read_schema(f)

    def naive_timestamp(self) -> DataType | None:
        # A timestamp without a zone is TIMESTAMP_NTZ in parquet (Spark 4); parquet's legacy
        # INT96 timestamps also arrive without a zone, in nanoseconds (read as instants).
        return None

    # -- writing --------------------------------------------------------------------------
    def open_writer(self, stream: Any, schema: pa.Schema, config: SinkConfig) -> PartWriter:
        return _ParquetWriter(stream, schema, config)


def _row_group_mid(meta: Any, index: int) -> int:
    group = meta.row_group(index)
    column = group.column(0)
    start = column.dictionary_page_offset or column.data_page_offset
    return int(start + group.total_byte_size // 2)


class _ParquetWriter:
    """Batches buffered into row groups of ``parquetRowGroupRows`` rows (or 64 MiB)."""

    def __init__(self, stream: Any, schema: pa.Schema, config: SinkConfig) -> None:
        import pyarrow.parquet as pq

        compression = "none" if config.compression == "none" else config.compression
        self._writer = pq.ParquetWriter(
            stream, schema, compression=compression, write_statistics=True
        )
        self._row_group_rows = config.row_group_rows
        self._pending: list[pa.RecordBatch] = []
        self._pending_rows = 0
        self._pending_bytes = 0

    def write(self, batch: pa.RecordBatch) -> None:
        self._pending.append(batch)
        self._pending_rows += batch.num_rows
        self._pending_bytes += batch.nbytes
        if self._pending_rows >= self._row_group_rows or self._pending_bytes >= _ROW_GROUP_BYTES:
            self._flush_row_group()

    def _flush_row_group(self) -> None:
        if self._pending:
            table = pa.Table.from_batches(self._pending)
            self._writer.write_table(table, row_group_size=len(table))
            self._pending = []
            self._pending_rows = self._pending_bytes = 0

    def close(self) -> None:
        self._flush_row_group()
        self._writer.close()


FORMAT = Parquet()
