"""Reading a file by its own columns, then fitting them to the query's schema.

Used when the schema may not fit the files (see ``evolution``): a value goes to its column
when the file's column has the schema's exact name and the value converts to the schema's
type; otherwise (a column the schema lacks, a name that differs only by case, a value of
another type) it goes to the rescued-data column, a JSON object keyed by the file's column
name, with the file's URL under ``_file_path``. Nothing is dropped.
"""

from __future__ import annotations

import base64
import codecs
import datetime
import decimal
import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from pysparksources._core.arrow import json_batches
from pysparksources.errors import MalformedRecordError
from pysparksources.files import NAME
from pysparksources.files.formats._csv_records import records_as_configured, text_lines, whole_text
from pysparksources.files.formats._json_values import (
    arrow_read_type,
    has_map,
    json_objects,
    json_value,
)
from pysparksources.files.formats._read_split import (
    BATCH_ROWS,
    BLOCK_BYTES,
    FileSplit,
    constant_column,
    csv_string_batches,
    natural_batches,
)
from pysparksources.files.formats._tolerant import CONVERSION_ERRORS
from pysparksources.files.schema import evolution as _evolution
from pysparksources.files.schema.evolution import Evolution, new_columns_found
from pysparksources.files.values.conversions import Parsing, conform

__all__ = ["FILE_PATH_KEY", "read_evolving"]

FILE_PATH_KEY = "_file_path"


def read_evolving(
    f: Any,
    url: str,
    split: FileSplit,
    target: pa.Schema,
    parsing: Parsing,
    *,
    evolution: Evolution,
) -> Iterator[pa.RecordBatch]:
    """The split's rows as ``target``, what does not fit rescued (or the schema changed)."""
    opts = evolution.reader
    partitions = [n for n in target.names if n in split.partition_values]
    extra = {
        evolution.rescued_column,
        opts.corrupt_column if opts.format in ("csv", "json") else None,
    }
    data = pa.schema(
        [fld for fld in target if fld.name not in partitions and fld.name not in extra]
    )
    fitter = _Fitter(url, split, target, data, partitions, evolution, parsing)
    if opts.format in ("json", "csv"):
        # pyarrow reads the file by its own columns while it can; from the first record it
        # cannot (another type, another width, ...), Python reads the rest record by record.
        done = 0
        if fitter.arrow_reads():
            try:
                for batch in fitter.arrow_batches(f):
                    done += batch.num_rows
                    yield batch
                return
            except CONVERSION_ERRORS:
                f.seek(0)
        if opts.format == "json":
            yield from fitter.json_records(f, skip=done)
        else:
            yield from fitter.csv_records(f, skip=done)
    else:
        for batch in natural_batches(f, split, opts):
            yield fitter.columns(
                dict(zip(batch.schema.names, batch.columns, strict=True)), batch.num_rows
            )


