"""The differential comparison: pyfile against Spark's own file reader and writer.

For one format and one session time zone, :func:`compare_format` runs both directions on the
corpus:

- read: Spark's writer writes the corpus; Spark's reader and pyfile read those files;
- write: pyfile's sink (``df.write.format("pyfile")``) writes the corpus; Spark's reader reads
  it, and is compared with what Spark's reader gives for Spark's own files.

Rows are compared column by column, exactly: floats by their bits (NaN equals NaN, -0.0 is not
0.0), decimals as decimals, binary as bytes, timestamps as microseconds. Each comparison is a
:class:`Cell`: ``same``, ``differs`` (the difference is one the documentation lists, and every
differing value matches that documented rule), ``fails`` (an error, or a difference nobody
documented) or ``n/a`` (Spark's own writer cannot hold the type in that format).
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
from corpus import COLUMNS, DDL, FLAT, PARTITION_COLUMNS

FORMATS = ("parquet", "csv", "json", "text", "orc")
DIRECTIONS = ("read", "write")
SAME, DIFFERS, FAILS, NA = "same", "differs (documented)", "fails", "n/a"
# Options both sides get in the base matrix: csv strings hold line breaks.
READ_OPTIONS: dict[str, dict[str, str]] = {"csv": {"multiLine": "true"}}
RESULTS: list[Cell] = []


@dataclass
class Cell:
    """One comparison: a column (type) in a format, direction, zone and session kind."""

    column: str
    fmt: str
    direction: str
    zone: str
    session: str
    outcome: str
    detail: str = ""
    case: str = "corpus"

    @property
    def type_name(self) -> str:
        names = {**COLUMNS, **PARTITION_COLUMNS}
        return names[self.column][1] if self.column in names else self.column


@dataclass(frozen=True)
class Documented:
    """A difference the pyfile pages' "Where pyfile differs" sections list, as a checkable rule.

    ``holds(spark_value, pyfile_value)`` must be true for every row where the two differ (values
    in the comparison's canonical form); otherwise the cell fails.
    """

    key: str
    summary: str
    columns: frozenset[str]
    formats: frozenset[str]
    directions: frozenset[str]
    holds: Callable[[Any, Any], bool] | None = None
    cases: frozenset[str] | None = None  # None: every case
    # For a documented refusal: a regex the error pyfile raises must match (instead of holds).
    error: str | None = None
    zones: frozenset[str] | None = None  # None: every zone

    def applies(self, column: str, fmt: str, direction: str, case: str, zone: str = "") -> bool:
        return (
            column in self.columns
            and fmt in self.formats
            and direction in self.directions
            and (self.cases is None or case in self.cases)
            and (self.zones is None or zone in self.zones)
        )


def columns_for(fmt: str) -> list[str]:
    """The corpus columns Spark's own writer can write in ``fmt``."""
    if fmt == "text":
        return ["c_string"]
    if fmt == "csv":
        return [c for c in FLAT if c != "c_binary"]
    return list(COLUMNS)


def _spark_type(column: str) -> str:
    if column == "value":
        return "STRING"
    return {**COLUMNS, **PARTITION_COLUMNS}[column][0]


def schema_of(columns: list[str], fmt: str) -> str:
    if fmt == "text":
        return "value STRING"
    return "id INT, " + ", ".join(f"{c} {_spark_type(c)}" for c in columns)


def reference(session: Any, seed: Path, fmt: str) -> Any:
    """The corpus as Spark reads it, limited to what ``fmt`` can hold."""
    df = session.read.schema(DDL).parquet(str(seed))
    if fmt == "text":
        return df.selectExpr("c_string AS value")
    return df.select("id", *columns_for(fmt))


# -- canonical values -----------------------------------------------------------------------
def _exact_type(dtype: pa.DataType) -> pa.DataType:
    """Timestamps and dates as integers, so values compare as microseconds and days."""
    if pa.types.is_timestamp(dtype):
        return pa.int64()
    if pa.types.is_date32(dtype):
        return pa.int32()
    if pa.types.is_struct(dtype):
        return pa.struct([pa.field(f.name, _exact_type(f.type), f.nullable) for f in dtype])
    if pa.types.is_map(dtype):
        return pa.map_(_exact_type(dtype.key_type), _exact_type(dtype.item_type))
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return pa.list_(_exact_type(dtype.value_type))
    return dtype


def _norm(value: Any) -> Any:
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else value.hex()
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_norm(v) for v in value)
    return value


