"""orc: read by stripe, a file by one task; the sink does not write it.

pyarrow converts TIMESTAMP values unlike Spark, so they are read through ``_orc_timestamps``;
ORC's Java writer (Spark, Hive) stores dates in the hybrid Julian/Gregorian calendar, which
``_orc_calendar`` moves to the proleptic Gregorian one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql.types import DataType, TimestampType

from pysparksources.files.formats._columnar import ColumnarFormat, columns_wanted
from pysparksources.files.formats._file_format import BATCH_ROWS, Batch, FileSplit
from pysparksources.files.formats._orc_calendar import julian_to_gregorian
from pysparksources.files.formats._orc_timestamps import OrcTimestamps

if TYPE_CHECKING:
    from pysparksources.files.config import ReaderOptions

__all__ = ["FORMAT", "Orc"]

# ORC's PostScript (a protobuf message): footerLength, compressionBlockSize, metadataLength,
# stripeStatisticsLength. The block size counts too: the decompressor allocates blocks of it.
_SIZES = (1, 3, 5, 7)


class Orc(ColumnarFormat):
    name = "orc"
    listed = 40
    title = "orc"
    extension = ".orc"

    # -- reading --------------------------------------------------------------------------
    def natural_batches(
        self, f: Any, split: FileSplit, wanted: pa.Schema | None, opts: ReaderOptions
    ) -> Iterator[Batch]:
        import pyarrow.orc as orc

        of = orc.ORCFile(f)
        timestamps = OrcTimestamps.open(f, of.schema)
        if timestamps is not None:
            of = orc.ORCFile(timestamps.source)
        names = columns_wanted(of.schema.names, wanted)
        columns = sorted(set(names.values()))
        stripes = range(of.nstripes)
        if not split.whole:
            # pyarrow does not expose stripe offsets: a split starting at 0 takes the whole file.
            stripes = range(of.nstripes) if split.start == 0 else range(0)
        # With none of the wanted columns in the file, read one anyway: a stripe read with no
        # columns has no rows, and Spark gives each of the file's rows with nulls.
        columns = columns or of.schema.names[:1]
        hybrid = of.writer == "ORC_JAVA"
        for index in stripes:
            stripe = of.read_stripe(index, columns=columns)
            if timestamps is not None:
                stripe = timestamps.as_spark_reads(stripe, index)
            if hybrid:
                stripe = pa.RecordBatch.from_arrays(
                    [julian_to_gregorian(c) for c in stripe.columns], schema=stripe.schema
                )
            for batch in pa.Table.from_batches([stripe]).to_batches(max_chunksize=BATCH_ROWS):
                yield batch, names

    # -- inference ------------------------------------------------------------------------
    def footer_size(self, f: Any) -> int:
        end = int(f.seek(0, 2))
        if end < 2:
            return 0
        f.seek(end - 1)
        length = f.read(1)[0]
        if not 0 < length < end:
            return 0
        f.seek(end - 1 - length)
        fields = _varint_fields(f.read(length))
        return sum(fields.get(number, 0) for number in _SIZES)

    def footer_schema(self, f: Any) -> pa.Schema | None:
        import pyarrow.orc as orc

        schema = orc.ORCFile(f).schema
        return schema if schema.names else None  # an empty file Spark wrote: no columns

    def naive_timestamp(self) -> DataType | None:
        return TimestampType()  # orc's TIMESTAMP is Spark's TIMESTAMP (an instant)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """A protobuf varint at ``pos``: (its value, the position after it); IndexError if cut."""
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise IndexError(pos)
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        shift += 7
        if byte < 0x80:
            return value, pos


def _varint_fields(message: bytes) -> dict[int, int]:
    """The varint fields of a protobuf message by number (others skipped); {} if damaged."""
    fields: dict[int, int] = {}
    pos = 0
    try:
        while pos < len(message):
            key, pos = _varint(message, pos)
            number, wire = key >> 3, key & 7
            if wire == 0:
                fields[number], pos = _varint(message, pos)
            elif wire == 2:
                size, pos = _varint(message, pos)
                pos += size
            elif wire in (1, 5):
                pos += 8 if wire == 1 else 4
            else:
                return {}
    except IndexError:
        return {}
    return fields


FORMAT = Orc()
