"""Reading a file by its own columns, then fitting them to the query's schema.

Used when the schema may not fit the files (see ``evolution``): a value goes to its column
when the file's column has the schema's exact name and the value converts to the schema's
type; otherwise (a column the schema lacks, a name that differs only by case, a value of
another type) it goes to the rescued-data column, a JSON object keyed by the file's column
name, with the file's URL under ``_file_path``. Nothing is dropped. The format reads the file
by its own columns (its ``read_rescuing``) and hands them to :class:`_Fitter`.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from pysparksources.files.config import ReaderOptions
from pysparksources.files.formats import CONVERSION_ERRORS, FileSplit, constant_column, format_named
from pysparksources.files.schema.evolution import SCHEMA_CHANGE_STEP, Evolution, new_columns_found
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
    fmt = format_named(opts.format)
    partitions = [n for n in target.names if n in split.partition_values]
    extra = {evolution.rescued_column, opts.corrupt_column if fmt.parse_modes else None}
    data = pa.schema(
        [fld for fld in target if fld.name not in partitions and fld.name not in extra]
    )
    fitter = _Fitter(url, split, target, data, partitions, evolution, parsing)
    yield from fmt.read_rescuing(f, fitter)


class _Fitter:
    """Fits one file's columns to the query's schema: the formats' ``Fitter``."""

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

    @property
    def reader(self) -> ReaderOptions:
        return self.evolution.reader

    # -- columns the schema lacks -------------------------------------------------------
    def new_columns(self, names: list[str]) -> list[str]:
        """Names neither in the schema (any case) nor a partition or bookkeeping column."""
        new = [
            n
            for n in names
            if n.lower() not in self.by_lower
            and n.lower() not in self.ignored
            and n not in self.checked
        ]
        if new and not self.checked.issuperset(new):
            SCHEMA_CHANGE_STEP("new_columns")
        if new and not self.evolution.rescues_new_columns:
            if self.evolution.mode in ("addNewColumns", "failOnNewColumns"):
                new_columns_found(self.evolution, self.split.path, self.url, new)
            self.checked.update(new)  # mode none with a rescued column: rescued below
        return new

    def rescues(self, name: str, new: bool = True) -> bool:
        """Whether a column of the file that is not the schema's goes to the rescued column:
        a name that differs only by case always does, a new one in rescue and none modes."""
        if self.evolution.rescued_column is None:
            return False
        return name.lower() in self.by_lower or (new and self.evolution.rescues_new_columns)

    # -- assembling ---------------------------------------------------------------------
    def finish(
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

    def convert(
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

    # -- the file's columns -------------------------------------------------------------
    def columns(self, natural: dict[str, pa.Array], length: int) -> pa.RecordBatch:
        rescued: list[dict[str, Any]] = [{} for _ in range(length)]
        new = set(self.new_columns(list(natural)))
        arrays: dict[str, pa.Array] = {}
        for name, column in natural.items():
            if isinstance(column, pa.ChunkedArray):
                column = column.combine_chunks()
            if name in self.data.names:
                arrays[name] = self.convert(name, column, rescued, name)
            elif self.rescues(name, name in new):
                for i, value in enumerate(column.to_pylist()):
                    if value is not None:
                        rescued[i][name] = value
        return self.finish(arrays, rescued, length)


def _jsonable(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (datetime.date, datetime.datetime, datetime.time)):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return str(value)
