"""Parse one file split into Arrow record batches with Spark's exact Arrow schema.

Every format streams: parquet by row group batches, orc by stripe, csv and json through
pyarrow's incremental readers, text by fixed-size chunks; a task never holds a whole large
file. Columns are matched by name (csv: by position), cast to the user's schema, and
``col=value`` partition folders fill the columns the file itself lacks.
"""

from __future__ import annotations

import codecs
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from pysparksources.files._filesystem import FileLocation
from pysparksources.files.options import ReaderOptions

__all__ = [
    "BATCH_ROWS",
    "CorruptFileError",
    "FileSplit",
    "check_datetime_pattern",
    "read_split",
]

log = logging.getLogger(__name__)
BATCH_ROWS = 1 << 16
BLOCK_BYTES = 8 << 20
_TOKENS = {
    "yyyy": "%Y",
    "yy": "%y",
    "MM": "%m",
    "dd": "%d",
    "HH": "%H",
    "hh": "%I",
    "mm": "%M",
    "ss": "%S",
    "a": "%p",
    "XXX": "%z",
    "XX": "%z",
    "X": "%z",
    "Z": "%z",
    "ZZZ": "%z",
}
_TOKEN_RE = re.compile(r"'[^']*'|([A-Za-z])\1*")
_TZ_SUFFIX = r"(Z|[+-]\d\d(:?\d\d)?)$"


class CorruptFileError(RuntimeError):
    """A file that cannot be parsed; the message names the file and the problem."""


@dataclass(frozen=True)
class FileSplit:
    """A file, or a byte range of one (parquet/orc units starting in it), for one task."""

    path: str
    size: int
    start: int = 0
    length: int | None = None
    partition_values: dict[str, str] = field(default_factory=dict)

    @property
    def whole(self) -> bool:
        return self.start == 0 and (self.length is None or self.length >= self.size)


def spark_to_strptime(pattern: str) -> str | None:
    """A Spark datetime pattern as a strptime format; None when a token is not supported."""
    out: list[str] = []
    pos = 0
    for match in _TOKEN_RE.finditer(pattern):
        out.append(pattern[pos : match.start()].replace("%", "%%"))
        token = match.group(0)
        if token.startswith("'"):
            out.append(token[1:-1].replace("%", "%%") or "'")
        elif token in _TOKENS:
            out.append(_TOKENS[token])
        else:
            return None
        pos = match.end()
    out.append(pattern[pos:].replace("%", "%%"))
    return "".join(out)


def check_datetime_pattern(pattern: str) -> bool:
    return spark_to_strptime(pattern) is not None


# -- conversions to Spark's types ------------------------------------------------------
def _timestamps_from_strings(values: pa.Array, fmt: str | None, target: pa.DataType) -> pa.Array:
    """Strings -> timestamps; values without a zone are UTC (pyfile's session time zone)."""
    values = pc.utf8_trim_whitespace(values)
    naive_type = pa.timestamp("us")
    if fmt is not None:
        parsed = pc.strptime(values, format=fmt, unit="us", error_is_null=False)
        if parsed.type.tz is None:
            parsed = parsed.cast(naive_type).cast(pa.timestamp("us", tz="UTC"))
        return parsed.cast(target)
    has_zone = pc.fill_null(pc.match_substring_regex(values, _TZ_SUFFIX), False)
    null = pa.scalar(None, pa.string())
    zoned = pc.if_else(has_zone, values, null).cast(pa.timestamp("us", tz="UTC"))
    local = pc.if_else(has_zone, null, values).cast(naive_type).cast(pa.timestamp("us", tz="UTC"))
    result: pa.Array = pc.if_else(has_zone, zoned, local)
    return result.cast(target)


def _dates_from_strings(values: pa.Array, fmt: str | None) -> pa.Array:
    values = pc.utf8_trim_whitespace(values)
    if fmt is None:
        return values.cast(pa.date32())
    return pc.strptime(values, format=fmt, unit="s", error_is_null=False).cast(pa.date32())


def _conform(
    column: pa.Array | pa.ChunkedArray, target: pa.DataType, opts: ReaderOptions
) -> pa.Array:
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if column.type == target:
        return column
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        if pa.types.is_timestamp(target):
            return _timestamps_from_strings(column, _fmt(opts.timestamp_format), target)
        if pa.types.is_date32(target):
            return _dates_from_strings(column, _fmt(opts.date_format))
        if pa.types.is_boolean(target):
            return pc.utf8_lower(pc.utf8_trim_whitespace(column)).cast(target)
    # Naive timestamps (parquet without zone) are UTC: Arrow's cast assumes exactly that.
    return column.cast(target)


