"""Reads without a schema: pyfile's inferred schema and rows against Spark's own readers.

Each case is a folder of files as real feeds hold them (numbers that change type, values too
big for 64 bits, nested objects and arrays, empty objects, malformed lines, headers with
repeated or empty names, footers of several writers, Hive folders). Spark's reader and pyfile
read the folder without a schema: the schemas must be equal (names, types, order) and the rows
the same multiset. The session time zone is whatever the session has.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from support.frames import assert_same_rows

pytestmark = pytest.mark.spark

JSON_TYPES = [
    '{"id": 1, "name": "a", "price": 1.5, "ok": true, "tags": ["x"], "nested": {"b": 1, "a": "s"}}',
    '{"id": 2, "price": 2, "ok": null, "tags": [], "nested": {"c": [1, 2.5]}, "Zeta": 1}',
    '{"id": 99999999999999999999, "mixed": 1, "empty": {}, "blank": "", "arr": [{"k": 1}]}',
    '{"mixed": "now a string", "blank": 5, "arr": [{"k": "x", "j": null}], "_u": null}',
    '{"structs": {"x": 1}, "late": [[1, 2], [3]], "when": "2024-01-01T10:00:00Z"}',
    '{"structs": "text", "late": [[1.5]], "when": "not a time", "big": 1e400}',
    "",
    '{"n": NaN, "i": Infinity, "huge": 123456789012345678901234567890123456789012}',
]
JSON_CLEAN = [
    '{"id": 1, "name": "a", "price": 1.5, "ok": true, "tags": ["x", "y"], "st": {"b": 1}}',
    '{"id": 2, "name": "b", "price": 2, "ok": false, "tags": [], "st": {"a": "s", "b": 2}}',
    '{"id": 3, "name": null, "when": "2024-01-01", "list": [{"k": 1}, {"k": 2, "j": 3.5}]}',
]
JSON_MALFORMED = [
    '{"id": 1, "s": "a"}',
    "not json",
    '{"id": 2, "s": "b"} trailing text',
    "[1, 2]",
    '[{"id": 3}, {"id": 4, "s": "array"}]',
    "{'id': 5, 's': 'single'}",
    '{"id": 6, "s": "broken',
]
CSV_TYPED = [
    "int,long,dec,dbl,ts,bool,str,mixed,empty,nulls,intdbl,Dup,dup,,sp",
    "1,3000000000,12345678901234567890,1.5,2024-01-01 10:00:00,true,a,1,,NA,1, x,y,z, 1",
    "-2,+4,1,2e3,2024-01-02T10:00:00Z,FALSE,b,x,,,2.5,1,2,3,2",
    "+3,5,2,NaN,2024-01-03,True,c,2024-01-01,,,3,1,2,3,3.0",
    ",6,,Infinity,2024-01,false,,1.5,,,4,1,2,3,",
]
CSV_EDGES = [
    "a,b,c,d,e,f,g,h,i",
    " 1,1.5d,TRUE,2024-01-01T10:00:00+01:00,2024,1,123456789012345678901234567890123456789,0x1p3,1",
    "2,2,False,2024-1-5,2024-01-01,3000000000,1,1,99999999999999999999",
    "3,3,true,2024-01-05 1:02:03.5,2024,12345678901234567890,2,1e400,2.5",
]
JSON_EDGES = [
    '{"a": [[1], [2.5]], "b": [], "c": [{}], "": 1, "B": {"x": {}}, "_": [null]}',
    '{"a": [["x"]], "d": {"Y": 1, "y_": 2}, "e": 1e5, "f": -0, "g": 1.0}',
    "5",
    '"text"',
    "null",
    '[{"a": [[3]]}, 7]',
    '{"h": true, "i": [true, 1], "j": {"k": [1, {"l": 2}]}}',
]
NOW = datetime.datetime(2024, 5, 6, 7, 8, 9, 123456)


def _parquet_table() -> pa.Table:
    return pa.table(
        {
            "i8": pa.array([1, None], pa.int8()),
            "i16": pa.array([1, 2], pa.int16()),
            "i32": pa.array([1, 2], pa.int32()),
            "i64": pa.array([1, 2], pa.int64()),
            "u8": pa.array([1, 255], pa.uint8()),
            "u16": pa.array([1, 65535], pa.uint16()),
            "u32": pa.array([1, 2**32 - 1], pa.uint32()),
            "f32": pa.array([1.5, None], pa.float32()),
            "f64": pa.array([1.5, 2.5], pa.float64()),
            "dec": pa.array([decimal.Decimal("1.25"), None], pa.decimal128(9, 2)),
            "s": pa.array(["a", None], pa.string()),
            "bin": pa.array([b"\x00\x01", None], pa.binary()),
            "d": pa.array([datetime.date(2024, 1, 1), None], pa.date32()),
            "ts": pa.array([NOW, None], pa.timestamp("us", tz="UTC")),
            "ts_ms": pa.array([NOW.replace(microsecond=123000), None], pa.timestamp("ms", "UTC")),
            "ntz": pa.array([NOW, None], pa.timestamp("us")),
            "lst": pa.array([[1, 2], None], pa.list_(pa.int32())),
            "st": pa.array(
                [{"x": 1, "y": "a"}, None], pa.struct([("x", pa.int32()), ("y", pa.string())])
            ),
            "m": pa.array([[("k", 1)], None], pa.map_(pa.string(), pa.int64())),
        }
    )


def _orc_table() -> pa.Table:
    table = _parquet_table()
    # ORC has no unsigned, map-with-nulls quirks aside; keep what Spark's ORC reader reads.
    return table.drop_columns(["u8", "u16", "u32", "ts", "ts_ms", "ntz"]).append_column(
        "ts", pa.array([NOW, None], pa.timestamp("ns"))
    )


def _write_parquet(folder: Path) -> None:
    pq.write_table(_parquet_table(), folder / "part-0.parquet")


def _write_parquet_merge(folder: Path) -> None:
    pq.write_table(pa.table({"a": [1, 2], "b": ["x", "y"]}), folder / "a.parquet")
    pq.write_table(pa.table({"a": [3], "c": [1.5]}), folder / "b.parquet")


def _write_spark_parquet(folder: Path) -> None:
    """What Spark's own writer produces (its type annotations and field ids)."""
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    assert session is not None
    session.sql(
        "SELECT id, CAST(id AS SMALLINT) AS small, CAST(id AS DECIMAL(20, 3)) AS dec, "
        "TIMESTAMP'2024-01-01 10:00:00' + make_interval(0, 0, 0, 0, id) AS ts, "
        "CAST('2024-01-01' AS DATE) AS d, named_struct('x', id, 'y', array(id, id)) AS st, "
        "map('k', id) AS m, CAST(id AS STRING) AS s, CAST(CAST(id AS STRING) AS BINARY) AS bin, "
        "TIMESTAMP_NTZ'2024-01-01 10:00:00' AS ntz FROM range(3)"
    ).write.mode("overwrite").parquet(str(folder))


