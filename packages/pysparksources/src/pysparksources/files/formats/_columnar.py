"""What parquet and orc share: files that describe their own columns in a footer.

A footer's length is written at the end of the file, and a reader allocates and reads that
much (then decodes it): a damaged or hostile file can declare gigabytes. Inference checks the
declared size against ``FOOTER_LIMIT`` first. Real footers are kilobytes to a few megabytes
(one entry per column per row group). A file too short or too odd to say is left to pyarrow,
which reports what is wrong with it.

Inference reads the first file's footer, or every sampled footer merged (``mergeSchema``, as
Spark's ``StructType.merge``). A file's own columns (schema evolution, rescue) are simply every
column it has.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa
from pyspark.sql.types import DataType, StructField, StructType, TimestampType

from pysparksources.errors import CorruptFileError, SchemaError
from pysparksources.files import NAME
from pysparksources.files.formats._file_format import Batch, FileFormat, FileSplit, Fitter, Sample
from pysparksources.files.values.inferred_types import arrow_to_spark

if TYPE_CHECKING:
    from pysparksources.files.config import ReaderOptions
    from pysparksources.files.storage.folder_listing import FileEntry

__all__ = ["FOOTER_LIMIT", "ColumnarFormat", "columns_wanted"]

FOOTER_LIMIT = 64 * 1024 * 1024


def _match_names(available: list[str], wanted: list[str]) -> dict[str, str]:
    """wanted column -> file column, exact name first, then case-insensitively (Spark)."""
    lower = {name.lower(): name for name in available}
    found = {}
    for name in wanted:
        if name in available:
            found[name] = name
        elif name.lower() in lower:
            found[name] = lower[name.lower()]
    return found


def columns_wanted(available: list[str], wanted: pa.Schema | None) -> dict[str, str]:
    """Wanted name -> the file's name; every column of the file as it is without ``wanted``."""
    if wanted is None:
        return {name: name for name in available}
    return _match_names(available, wanted.names)


class ColumnarFormat(FileFormat):
    """A format whose files name and type their columns in a footer (parquet, orc)."""

    read_options: ClassVar[tuple[str, ...]] = ("mergeSchema",)

    @abstractmethod
    def footer_size(self, f: Any) -> int:
        """The footer bytes ``f`` (a seekable binary file) declares; 0 when it declares none."""

    @abstractmethod
    def footer_schema(self, f: Any) -> pa.Schema | None:
        """The columns the footer declares, as pyarrow reads them (None: no columns to take)."""

    @abstractmethod
    def naive_timestamp(self) -> DataType | None:
        """What a timestamp without a zone is in this format (None: TIMESTAMP_NTZ)."""

    @abstractmethod
    def natural_batches(
        self, f: Any, split: FileSplit, wanted: pa.Schema | None, opts: ReaderOptions
    ) -> Iterator[Batch]:
        """The split's rows with the ``wanted`` columns (every column: None)."""

    def batches(
        self, f: Any, split: FileSplit, wanted: pa.Schema, opts: ReaderOptions
    ) -> Iterator[Batch]:
        return self.natural_batches(f, split, wanted, opts)

    def read_rescuing(self, f: Any, fitter: Fitter) -> Iterator[pa.RecordBatch]:
        for batch, _ in self.natural_batches(f, fitter.split, None, fitter.reader):
            yield fitter.columns(
                dict(zip(batch.schema.names, batch.columns, strict=True)), batch.num_rows
            )

    # -- inference: the footers ---------------------------------------------------------
    def infer(self, sample: Sample, files: list[FileEntry]) -> StructType:
        naive = self.naive_timestamp()
        merged: StructType | None = None
        for entry in files:
            if merged is not None and sample.budget.remaining <= 0:
                break
            footer = self._footer(sample, entry)
            if footer is None:
                continue
            schema = StructType([StructField(f.name, _footer_type(f.type, naive)) for f in footer])
            if not sample.inference.merge_schema:
                return schema
            merged = schema if merged is None else _merge_footers(merged, schema, sample, entry)
        if merged is None:
            raise SchemaError(
                NAME, f"cannot infer a schema: no readable {self.name} footer in the sample"
            )
        return merged

    def _footer(self, sample: Sample, entry: FileEntry) -> pa.Schema | None:
        try:
            with sample.open(entry) as f:
                size = self.footer_size(f)
                if size > FOOTER_LIMIT:
                    raise CorruptFileError(
                        NAME,
                        f"{sample.location.url(entry.path)} declares a footer of {size} bytes, "
                        f"more than the {FOOTER_LIMIT // 2**20} MiB inference reads; the file "
                        "is damaged, or give the schema with .schema(...) "
                        "(ignoreCorruptFiles=true skips such files)",
                    )
                sample.budget.remaining -= size
                f.seek(0)
                return self.footer_schema(f)
        except CorruptFileError:
            if sample.reader.ignore_corrupt_files:
                return None
            raise
        except (pa.ArrowException, OSError, ValueError) as error:
            if sample.reader.ignore_corrupt_files:
                return None
            raise sample.unreadable(entry, error) from None


def _footer_type(dtype: pa.DataType, naive: DataType | None) -> DataType:
    if pa.types.is_timestamp(dtype) and dtype.unit == "ns":
        return TimestampType()  # INT96 (or nanoseconds, which Spark reads as instants too)
    return arrow_to_spark(dtype, naive)


def _merge_footers(left: StructType, right: StructType, sample: Sample, entry: Any) -> StructType:
    """Spark's StructType.merge: columns by name, the same type on both sides."""
    fields = list(left.fields)
    index = {f.name.lower(): i for i, f in enumerate(fields)}
    for f in right.fields:
        at = index.get(f.name.lower())
        if at is None:
            index[f.name.lower()] = len(fields)
            fields.append(f)
            continue
        merged = _merge_types(fields[at].dataType, f.dataType)
        if merged is None:
            raise SchemaError(
                NAME,
                f"mergeSchema: column {f.name!r} is {fields[at].dataType.simpleString()} in "
                f"earlier files but {f.dataType.simpleString()} in "
                f"{sample.location.url(entry.path)}; the types must agree (give a schema)",
            )
        fields[at] = StructField(fields[at].name, merged)
    return StructType(fields)


def _merge_types(left: DataType, right: DataType) -> DataType | None:
    from pyspark.sql.types import ArrayType, MapType

    if left == right:
        return left
    if isinstance(left, StructType) and isinstance(right, StructType):
        names = {f.name.lower() for f in left.fields}
        fields = [
            StructField(f.name, _merge_types(f.dataType, right[f.name].dataType) or f.dataType)
            if f.name in right.names
            else f
            for f in left.fields
        ]
        fields += [f for f in right.fields if f.name.lower() not in names]
        return StructType(fields)
    if isinstance(left, ArrayType) and isinstance(right, ArrayType):
        element = _merge_types(left.elementType, right.elementType)
        return None if element is None else ArrayType(element)
    if isinstance(left, MapType) and isinstance(right, MapType):
        key = _merge_types(left.keyType, right.keyType)
        value = _merge_types(left.valueType, right.valueType)
        return None if key is None or value is None else MapType(key, value)
    return None