def _fmt(pattern: str | None) -> str | None:
    return None if pattern is None else spark_to_strptime(pattern)


def _constant(value: str | None, target: pa.DataType, length: int, opts: ReaderOptions) -> pa.Array:
    if value is None or value == "__HIVE_DEFAULT_PARTITION__":
        return pa.nulls(length, target)
    return _conform(pa.array([value] * length, pa.string()), target, opts)


# -- per-format batch iterators --------------------------------------------------------
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


def _parquet(f: Any, split: FileSplit, wanted: pa.Schema, opts: ReaderOptions) -> Iterator[Any]:
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(f)
    groups = list(range(pf.metadata.num_row_groups))
    if not split.whole:
        groups = [g for g in groups if _in_range(_row_group_mid(pf.metadata, g), split)]
    if not groups:
        return
    names = _match_names(pf.schema_arrow.names, wanted.names)
    columns = sorted(set(names.values()))
    for batch in pf.iter_batches(batch_size=BATCH_ROWS, row_groups=groups, columns=columns):
        yield batch, names


def _row_group_mid(meta: Any, index: int) -> int:
    group = meta.row_group(index)
    column = group.column(0)
    start = column.dictionary_page_offset or column.data_page_offset
    return int(start + group.total_byte_size // 2)


def _in_range(position: int, split: FileSplit) -> bool:
    end = split.size if split.length is None else split.start + split.length
    return split.start <= position < end


def _orc(f: Any, split: FileSplit, wanted: pa.Schema, opts: ReaderOptions) -> Iterator[Any]:
    import pyarrow.orc as orc

    of = orc.ORCFile(f)
    names = _match_names(of.schema.names, wanted.names)
    columns = sorted(set(names.values()))
    stripes = range(of.nstripes)
    if not split.whole:
        # pyarrow does not expose stripe offsets: a split starting at 0 takes the whole file.
        stripes = range(of.nstripes) if split.start == 0 else range(0)
    # With none of the wanted columns in the file, read one anyway: a stripe read with no
    # columns has no rows, and Spark gives each of the file's rows with nulls.
    columns = columns or of.schema.names[:1]
    for index in stripes:
        stripe = of.read_stripe(index, columns=columns)
        for batch in pa.Table.from_batches([stripe]).to_batches(max_chunksize=BATCH_ROWS):
            yield batch, names


def _decoded(f: Any, encoding: str) -> Any:
    if codecs.lookup(encoding).name == "utf-8":
        return f
    return pa.transcoding_input_stream(pa.PythonFile(f, mode="r"), encoding, "utf-8")


def _csv(f: Any, split: FileSplit, wanted: pa.Schema, opts: ReaderOptions) -> Iterator[Any]:
    import pyarrow.csv as csv

    names = list(wanted.names)
    types = {}
    for fld in wanted:
        special = pa.types.is_timestamp(fld.type) or pa.types.is_date32(fld.type)
        special = special or pa.types.is_boolean(fld.type)
        types[fld.name] = pa.string() if special else fld.type
    reader = csv.open_csv(
        _decoded(f, opts.encoding),
        read_options=csv.ReadOptions(
            column_names=names, skip_rows=1 if opts.header else 0, block_size=BLOCK_BYTES
        ),
        parse_options=csv.ParseOptions(
            delimiter=opts.sep,
            quote_char=opts.quote or False,
            escape_char=opts.escape or False,
            double_quote=True,
            newlines_in_values=opts.multi_line,
        ),
        convert_options=csv.ConvertOptions(
            column_types=types,
            null_values=[opts.null_value],
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
            include_columns=names,
        ),
    )
    identity = {n: n for n in names}
    for batch in reader:
        yield batch, identity


def _json(f: Any, split: FileSplit, wanted: pa.Schema, opts: ReaderOptions) -> Iterator[Any]:
    import pyarrow.json as pj

    fields = []
    for fld in wanted:
        custom = (pa.types.is_timestamp(fld.type) and opts.timestamp_format) or (
            pa.types.is_date32(fld.type) and opts.date_format
        )
        fields.append(pa.field(fld.name, pa.string()) if custom else fld)
    reader = pj.open_json(
        _decoded(f, opts.encoding),
        read_options=pj.ReadOptions(block_size=BLOCK_BYTES),
        parse_options=pj.ParseOptions(
            explicit_schema=pa.schema(fields), unexpected_field_behavior="ignore"
        ),
    )
    identity = {n: n for n in wanted.names}
    for batch in reader:
        yield batch, identity


def _text(f: Any, split: FileSplit, wanted: pa.Schema, opts: ReaderOptions) -> Iterator[Any]:
    name = wanted.names[0] if wanted.names else "value"
    mapping = {name: name}
    decoder = codecs.getincrementaldecoder(opts.encoding)(errors="strict")
    if opts.wholetext:
        text = "".join([decoder.decode(chunk) for chunk in iter(lambda: f.read(BLOCK_BYTES), b"")])
        yield pa.record_batch([pa.array([text + decoder.decode(b"", final=True)])], [name]), mapping
        return
    splitter: Callable[[str], list[str]]
    if opts.line_sep is None:
        splitter = _split_universal
    else:
        sep = opts.line_sep
        splitter = lambda s: s.split(sep)  # noqa: E731
    tail = ""
    while True:
        chunk = f.read(BLOCK_BYTES)
        final = not chunk
        text = tail + decoder.decode(chunk, final=final)
        carry = ""
        if not final and text.endswith("\r"):
            # "\r\n" may straddle two chunks: decide on the "\r" with the next chunk.
            text, carry = text[:-1], "\r"
        lines = splitter(text)
        if final:
            if lines and lines[-1] == "":
                lines.pop()
            if lines:
                yield pa.record_batch([pa.array(lines, pa.string())], [name]), mapping
            return
        tail = lines.pop() + carry
        if lines:
            yield pa.record_batch([pa.array(lines, pa.string())], [name]), mapping


def _split_universal(text: str) -> list[str]:
    """Split on \\n, \\r\\n and \\r (Spark's default text line separators)."""
    return re.split(r"\r\n|\r|\n", text)


_READERS: dict[str, Callable[[Any, FileSplit, pa.Schema, ReaderOptions], Iterator[Any]]] = {
    "parquet": _parquet,
    "orc": _orc,
    "csv": _csv,
    "json": _json,
    "text": _text,
}


def read_split(
    location: FileLocation,
    split: FileSplit,
    target: pa.Schema,
    opts: ReaderOptions,
    on_corrupt: Callable[[str, str], None] | None = None,
) -> Iterator[pa.RecordBatch]:
    """Yield the split's rows as batches of exactly ``target``'s schema."""
    partition_names = [n for n in target.names if n in split.partition_values]
    data_schema = pa.schema([f for f in target if f.name not in split.partition_values])
    fs = location.filesystem()
    rows = 0
    try:
        with fs.open(split.path, "rb") as f:
            for batch, names in _READERS[opts.format](f, split, data_schema, opts):
                out = _assemble(batch, names, target, split, partition_names, opts)
                rows += out.num_rows
                if out.num_rows:
                    yield out
    except FileNotFoundError:
        if opts.ignore_missing_files:
            log.warning("pyfile: skipped missing file %s (ignoreMissingFiles)", split.path)
            return
        raise FileNotFoundError(
            f"pyfile: file {location.url(split.path)} was deleted after it was listed "
            "(ignoreMissingFiles=true skips such files)"
        ) from None
    except (pa.ArrowException, ValueError, UnicodeDecodeError, OSError, KeyError) as error:
        problem = f"{type(error).__name__}: {error}"
        if opts.ignore_corrupt_files:
            log.warning(
                "pyfile: skipped the rest of corrupt file %s after %d rows (ignoreCorruptFiles): "
                "%s",
                split.path,
                rows,
                problem,
            )
            if on_corrupt is not None:
                on_corrupt(split.path, problem)
            return
        raise CorruptFileError(
            f"pyfile: cannot read {opts.format} file {location.url(split.path)}: {problem} "
            "(ignoreCorruptFiles=true skips such files)"
        ) from None


def _assemble(
    batch: Any,
    names: dict[str, str],
    target: pa.Schema,
    split: FileSplit,
    partition_names: list[str],
    opts: ReaderOptions,
) -> pa.RecordBatch:
    length = batch.num_rows
    arrays = []
    for fld in target:
        if fld.name in partition_names:
            arrays.append(_constant(split.partition_values[fld.name], fld.type, length, opts))
        elif fld.name in names:
            arrays.append(_conform(batch.column(names[fld.name]), fld.type, opts))
        else:
            arrays.append(pa.nulls(length, fld.type))
    return pa.RecordBatch.from_arrays(arrays, schema=target)
