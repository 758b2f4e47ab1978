"""Golden files: Spark's answers to support.golden_cases, recorded once, read without a JVM.

A golden file (tests/files/golden/<slug>.json) holds a case's input files (text, or base64 for
binary ones), and for each read its options, schema and Spark's answer: the schema (Spark's
JSON form and ``simpleString``) and the rows, or the error condition Spark raised. The Spark
version and the session time zone the answer was given in are recorded beside it: zone-less
csv/json timestamps are wall times in that zone, so the in-process reader is run in it.

Rows are canonical, so two readers' answers compare as data: a row is a list in column order;
timestamps are epoch microseconds, dates epoch days, floats ``repr`` strings (``nan``,
``-0.0``), decimals strings, binary hex, maps sorted ``[key, value]`` pairs; rows are sorted
(the reads are multisets). The file is written with sorted keys, one way only.
"""

from __future__ import annotations

import base64
import contextlib
import decimal
import json
import os
import pickle
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fsspec
import pyarrow as pa
from pyspark.sql.types import StructType

from support.golden_cases import GoldenCase

__all__ = [
    "GOLDEN_DIR",
    "canonical_rows",
    "golden_path",
    "in_process_read",
    "in_zone",
    "load",
    "record",
    "stage_in_memory",
]

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "files" / "golden"
ZONE_KEY = "spark.sql.session.timeZone"
_CONDITION = re.compile(r"\[([A-Z][A-Z0-9_]+(?:\.[A-Z0-9_]+)*)\]")


def golden_path(case: GoldenCase, folder: Path = GOLDEN_DIR) -> Path:
    return folder / f"{case.slug}.json"


def load(case: GoldenCase, folder: Path = GOLDEN_DIR) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(golden_path(case, folder).read_text(encoding="utf-8"))
    return data


# -- canonical values -------------------------------------------------------------------------
def _exact_type(dtype: pa.DataType) -> pa.DataType:
    """Timestamps and dates as integers (microseconds, days), whatever zone they are tagged."""
    if pa.types.is_timestamp(dtype):
        return pa.int64()
    if pa.types.is_date32(dtype):
        return pa.int32()
    if pa.types.is_struct(dtype):
        return pa.struct([pa.field(f.name, _exact_type(f.type)) for f in dtype])
    if pa.types.is_map(dtype):
        return pa.map_(_exact_type(dtype.key_type), _exact_type(dtype.item_type))
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return pa.list_(_exact_type(dtype.value_type))
    return dtype


def _value(value: Any, dtype: pa.DataType) -> Any:
    if value is None:
        return None
    if pa.types.is_floating(dtype):
        return repr(float(value))
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    if pa.types.is_map(dtype):
        pairs = [[_value(k, dtype.key_type), _value(v, dtype.item_type)] for k, v in value]
        return sorted(pairs, key=json.dumps)
    if pa.types.is_struct(dtype):
        return [_value(value[f.name], f.type) for f in dtype]
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return [_value(v, dtype.value_type) for v in value]
    return value


def canonical_rows(table: pa.Table) -> list[list[Any]]:
    """The table's rows in the canonical form (see the module docstring), sorted."""
    table = table.cast(pa.schema([pa.field(f.name, _exact_type(f.type)) for f in table.schema]))
    types = [f.type for f in table.schema]
    rows = [
        [_value(v, t) for v, t in zip(row.values(), types, strict=True)]
        for row in table.to_pylist(maps_as_pydicts=None)
    ]
    return sorted(rows, key=lambda row: json.dumps(row, sort_keys=True))


# -- input files ----------------------------------------------------------------------------
def _hidden(relative: str) -> bool:
    """Spark's and pyfile's rule: a name starting with _ or . (not k=v) is not data."""
    return any(
        part.startswith(".") or (part.startswith("_") and "=" not in part)
        for part in relative.split("/")
    )


def _inputs(case: GoldenCase, folder: Path) -> dict[str, dict[str, str]]:
    """The case's data files as the golden file stores them."""
    for name, text in case.files.items():
        (folder / name).write_bytes(text.encode("utf-8"))
    if case.writer is not None:
        case.writer(folder)
    stored: dict[str, dict[str, str]] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder).as_posix()
        if _hidden(relative):
            continue
        data = path.read_bytes()
        try:
            stored[relative] = {"text": data.decode("utf-8")}
        except UnicodeDecodeError:
            stored[relative] = {"base64": base64.b64encode(data).decode("ascii")}
    return stored


def _bytes(entry: dict[str, str]) -> bytes:
    return entry["text"].encode("utf-8") if "text" in entry else base64.b64decode(entry["base64"])


def stage_in_memory(golden: dict[str, Any], root: str) -> str:
    """The golden file's inputs under ``root`` on fsspec's memory filesystem; its URL."""
    fs = fsspec.filesystem("memory")
    for relative, entry in golden["files"].items():
        fs.pipe_file(f"{root}/{relative}", _bytes(entry))
    return f"memory://{root}"


# -- recording with Spark ---------------------------------------------------------------------
def _conditions(error: BaseException) -> list[str]:
    """Spark's error conditions in the message, outermost first (FAILED_READ_FILE wraps the
    parser's MALFORMED_RECORD_IN_PARSING)."""
    # Without the sub-condition: which record of which file fails first depends on which of
    # the parallel tasks gets there first.
    found = [name.split(".")[0] for name in _CONDITION.findall(str(error))]
    return list(dict.fromkeys(found)) or [type(error).__name__]


