"""Read one file split into Arrow record batches with Spark's exact Arrow schema.

Every format streams: a task never holds a whole large file. The format reads the file (see
its module); its columns are cast to the user's schema, and ``col=value`` partition folders
fill the columns the file itself lacks. A file deleted after it was listed, or one that cannot
be read, fails the task or is skipped (``ignoreMissingFiles``, ``ignoreCorruptFiles``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa

from pysparksources._redact import scrubbed
from pysparksources.errors import (
    CorruptFileError,
    DataLossError,
    MalformedRecordError,
    PySparkSourcesError,
    SchemaChangedError,
)
from pysparksources.files import NAME
from pysparksources.files.config import ReaderOptions
from pysparksources.files.formats._file_format import BATCH_ROWS, CONVERSION_ERRORS, FileSplit
from pysparksources.files.formats._registry import format_named
from pysparksources.files.storage.filesystem import FileLocation
from pysparksources.files.storage.partition_folders import NULL_PARTITION
from pysparksources.files.values.conversions import Parsing, check_datetime_pattern, conform
from pysparksources.files.values.zones import session_time_zone

# (open file, its URL, split, target schema, parsing) -> the split's batches as the target.
FitSplit = Callable[[Any, str, FileSplit, pa.Schema, Parsing], Iterator[pa.RecordBatch]]

__all__ = [
    "BATCH_ROWS",
    "FileSplit",
    "check_datetime_pattern",
    "constant_column",
    "read_split",
]

log = logging.getLogger(__name__)


def constant_column(
    value: str | None, target: pa.DataType, length: int, parsing: Parsing
) -> pa.Array:
    """A partition column: the folder's value on every row."""
    if value is None or value == NULL_PARTITION:
        return pa.nulls(length, target)
    return conform(pa.array([value] * length, pa.string()), target, parsing)


def read_split(
    location: FileLocation,
    split: FileSplit,
    target: pa.Schema,
    opts: ReaderOptions,
    on_corrupt: Callable[[str, str], None] | None = None,
    fit: FitSplit | None = None,
) -> Iterator[pa.RecordBatch]:
    """Yield the split's rows as batches of exactly ``target``'s schema; ``fit`` reads the
    open file instead, when the schema may not fit the files (see ``schema.rescue``)."""
    partition_names = [n for n in target.names if n in split.partition_values]
    data_schema = pa.schema([f for f in target if f.name not in split.partition_values])
    fs = location.filesystem()
    parsing = Parsing(
        opts.time_zone or session_time_zone(), opts.date_format, opts.timestamp_format
    )
    rows = 0
    try:
        with fs.open(split.path, "rb") as f:
            if fit is not None:
                batches = fit(f, location.url(split.path), split, target, parsing)
            else:
                batches = _parsed(f, split, target, data_schema, partition_names, opts, parsing)
            for out in batches:
                rows += out.num_rows
                if out.num_rows:
                    yield out
    except SchemaChangedError:
        raise  # the schema lacks the file's columns: not a corrupt file
    except FileNotFoundError:
        if opts.ignore_missing_files:
            log.warning(
                "%s: skipped missing file %s (ignoreMissingFiles)", NAME, location.url(split.path)
            )
            return
        raise DataLossError(
            NAME,
            f"file {location.url(split.path)} was deleted after it was listed "
            "(ignoreMissingFiles=true skips such files)",
        ) from None
    except (*CONVERSION_ERRORS, pa.ArrowException, OSError, KeyError) as error:
        detail = error.detail if isinstance(error, PySparkSourcesError) else error
        problem = scrubbed(f"{type(error).__name__}: {detail}")
        if opts.ignore_corrupt_files:
            log.warning(
                "%s: skipped the rest of corrupt file %s after %d rows (ignoreCorruptFiles): %s",
                NAME,
                location.url(split.path),
                rows,
                problem,
            )
            if on_corrupt is not None:
                on_corrupt(split.path, problem)
            return
        hint = "ignoreCorruptFiles=true skips such files"
        if format_named(opts.format).parse_modes and isinstance(error, CONVERSION_ERRORS):
            hint = f"mode FAILFAST: mode=PERMISSIVE keeps malformed records, {hint}"
        raise CorruptFileError(
            NAME, f"cannot read {opts.format} file {location.url(split.path)}: {problem} ({hint})"
        ) from None


def _parsed(
    f: Any,
    split: FileSplit,
    target: pa.Schema,
    data_schema: pa.Schema,
    partition_names: list[str],
    opts: ReaderOptions,
    parsing: Parsing,
) -> Iterator[pa.RecordBatch]:
    """The file's batches as the target; a format with parse modes outside FAILFAST goes on
    past a malformed record."""
    fmt = format_named(opts.format)
    corrupt = opts.corrupt_column if fmt.parse_modes else None
    if corrupt not in data_schema.names:
        corrupt = None
    # Spark leaves the corrupt-record column out of what it parses (csv columns by position).
    parsed = pa.schema([fld for fld in data_schema if fld.name != corrupt])

    def assemble(batch: Any, names: dict[str, str]) -> pa.RecordBatch:
        return _assemble(batch, names, target, split, partition_names, parsing)

    yield from fmt.read(f, split, parsed, opts, parsing, corrupt, assemble)


def _assemble(
    batch: Any,
    names: dict[str, str],
    target: pa.Schema,
    split: FileSplit,
    partition_names: list[str],
    parsing: Parsing,
) -> pa.RecordBatch:
    length = batch.num_rows
    arrays = []
    for fld in target:
        if fld.name in partition_names:
            arrays.append(
                constant_column(split.partition_values[fld.name], fld.type, length, parsing)
            )
        elif fld.name in names:
            arrays.append(conform(batch.column(names[fld.name]), fld.type, parsing))
        else:
            arrays.append(pa.nulls(length, fld.type))
        if not fld.nullable and arrays[-1].null_count:
            # Arrow keeps nullability as metadata only; Spark would fail later, naming no file.
            raise MalformedRecordError(
                NAME, f"column {fld.name!r} is NOT NULL in the schema but holds a null"
            )
    return pa.RecordBatch.from_arrays(arrays, schema=target)