def _write_orc(folder: Path) -> None:
    orc.write_table(_orc_table(), str(folder / "part-0.orc"))


def _write_orc_merge(folder: Path) -> None:
    # Spark merges orc footers in the order the filesystem lists them (not sorted): columns
    # every order merges alike.
    orc.write_table(pa.table({"a": [1, 2], "b": ["x", "y"]}), str(folder / "a.orc"))
    orc.write_table(pa.table({"a": [3], "b": ["z"], "c": [1.5]}), str(folder / "b.orc"))


def _write_partitioned(folder: Path) -> None:
    values = [
        ("year=2024/day=2024-01-01/kind=a", '{"v": 1}'),
        ("year=2025/day=2024-01-02/kind=b%2Fc", '{"v": 2, "w": "x"}'),
        ("year=2025/day=__HIVE_DEFAULT_PARTITION__/kind=7", '{"v": 3}'),
    ]
    for relative, line in values:
        (folder / relative).mkdir(parents=True)
        (folder / relative / "part.json").write_text(line + "\n")


def _write_partition_numbers(folder: Path) -> None:
    for relative in ("n=1/x=1.5", "n=3000000000/x=2", "n=7/x=abc"):
        (folder / relative).mkdir(parents=True)
        (folder / relative / "part.csv").write_text("a,b\n1,2\n")