class _Fitter:
    def __init__(
        self,
        url: str,
        split: FileSplit,
        target: pa.Schema,
        data: pa.Schema,
        partitions: list[str],
        evolution: Evolution,
        parsing: Parsing,
    ) -> None:
        self.url = url
        self.split = split
        self.target = target
        self.data = data
        self.partitions = partitions
        self.evolution = evolution
        self.parsing = parsing
        self.by_lower = {name.lower(): name for name in data.names}
        self.ignored = {n.lower() for n in target.names if n not in data.names}
        self.checked: set[str] = set()

    # -- columns the schema lacks -------------------------------------------------------
    def _new(self, names: list[str]) -> list[str]:
        """Names neither in the schema (any case) nor a partition or bookkeeping column."""
        new = [
            n
            for n in names
            if n.lower() not in self.by_lower
            and n.lower() not in self.ignored
            and n not in self.checked
        ]
        if new and not self.checked.issuperset(new):
            _evolution.step_hook("new_columns")
        if new and not self.evolution.rescues_new_columns:
            if self.evolution.mode in ("addNewColumns", "failOnNewColumns"):
                new_columns_found(self.evolution, self.split.path, self.url, new)
            self.checked.update(new)  # mode none with a rescued column: rescued below
        return new

    def _rescues(self, name: str, new: bool = True) -> bool:
        """Whether a column of the file that is not the schema's goes to the rescued column:
        a name that differs only by case always does, a new one in rescue and none modes."""
        if self.evolution.rescued_column is None:
            return False
        return name.lower() in self.by_lower or (new and self.evolution.rescues_new_columns)

    # -- assembling ---------------------------------------------------------------------
    def _finish(
        self,
        arrays: dict[str, pa.Array],
        rescued: list[dict[str, Any]],
        length: int,
        texts: list[str | None] | None = None,
    ) -> pa.RecordBatch:
        opts = self.evolution.reader
        out = []
        for fld in self.target:
            if fld.name in self.partitions:
                out.append(
                    constant_column(
                        self.split.partition_values[fld.name], fld.type, length, self.parsing
                    )
                )
            elif fld.name == self.evolution.rescued_column:
                out.append(pa.array([self._rescued_text(r) for r in rescued], pa.string()))
            elif fld.name in arrays:
                out.append(arrays[fld.name])
            elif texts is not None and fld.name == opts.corrupt_column:
                out.append(pa.array(texts, pa.string()))
            else:
                out.append(pa.nulls(length, fld.type))
        return pa.RecordBatch.from_arrays(out, schema=self.target)

    def _rescued_text(self, values: dict[str, Any]) -> str | None:
        if not values or self.evolution.rescued_column is None:
            return None
        return json.dumps(
            {**values, FILE_PATH_KEY: self.url}, default=_jsonable, ensure_ascii=False
        )

    def _convert(
        self, name: str, column: pa.Array, rescued: list[dict[str, Any]], source: str
    ) -> pa.Array:
        """``column`` as the schema's type; values that do not convert are rescued."""
        target = self.data.field(name).type
        try:
            return conform(column, target, self.parsing)
        except CONVERSION_ERRORS:
            pass
        pieces = []
        for i in range(len(column)):
            one = column.slice(i, 1)
            try:
                pieces.append(conform(one, target, self.parsing))
            except CONVERSION_ERRORS:
                pieces.append(pa.nulls(1, target))
                if self.evolution.rescued_column is not None:
                    rescued[i][source] = one[0].as_py()
                elif self.evolution.reader.mode == "FAILFAST":
                    raise
        return pa.concat_arrays(pieces) if pieces else pa.nulls(0, target)

    # -- columnar formats (parquet, orc, csv) -------------------------------------------
    def columns(self, natural: dict[str, pa.Array], length: int) -> pa.RecordBatch:
        rescued: list[dict[str, Any]] = [{} for _ in range(length)]
        new = set(self._new(list(natural)))
        arrays: dict[str, pa.Array] = {}
        for name, column in natural.items():
            if isinstance(column, pa.ChunkedArray):
                column = column.combine_chunks()
            if name in self.data.names:
                arrays[name] = self._convert(name, column, rescued, name)
            elif self._rescues(name, name in new):
                for i, value in enumerate(column.to_pylist()):
                    if value is not None:
                        rescued[i][name] = value
        return self._finish(arrays, rescued, length)

    def arrow_reads(self) -> bool:
        """Whether pyarrow can read the file: not multiLine, not another encoding, no map
        (pyarrow's json reader has none)."""
        opts = self.evolution.reader
        if opts.multi_line or codecs.lookup(opts.encoding).name != "utf-8":
            return False
        return opts.format == "csv" or not any(has_map(fld.type) for fld in self.data)

    def arrow_batches(self, f: Any) -> Iterator[pa.RecordBatch]:
        """The file through pyarrow (raises one of CONVERSION_ERRORS where it cannot)."""
        opts = self.evolution.reader
        if opts.format == "csv":
            first = next(iter(self._tokens(f)), None)
            f.seek(0)
            if first is None:
                return
            names = self._csv_names(first[0])
            for batch in csv_string_batches(f, self.split, names, opts):
                yield self.columns(dict(zip(names, batch.columns, strict=True)), batch.num_rows)
            return
        import pyarrow.json as pj

        schema = pa.schema([pa.field(fld.name, arrow_read_type(fld.type)) for fld in self.data])
        reader = json_batches(
            f,
            pj.ReadOptions(block_size=BLOCK_BYTES),
            pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer"),
        )
        for batch in reader:
            yield self.columns(
                dict(zip(batch.schema.names, batch.columns, strict=True)), batch.num_rows
            )

    def _tokens(self, f: Any) -> Iterator[tuple[list[str | None], str]]:
        return records_as_configured(f, self.evolution.reader)

    def _csv_names(self, header: list[str | None]) -> list[str]:
        if self.evolution.reader.header:
            return [v if v else f"_c{i}" for i, v in enumerate(header)]
        # Without a header, columns match the schema by position, as when reading; columns
        # beyond the schema have no name to record or rescue them under.
        return list(self.data.names)

    def csv_records(self, f: Any, skip: int = 0) -> Iterator[pa.RecordBatch]:
        opts = self.evolution.reader
        names: list[str] | None = None
        rows: list[list[str | None]] = []
        seen = 0
        for values, _ in self._tokens(f):
            if names is None:
                names = self._csv_names(values)
                if opts.header:  # the first record only, as Spark's reader
                    continue
            seen += 1
            if seen <= skip:
                continue
            rows.append((values + [None] * len(names))[: len(names)])
            if len(rows) >= BATCH_ROWS:
                yield self._csv_batch(names, rows)
                rows = []
        if rows and names is not None:
            yield self._csv_batch(names, rows)

    def _csv_batch(self, names: list[str], rows: list[list[str | None]]) -> pa.RecordBatch:
        columns = {
            name: pa.array([row[i] for row in rows], pa.string()) for i, name in enumerate(names)
        }
        return self.columns(columns, len(rows))

    # -- json: record by record ---------------------------------------------------------
    def json_records(self, f: Any, skip: int = 0) -> Iterator[pa.RecordBatch]:
        opts = self.evolution.reader
        lines = [whole_text(f, opts.encoding)] if opts.multi_line else text_lines(f, opts.encoding)
        read_types = {fld.name: arrow_read_type(fld.type) for fld in self.data}
        values: dict[str, list[Any]] = {name: [] for name in self.data.names}
        rescued: list[dict[str, Any]] = []
        texts: list[str | None] = []
        for line in lines:
            if not line.strip():
                continue
            if skip:  # lines pyarrow read already: one record each
                skip -= 1
                continue
            try:
                records = json_objects(line.strip() if opts.multi_line else line)
            except ValueError:
                if opts.mode == "FAILFAST":
                    raise MalformedRecordError(NAME, f"malformed record: {line[:200]!r}") from None
                if opts.mode == "PERMISSIVE":
                    for name in values:
                        values[name].append(None)
                    rescued.append({})
                    texts.append(line)
                continue
            for record in records:
                kept: dict[str, Any] = {}
                self._new(list(record))
                for key, value in record.items():
                    if key not in self.data.names and value is not None and self._rescues(key):
                        kept[key] = value
                for name in self.data.names:
                    raw = record.get(name)
                    try:
                        values[name].append(json_value(raw, read_types[name]))
                    except MalformedRecordError:
                        values[name].append(None)
                        kept[name] = raw
                rescued.append(kept)
                texts.append(None)
            if len(rescued) >= BATCH_ROWS:
                yield self._json_batch(values, read_types, rescued, texts)
                values = {name: [] for name in self.data.names}
                rescued, texts = [], []
        if rescued:
            yield self._json_batch(values, read_types, rescued, texts)

    def _json_batch(
        self,
        values: dict[str, list[Any]],
        read_types: dict[str, pa.DataType],
        rescued: list[dict[str, Any]],
        texts: list[str | None],
    ) -> pa.RecordBatch:
        arrays = {
            name: self._convert(name, pa.array(column, read_types[name]), rescued, name)
            for name, column in values.items()
        }
        return self._finish(arrays, rescued, len(rescued), texts)


def _jsonable(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (datetime.date, datetime.datetime, datetime.time)):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return str(value)