@contextlib.contextmanager
def _session_zone(spark: Any, zone: str | None) -> Iterator[str]:
    """The block in ``zone`` (None: the session's default); unset again after, as no test
    session pins a zone (tests/conformance/zones.py does the same)."""
    if zone is None:
        yield str(spark.conf.get(ZONE_KEY))
        return
    spark.conf.unset(ZONE_KEY)
    try:
        spark.conf.set(ZONE_KEY, zone)
        yield str(spark.conf.get(ZONE_KEY))
    finally:
        spark.conf.unset(ZONE_KEY)


def _spark_answer(spark: Any, fmt: str, folder: Path, options: dict[str, str], ddl: Any) -> Any:
    reader = spark.read.format(fmt).options(**options)
    if ddl is not None:
        reader = reader.schema(ddl)
    try:
        df = reader.load(str(folder))
        schema = df.schema
        rows = canonical_rows(df.toArrow())
    except Exception as error:  # Spark's refusal is the answer (FAILFAST)
        return {"error": _conditions(error)}
    return {"schema": schema.jsonValue(), "simple": schema.simpleString(), "rows": rows}


def record(
    spark: Any,
    case: GoldenCase,
    folder: Path = GOLDEN_DIR,
    inputs: dict[str, dict[str, str]] | None = None,
) -> Path:
    """Ask Spark for the case's answers and write its golden file into ``folder``.

    ``inputs``: the input files as a golden file stores them (the committed ones, for a case
    whose writer is not deterministic); None writes them from the case.
    """
    with tempfile.TemporaryDirectory(prefix="golden-") as work:
        written, staged = Path(work) / "written", Path(work) / "inputs"
        written.mkdir()
        files = inputs if inputs is not None else _inputs(case, written)
        # Spark reads exactly what the golden file stores, nothing its writer left beside.
        for relative, entry in files.items():
            (staged / relative).parent.mkdir(parents=True, exist_ok=True)
            (staged / relative).write_bytes(_bytes(entry))
        reads = []
        with _session_zone(spark, case.zone) as zone:
            for read in case.reads:
                ddl = None
                if read.schema is not None:
                    ddl = spark.createDataFrame([], read.schema).schema
                answer = _spark_answer(spark, case.fmt, staged, read.options, ddl)
                reads.append(
                    {
                        "options": read.options,
                        "schema": None if ddl is None else ddl.jsonValue(),
                        "spark": answer,
                    }
                )
        shutil.rmtree(written, ignore_errors=True)
    golden = {
        "case": case.slug,
        "format": case.fmt,
        "files": files,
        "reads": reads,
        "spark_version": spark.version,
        "zone": zone,
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = golden_path(case, folder)
    text = json.dumps(golden, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False)
    path.write_text(text + "\n", encoding="utf-8")
    return path


# -- pyfile, in this process --------------------------------------------------------------------
@contextlib.contextmanager
def in_zone(zone: str) -> Iterator[None]:
    """Run pyfile's reader in ``zone``: outside a Spark task it takes the zone a JVM would,
    the ``TZ`` variable first (pysparksources.files.values.zones)."""
    saved = {k: os.environ.get(k) for k in ("TZ", "JDK_JAVA_OPTIONS", "JAVA_TOOL_OPTIONS")}
    os.environ["TZ"] = zone
    os.environ.pop("JDK_JAVA_OPTIONS", None)
    os.environ.pop("JAVA_TOOL_OPTIONS", None)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def in_process_read(
    url: str,
    fmt: str,
    options: dict[str, str],
    schema: dict[str, Any] | None,
    spark_schema: dict[str, Any] | None = None,
) -> tuple[StructType, list[list[Any]]]:
    """pyfile's batch read of ``url`` as Spark drives it, in this process: ``schema()`` when
    none is given, the data source pickled (Spark builds the reader from a copy), then the
    reader's partitions and batches. Returns the schema and the canonical rows.

    A format with a fixed schema answers ``schema()`` with a DDL string, which Spark parses;
    here ``spark_schema`` (Spark's parse, from the golden file) stands in once the DDL's
    columns are checked against it.
    """
    from pysparksources.files.datasource import FileDataSource

    source = FileDataSource({**options, "format": fmt, "path": url})
    if schema is not None:
        struct = StructType.fromJson(schema)
    else:
        found = source.schema()
        struct = found if isinstance(found, StructType) else _parsed(found, spark_schema)
    source = pickle.loads(pickle.dumps(source))
    reader = source.reader(struct)
    batches = [batch for part in reader.partitions() for batch in reader.read(part)]
    if not batches:
        return struct, []
    table = pa.Table.from_batches(batches)
    names = [f.name for f in struct.fields]
    if table.column_names != names:
        raise AssertionError(f"pyfile's batches hold {table.column_names}, the schema {names}")
    return struct, canonical_rows(table)


def _parsed(ddl: str, spark_schema: dict[str, Any] | None) -> StructType:
    if spark_schema is None:
        raise AssertionError(f"a fixed schema {ddl!r} needs Spark's parse of it")
    struct = StructType.fromJson(spark_schema)
    columns = ", ".join(f"{f.name} {f.dataType.simpleString()}" for f in struct.fields)
    if " ".join(ddl.lower().split()) != columns:
        raise AssertionError(f"fixed schema {ddl!r}, Spark's {struct.simpleString()}")
    return struct