@dataclass(frozen=True)
class InferCase:
    name: str
    fmt: str
    files: dict[str, str] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)
    writer: Callable[[Path], None] | None = None


CASES = [
    InferCase("json: types that change", "json", {"a.json": "\n".join(JSON_TYPES)}),
    InferCase("json: clean (pyarrow's inference)", "json", {"a.json": "\n".join(JSON_CLEAN)}),
    InferCase(
        "json: three files",
        "json",
        {
            "a.json": '{"a": 1, "c": {"x": 1}}\n',
            "b.json": '{"a": 2.5, "b": "x"}\n',
            "c.json": '{"c": {"y": [true]}, "a": 3}\n',
        },
    ),
    InferCase("json: malformed, PERMISSIVE", "json", {"a.json": "\n".join(JSON_MALFORMED)}),
    InferCase(
        "json: malformed, own corrupt column",
        "json",
        {"a.json": "\n".join(JSON_MALFORMED)},
        {"columnNameOfCorruptRecord": "bad"},
    ),
    InferCase(
        "json: malformed, DROPMALFORMED",
        "json",
        {"a.json": "\n".join(JSON_MALFORMED)},
        {"mode": "DROPMALFORMED"},
    ),
    InferCase(
        "json: primitivesAsString",
        "json",
        {"a.json": "\n".join(JSON_CLEAN)},
        {"primitivesAsString": "true"},
    ),
    InferCase(
        "json: prefersDecimal",
        "json",
        {"a.json": '{"a": 1.25, "b": 1, "c": 1e-3}\n{"a": 10.5, "b": 2.5, "c": 1}\n'},
        {"prefersDecimal": "true"},
    ),
    InferCase(
        "json: multiLine",
        "json",
        {
            "a.json": '{\n  "id": 1,\n  "st": {"x": [1, 2]}\n}\n',
            "b.json": '[\n {"id": 2, "s": "x"},\n {"id": 3.5}\n]\n',
        },
        {"multiLine": "true"},
    ),
    InferCase("csv: strings", "csv", {"a.csv": "\n".join(CSV_TYPED)}, {"header": "true"}),
    InferCase(
        "csv: inferSchema",
        "csv",
        {"a.csv": "\n".join(CSV_TYPED) + "\n", "b.csv": CSV_TYPED[0] + "\n" + CSV_TYPED[1]},
        {"header": "true", "inferSchema": "true", "nullValue": "NA"},
    ),
    InferCase(
        "csv: no header, sep ;",
        "csv",
        {"a.csv": "1;x;2.5\n2;y\n3;z;1;extra\n"},
        {"sep": ";", "inferSchema": "true"},
    ),
    InferCase("parquet: every type", "parquet", writer=_write_parquet),
    InferCase("parquet: first file", "parquet", writer=_write_parquet_merge),
    InferCase(
        "parquet: mergeSchema",
        "parquet",
        writer=_write_parquet_merge,
        options={"mergeSchema": "true"},
    ),
    InferCase("orc: every type", "orc", writer=_write_orc),
    InferCase("orc: mergeSchema", "orc", writer=_write_orc_merge, options={"mergeSchema": "true"}),
    InferCase("json: Hive folders", "json", writer=_write_partitioned),
    InferCase(
        "csv: Java's number and timestamp grammar",
        "csv",
        {"a.csv": "\n".join(CSV_EDGES) + "\n"},
        {"header": "true", "inferSchema": "true"},
    ),
    InferCase(
        "csv: repeated headers in three files",
        "csv",
        {
            "a.csv": "x,y\n1,a\n2,b\n",
            "b.csv": "x,y\n2.5,c\n",
            "c.csv": "x,y\nx,y\n\n3,true\n",
        },
        {"header": "true", "inferSchema": "true"},
    ),
    InferCase("json: nesting edges", "json", {"a.json": "\n".join(JSON_EDGES) + "\n"}),
    InferCase(
        "json: samplingRatio on uniform records",
        "json",
        {"a.json": "".join(f'{{"id": {i}, "v": "x{i}", "d": {i}.5}}\n' for i in range(500))},
        {"samplingRatio": "0.3"},
    ),
    InferCase(
        "csv: samplingRatio on uniform records",
        "csv",
        {"a.csv": "".join(f"{i},x{i},{i}.5\n" for i in range(500))},
        {"inferSchema": "true", "samplingRatio": "0.3"},
    ),
    InferCase("parquet: Spark's own files", "parquet", writer=_write_spark_parquet),
    InferCase(
        "csv: Hive folders of numbers",
        "csv",
        writer=_write_partition_numbers,
        options={"header": "true", "inferSchema": "true"},
    ),
]