def canonical(df: Any) -> dict[str, list[Any]]:
    """Column -> values in row order (by id; text files: sorted lines)."""
    table = df.toArrow()
    fields = [pa.field(f.name, _exact_type(f.type)) for f in table.schema]
    table = table.cast(pa.schema(fields))
    columns = {
        name: [_norm(v) for v in table.column(name).to_pylist()] for name in table.column_names
    }
    if "id" in columns:
        order = sorted(range(table.num_rows), key=lambda i: columns["id"][i])
        return {name: [values[i] for i in order] for name, values in columns.items()}
    return {name: sorted(values, key=repr) for name, values in columns.items()}


# -- the two sides ---------------------------------------------------------------------------
def spark_write(
    df: Any,
    fmt: str,
    path: Path,
    options: dict[str, str] | None = None,
    partition_by: tuple[str, ...] = (),
) -> None:
    writer = df.write.mode("overwrite").options(**(options or {})).format(fmt)
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    writer.save(str(path))


def pyfile_write(
    df: Any,
    fmt: str,
    path: Path,
    options: dict[str, str] | None = None,
    partition_by: tuple[str, ...] = (),
) -> None:
    writer = df.write.format("pyfile").mode("append").option("format", fmt)
    if partition_by:
        writer = writer.option("partitionBy", ",".join(partition_by))
    writer.options(**(options or {})).save(str(path))


def spark_read(
    session: Any, fmt: str, path: Path, schema: str, options: dict[str, str] | None = None
) -> Any:
    return session.read.format(fmt).options(**(options or {})).schema(schema).load(str(path))


def pyfile_read(
    session: Any, fmt: str, path: Path, schema: str, options: dict[str, str] | None = None
) -> Any:
    reader = session.read.format("pyfile").option("format", fmt).options(**(options or {}))
    return reader.schema(schema).load(str(path))


# -- comparing ---------------------------------------------------------------------------------
def _first_difference(expected: list[Any], got: list[Any]) -> str:
    if len(expected) != len(got):
        return f"{len(got)} rows vs Spark's {len(expected)}"
    for i, (a, b) in enumerate(zip(expected, got, strict=True)):
        if a != b:
            return f"row {i}: Spark {a!r:.120} vs pyfile {b!r:.120}"
    return ""


def judge(
    column: str,
    fmt: str,
    direction: str,
    spark_values: list[Any],
    pyfile_values: list[Any],
    documented: Iterable[Documented],
    case: str = "corpus",
    zone: str = "",
) -> tuple[str, str]:
    """(outcome, detail) for one column's values from Spark's side and pyfile's side."""
    if spark_values == pyfile_values:
        return SAME, ""
    detail = _first_difference(spark_values, pyfile_values)
    if len(spark_values) == len(pyfile_values):
        pairs = [(a, b) for a, b in zip(spark_values, pyfile_values, strict=True) if a != b]
        for rule in documented:
            if rule.holds is None or not rule.applies(column, fmt, direction, case, zone):
                continue
            if all(rule.holds(a, b) for a, b in pairs):
                return DIFFERS, f"{rule.key}: {detail}"
    return FAILS, detail


def documented_error(
    error: BaseException,
    column: str,
    fmt: str,
    direction: str,
    documented: Iterable[Documented],
    case: str = "corpus",
) -> Documented | None:
    """The rule documenting this refusal by pyfile, if any."""
    import re

    for rule in documented:
        applies = rule.error is not None and rule.applies(column, fmt, direction, case)
        if applies and re.search(str(rule.error), str(error)):
            return rule
    return None