def _folder(case: InferCase, root: Path) -> Path:
    folder = root / f"case-{CASES.index(case)}"
    if not folder.exists():
        folder.mkdir(parents=True)
        for name, text in case.files.items():
            (folder / name).write_text(text, encoding="utf-8")
        if case.writer is not None:
            case.writer(folder)
    return folder


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("inference")


def _frames(session: Any, case: InferCase, folder: Path) -> tuple[Any, Any]:
    spark_df = session.read.format(case.fmt).options(**case.options).load(str(folder))
    reader = session.read.format("pyfile").option("format", case.fmt).options(**case.options)
    return spark_df, reader.load(str(folder))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_inferred_schema_and_rows_match_spark(spark: Any, corpus: Path, case: InferCase) -> None:
    expected, actual = _frames(spark, case, _folder(case, corpus))
    assert actual.schema.simpleString() == expected.schema.simpleString()
    assert_same_rows(expected, actual, case.name)


CONNECT_CASES = [c for c in CASES if c.name in ("json: types that change", "csv: inferSchema")]


@pytest.mark.slow
@pytest.mark.parametrize("case", CONNECT_CASES, ids=[c.name for c in CONNECT_CASES])
def test_inference_over_connect(connect_spark: Any, corpus: Path, case: InferCase) -> None:
    expected, actual = _frames(connect_spark, case, _folder(case, corpus))
    assert actual.schema.simpleString() == expected.schema.simpleString()
    assert_same_rows(expected, actual, case.name)


STREAM_CASES = [c for c in CASES if c.name in ("json: three files", "csv: Hive folders of numbers")]


@pytest.mark.slow
@pytest.mark.parametrize("case", STREAM_CASES, ids=[c.name for c in STREAM_CASES])
def test_stream_inference_matches_spark_with_inference_on(
    spark: Any, corpus: Path, tmp_path: Path, case: InferCase
) -> None:
    """Spark's file stream source infers only with spark.sql.streaming.schemaInference=true
    (pyfile always does: a Python source cannot see the setting); with it on, the streams'
    schemas and rows are the same."""
    from support.streams import run_available_now

    folder = _folder(case, corpus)
    key = "spark.sql.streaming.schemaInference"
    before = spark.conf.get(key, None)
    spark.conf.set(key, "true")
    try:
        expected = spark.readStream.format(case.fmt).options(**case.options).load(str(folder))
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)
    actual = (
        spark.readStream.format("pyfile")
        .option("format", case.fmt)
        .option("sourceLogLocation", str(tmp_path / "log"))
        .options(**case.options)
        .load(str(folder))
    )
    assert actual.schema.simpleString() == expected.schema.simpleString()
    run_available_now(expected, tmp_path / "spark", tmp_path / "spark-cp")
    run_available_now(actual, tmp_path / "pyfile", tmp_path / "pyfile-cp")
    assert_same_rows(
        spark.read.parquet(str(tmp_path / "spark")),
        spark.read.parquet(str(tmp_path / "pyfile")),
        case.name,
    )