def _reason(error: BaseException) -> str:
    """The line of a (possibly Python-worker) error that says what went wrong."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    for line in reversed(lines):
        if "Error:" in line or "Error(" in line or "Exception:" in line:
            return line[:400]
    return (lines[0] if lines else repr(error))[:400]


def compare_columns(
    spark_side: dict[str, list[Any]] | BaseException,
    pyfile_side: dict[str, list[Any]] | BaseException,
    columns: list[str],
    fmt: str,
    direction: str,
    zone: str,
    session: str,
    documented: Iterable[Documented],
    case: str = "corpus",
) -> list[Cell]:
    cells = []
    rules = list(documented)
    for column in columns:
        if isinstance(spark_side, BaseException) or isinstance(pyfile_side, BaseException):
            error = pyfile_side if isinstance(pyfile_side, BaseException) else spark_side
            side = "pyfile" if error is pyfile_side else "Spark"
            text = f"{side}: {type(error).__name__}: {_reason(error)}"
            rule = None
            if error is pyfile_side:
                rule = documented_error(error, column, fmt, direction, rules, case)
            outcome = FAILS if rule is None else DIFFERS
            text = text if rule is None else f"{rule.key}: {text}"
            cells.append(Cell(column, fmt, direction, zone, session, outcome, text, case))
            continue
        key = "value" if fmt == "text" else column
        outcome, detail = judge(
            column, fmt, direction, spark_side[key], pyfile_side[key], rules, case, zone
        )
        cells.append(Cell(column, fmt, direction, zone, session, outcome, detail, case))
    return cells


def _attempt(action: Callable[[], dict[str, list[Any]]]) -> dict[str, list[Any]] | BaseException:
    try:
        return action()
    except Exception as error:  # recorded as a failing cell, never swallowed silently
        return error


@dataclass(frozen=True)
class Case:
    """What one comparison writes and how both sides read it.

    ``spark_write``/``read``: Spark writes the corpus with these options and both readers read
    it with ``read`` (direction read). ``sink``: the options pyfile's sink and Spark's writer
    both get in direction write, read back by Spark with ``sink_read``.
    """

    name: str = "corpus"
    spark_write: dict[str, str] = field(default_factory=dict)
    read: dict[str, str] = field(default_factory=dict)
    sink: dict[str, str] = field(default_factory=dict)
    sink_read: dict[str, str] = field(default_factory=dict)
    sql: str | None = None  # a SELECT over ``corpus`` replacing the plain column list
    partition_by: tuple[str, ...] = ()  # Spark's writer in direction read
    compared: tuple[str, ...] = ()  # the columns this case reports (default: all but id)
    sink_partition_by: tuple[str, ...] = ()  # both writers in direction write


def _frame(session: Any, seed: Path, fmt: str, case: Case) -> Any:
    if case.sql is None:
        return reference(session, seed, fmt)
    session.read.schema(DDL).parquet(str(seed)).createOrReplaceTempView("corpus")
    return session.sql(case.sql)


def compare_read(
    session: Any,
    frame: Any,
    fmt: str,
    workdir: Path,
    zone: str,
    session_kind: str,
    rules: list[Documented],
    case: Case,
    views: dict[str, Any] | None = None,
) -> list[Cell]:
    """Spark writes ``frame``; Spark's reader and pyfile read the files."""
    columns = [c for c in frame.columns if c not in ("id", "value")] or ["c_string"]
    schema = schema_of(columns, fmt)
    columns = list(case.compared) or columns
    files = workdir / "spark-read"
    shutil.rmtree(files, ignore_errors=True)
    spark_write(frame, fmt, files, case.spark_write, case.partition_by)
    spark_view = canonical(spark_read(session, fmt, files, schema, case.read))
    if views is not None:
        views["spark"] = spark_view
    pyfile_view = _attempt(lambda: canonical(pyfile_read(session, fmt, files, schema, case.read)))
    cells: list[Cell] = []
    if isinstance(pyfile_view, BaseException):
        # A documented refusal of some columns: the others are still compared, read alone.
        error = pyfile_view
        refused = [c for c in columns if documented_error(error, c, fmt, "read", rules, case.name)]
        if refused:
            cells += compare_columns(
                spark_view, error, refused, fmt, "read", zone, session_kind, rules, case.name
            )
            columns = [c for c in columns if c not in refused]
            narrow = schema_of(columns, fmt)
            pyfile_view = _attempt(
                lambda: canonical(pyfile_read(session, fmt, files, narrow, case.read))
            )
    return cells + compare_columns(
        spark_view, pyfile_view, columns, fmt, "read", zone, session_kind, rules, case.name
    )


def compare_write(
    session: Any,
    frame: Any,
    fmt: str,
    workdir: Path,
    zone: str,
    session_kind: str,
    rules: list[Documented],
    case: Case,
    spark_view: dict[str, list[Any]] | None = None,
) -> list[Cell]:
    """pyfile's sink and Spark's writer write ``frame``; Spark's reader reads both.

    ``spark_view``: Spark's read-back of its own files, when the read direction already made
    it with the same options.
    """
    columns = [c for c in frame.columns if c not in ("id", "value")] or ["c_string"]
    schema = schema_of(columns, fmt)
    columns = list(case.compared) or columns
    spark_files, pyfile_files = workdir / "spark-write", workdir / "pyfile-write"
    for folder in (spark_files, pyfile_files):
        shutil.rmtree(folder, ignore_errors=True)
    if spark_view is None:
        spark_write(frame, fmt, spark_files, case.sink, case.sink_partition_by)
        spark_view = canonical(spark_read(session, fmt, spark_files, schema, case.sink_read))

    def pyfile_written() -> dict[str, list[Any]]:
        pyfile_write(frame, fmt, pyfile_files, case.sink, case.sink_partition_by)
        return canonical(spark_read(session, fmt, pyfile_files, schema, case.sink_read))

    return compare_columns(
        spark_view,
        _attempt(pyfile_written),
        columns,
        fmt,
        "write",
        zone,
        session_kind,
        rules,
        case.name,
    )


def compare_format(
    session: Any,
    seed: Path,
    fmt: str,
    workdir: Path,
    zone: str,
    session_kind: str,
    documented: Iterable[Documented],
    case: Case | None = None,
) -> list[Cell]:
    """Both directions for one format under the session's current time zone."""
    rules = list(documented)
    if case is None:
        options = READ_OPTIONS.get(fmt, {})
        case = Case(read=options, sink_read=options)
    frame = _frame(session, seed, fmt, case)
    views: dict[str, Any] = {}
    cells = compare_read(session, frame, fmt, workdir, zone, session_kind, rules, case, views)
    same_files = case.spark_write == case.sink and case.read == case.sink_read
    same_files = same_files and case.partition_by == case.sink_partition_by
    reuse = views.get("spark") if same_files else None
    return cells + compare_write(
        session, frame, fmt, workdir, zone, session_kind, rules, case, reuse
    )


def not_applicable(fmt: str, zone: str, session_kind: str) -> list[Cell]:
    """Cells for types Spark's own writer cannot put in ``fmt`` (so neither side can compare)."""
    held = set(columns_for(fmt))
    return [
        Cell(column, fmt, direction, zone, session_kind, NA, f"Spark's {fmt} writer cannot hold it")
        for column in COLUMNS
        if column not in held
        for direction in DIRECTIONS
    ]


def save(cells: Iterable[Cell], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as out:
        for cell in cells:
            out.write(json.dumps(asdict(cell)) + "\n")


def failures(cells: Iterable[Cell]) -> list[str]:
    return [
        f"{c.type_name} / {c.fmt} / {c.direction} / {c.zone} / {c.session} / {c.case}: {c.detail}"
        for c in cells
        if c.outcome == FAILS
    ]
