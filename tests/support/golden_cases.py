"""The cases whose answers Spark gives once, recorded as golden files (tests/files/golden).

Two families, as real feeds hold them:

- inference: a folder read without a schema (numbers that change type, values too big for 64
  bits, nested objects and arrays, malformed lines, headers with repeated or empty names,
  footers of several writers, Hive folders); Spark's schema and rows are the answer;
- parse modes: malformed csv and json records (values of the wrong type, too many or too few
  fields, broken quotes and JSON, overflowing numbers, decimals wider than the scale, text after
  the record) read with a schema in every parse mode, with and without a corrupt-record column,
  in the session's zone and in two other zones.

``GOLDEN`` lists each case as :class:`GoldenCase`: its input files (text, or a function writing
binary ones), the reads (options, schema) and the session zone to record in. The recorder
(``./dev golden``, support/record_golden.py) asks Spark; tests/files/test_golden_*.py compare
pyfile's in-process readers with the recordings; tests/conformance keeps a few of these cases
in real Spark sessions.
"""

from __future__ import annotations

import datetime
import decimal
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq

__all__ = ["GOLDEN", "INFER_CASES", "MODES", "PARSE_CASES", "SMALL", "GoldenCase", "Read"]

# -- inference ----------------------------------------------------------------------------------
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
    if session is None:
        raise RuntimeError("Spark's own parquet files need an active Spark session")
    session.sql(
        "SELECT id, CAST(id AS SMALLINT) AS small, CAST(id AS DECIMAL(20, 3)) AS dec, "
        "TIMESTAMP'2024-01-01 10:00:00' + make_interval(0, 0, 0, 0, id) AS ts, "
        "CAST('2024-01-01' AS DATE) AS d, named_struct('x', id, 'y', array(id, id)) AS st, "
        "map('k', id) AS m, CAST(id AS STRING) AS s, CAST(CAST(id AS STRING) AS BINARY) AS bin, "
        "TIMESTAMP_NTZ'2024-01-01 10:00:00' AS ntz FROM range(3)"
    ).write.mode("overwrite").parquet(str(folder))
    # Spark names its files with a fresh UUID per write: stable names keep the recording stable.
    for number, path in enumerate(sorted(folder.glob("part-*.parquet"))):
        path.rename(folder / f"part-{number:05d}.snappy.parquet")


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


INFER_CASES = [
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

# -- parse modes --------------------------------------------------------------------------------
CSV_SCHEMA = (
    "id INT, s STRING, d DOUBLE, b BOOLEAN, dt DATE, ts TIMESTAMP, dec DECIMAL(9,2), n BIGINT"
)
# Without a map pyarrow's json reader reads the file until its first malformed record; with
# one, Python does (pyarrow has no maps): both paths are compared.
JSON_NO_MAP_SCHEMA = CSV_SCHEMA + ", st STRUCT<x: INT, z: STRUCT<w: INT>>, arr ARRAY<INT>"
JSON_SCHEMA = JSON_NO_MAP_SCHEMA + ", m MAP<STRING, INT>"
CSV_BAD = [
    "1,a,1.5,true,2024-01-01,2024-01-01 10:00:00,1.25,10",
    "2,b,x,false,2024-01-02,2024-01-02 10:00:00,2.5,20",  # bad double
    "3,c",  # too few fields
    "4,d,2.5,true,2024-01-04,2024-01-04 10:00:00,3,40,extra",  # too many
    "notint,e,3.5,maybe,2024-13-45,not a time,abc,x",  # a bad value in most columns
    "",
    '6,"quoted, with comma",4.5,TRUE,2024-01-06,2024-01-06T10:00:00Z,+7,60',
    "7,,,,,,,",
    "8,f,5.5,false,2024-01-08,2024-01-08 10:00:00,12.345,99999999999999999999",  # rounds; bigint
    "+9, g ,1e2,true,2024-1-9,2024-01-09 10:00,1234567.891,+90",  # + signs, lenient date
    "10,h,6.5,true,2024-01-10T23:59,2024-01-10 10:00:00,12345678.9,100",  # decimal too wide
    '11,"unterminated,6.5,true,2024-01-11,2024-01-11 10:00:00,1,110',
    "12,i,7.5,false,2024-01-12,2024-01-12 10:00:00,1,120",
]
JSON_BAD = [
    '{"id":1,"s":"a","d":1.5,"b":true,"dt":"2024-01-01","ts":"2024-01-01T10:00:00Z"}',
    '{"id":2,"s":"b","d":"x","b":false,"dt":"2024-01-02"}',
    '{"id":"3","s":"c"}',
    '{"id":4,"s":5,"d":2,"b":"true","dt":"2024-01-04","n":1.5}',
    "not json at all",
    "",
    "   ",
    "[1,2]",
    "5",
    "null",
    '{"id":8,"st":{"x":1,"z":{"w":"bad"}}}',
    '{"id":9,"s":"tail"} junk after the record',
    '{"id":10, "s": "broken',
    '[{"id":11},{"id":12,"s":"second of an array"}]',
    '{"id":13,"arr":[1,"x",3]}',
    '{"id":14,"dt":"2024-13-45","ts":"yesterday"}',
    "{'id': 15, 's': 'single quotes', 'st': {'x': 2}}",
    '{"id":16,"m":{"a":1,"b":"x"}}',
    '{"id":17,"m":{"a":1},"arr":[1,null,2],"st":{"x":3,"z":{"w":4}}}',
    '{"id":18,"n":99999999999999999999,"dec":12.345}',
    '{"id":2147483648}',
    '{"id":19,"d":NaN,"dec":"1.5","dt":"2024-01-19T08:00"}',
    '{"id":20,"d":"Infinity","dec":1234567.891,"b":null}',
    '{"id":21,"dec":12345678.9,"st":[1]}',
    '[{"id":22,"s":"fine"},{"id":23,"d":"bad"}]',  # one bad object: the whole line is malformed
    '{"id":24,"ts":12345}',  # a number in a TIMESTAMP column: seconds since the epoch
    '{"id":25,"ts":-5.5}',
    '{"id":26,"ts":99999999999999999}',  # Spark's microseconds wrap around 64 bits
]
# multiLine: each file one JSON document (Spark reads the first value of the file).
JSON_DOCUMENTS = {
    "a_broken.json": '{"id": 6,\n "s": "unterminated\n',
    "b_pretty.json": '{\n  "id": 1,\n  "s": "pretty",\n  "st": {"x": 2, "z": {"w": 3}}\n}\n',
    "c_array.json": '[\n {"id": 2, "s": "x"},\n {"id": 3, "d": "bad"}\n]',
    "d_lines.json": '{"id": 4}\n{"id": 5}\n',
    "e_scalars.json": "[1, 2]",
    "f_empty.json": "",
    "g_blank.json": "  \r\n ",
    "h_trailing.json": '{"id": 7, "m": {"k": 1}} garbage',
    "i_mixed.json": '[{"id": 8}, 5]',
    "j_good_array.json": '[{"id": 9, "dt": "2024-01-09"}, {"id": 10, "arr": [1, 2]}]',
    "k_partial.json": '{"id": 11, "b": "yes", "dec": 1.005}',
}
GOOD_CSV_ROW = "{i},name {i},{i}.5,true,2024-01-01,2024-01-01 10:00:00,{i}.25,{i}"
GOOD_JSON_ROW = '{{"id":{i},"s":"name {i}","d":{i}.5,"dec":{i}.25,"arr":[{i}]}}'


@dataclass(frozen=True)
class ParseCase:
    name: str
    fmt: str
    files: dict[str, str]
    schema: str
    options: dict[str, str] = field(default_factory=dict)


def _large(row: str, bad: list[str]) -> str:
    """More than pyarrow's 8 MB block of good rows, the malformed ones after the first block."""
    good = [row.format(i=i) for i in range(220_000)]
    return "\n".join(good[:200_000] + bad + good[200_000:]) + "\n"


PARSE_CASES = [
    ParseCase("csv", "csv", {"a.csv": "\n".join(CSV_BAD) + "\n"}, CSV_SCHEMA),
    ParseCase(
        "csv: header, sep ;, nullValue NA, backslash escapes, CRLF",
        "csv",
        {
            "a.csv": "\r\n".join(
                ["id;s;d;b;dt;ts;dec;n"]
                + [line.replace(",", ";") for line in CSV_BAD if '"' not in line]
                + ['20;"say \\"hi\\"";1.5;NA;2024-01-20;NA;1;NA', '21;"a \\" b";x;true']
            )
            + "\r\n"
        },
        CSV_SCHEMA,
        {"header": "true", "sep": ";", "nullValue": "NA"},
    ),
    ParseCase(
        "csv: multiLine",
        "csv",
        {
            "a.csv": '1,"two\nlines",1.5,true,2024-01-01,2024-01-01 10:00:00,1,1\n'
            '2,"three\nlines\nhere",bad,true,2024-01-02,2024-01-02 10:00:00,1,2\n'
            "3,short\n"
            "4,ok,2.5,false,2024-01-04,2024-01-04 10:00:00,1,4\n"
        },
        CSV_SCHEMA,
        {"multiLine": "true"},
    ),
    ParseCase(
        "csv: malformed records after the first 8 MB",
        "csv",
        {"big.csv": _large(GOOD_CSV_ROW, CSV_BAD[1:5])},
        CSV_SCHEMA,
    ),
    ParseCase("json", "json", {"a.json": "\n".join(JSON_BAD) + "\n"}, JSON_SCHEMA),
    ParseCase(
        "json: no map column",
        "json",
        {"a.json": "\n".join(JSON_BAD[:1] * 3 + JSON_BAD) + "\n"},
        JSON_NO_MAP_SCHEMA,
    ),
    ParseCase("json: multiLine", "json", JSON_DOCUMENTS, JSON_SCHEMA, {"multiLine": "true"}),
    ParseCase(
        "json: malformed records after the first 8 MB",
        "json",
        {"big.json": _large(GOOD_JSON_ROW, JSON_BAD[1:5] + JSON_BAD[11:14])},
        JSON_NO_MAP_SCHEMA,
    ),
]
SMALL = [case for case in PARSE_CASES if "8 MB" not in case.name]
# (mode, corrupt-record column or None, columnNameOfCorruptRecord option or None)
MODES = [
    ("PERMISSIVE", "_corrupt_record", None),
    ("PERMISSIVE", None, None),
    ("PERMISSIVE", "bad_record", "bad_record"),
    ("DROPMALFORMED", "_corrupt_record", None),
    ("DROPMALFORMED", None, None),
]


# -- the golden cases ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Read:
    """One read of a case's folder: its options (format aside) and schema (None: inferred)."""

    options: dict[str, str]
    schema: str | None = None  # a DDL string; the golden file holds Spark's JSON form


@dataclass(frozen=True)
class GoldenCase:
    """A folder of input files and the reads Spark answers (``zone``: None is the session's)."""

    slug: str
    fmt: str
    files: dict[str, str]
    reads: tuple[Read, ...]
    writer: Callable[[Path], None] | None = None
    zone: str | None = None
    # The writer's bytes differ from run to run (Spark's parquet writer lists a column's
    # encodings in hash order): re-recording keeps the committed inputs (see record_golden).
    inputs_vary: bool = False


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _parse_reads(
    case: ParseCase, modes: list[tuple[str, str | None, str | None]]
) -> tuple[Read, ...]:
    reads = []
    for mode, column, option in modes:
        options = {**case.options, "mode": mode}
        if option is not None:
            options["columnNameOfCorruptRecord"] = option
        reads.append(Read(options, case.schema + (f", {column} STRING" if column else "")))
    return tuple(reads)


# text: line breaks of every kind, empty lines, a last line without one, non-ASCII text.
TEXT_FILES = {
    "a.txt": "one\r\ntwo\n\nthree\rfour ünï 漢\n",
    "b.txt": "x,y,,z\nno line break at the end",
}
# csv quoting: separators, escaped quotes and line breaks inside quotes, a quoted empty string
# against an empty field, quoted numbers, another quote character, and quotes that close
# nothing: doubled quotes without escape '"', text or blanks after a closing quote (univocity
# keeps such a field as written, quotes and all, up to the next separator or line end).
CSV_QUOTES = {
    # No backslash: pyarrow's reader reads it (an escape character sends a file to Python's).
    "a.csv": 'id,text,n\n1,"a, b",10\n3,"",\n4,,"40"\n7,plain "inner" quotes,70\n',
    "b.csv": 'id,text,n\n2,"say \\"hi\\", b",20\n5,\'single, quoted\',50\n6,"two\nlines",60\n',
    # No backslash either, three fields a record: pyarrow's reader would read every record
    # (unquoting these), so the fast path must see them and hand the file to Python's.
    "c.csv": (
        'id,text,n\n8,"say ""hi""",80\n9,"""",90\n10,"x""",100\n11,"q"x,110\n12,"ab" ,120\n'
        '14,"ab" c,140\n17,"""y",170\n18,""x,180\n'
    ),
    # Records of another width, and a line break after doubled quotes.
    "d.csv": (
        'id,text,n\n13,"a ""b"", c",130\n15,"say ""hi"""\n16,"two ""quoted""\nlines",160\n'
        '19,"a"",b",190\n'
    ),
}
CSV_QUOTE_READS = (
    Read({"header": "true"}),
    Read({"header": "true", "inferSchema": "true"}),
    Read({"header": "true", "multiLine": "true"}),
    Read({"header": "true", "multiLine": "true", "inferSchema": "true"}),
    Read({"header": "true", "escape": '"'}),
    Read({"header": "true", "quote": "'"}),
    Read({"header": "true"}, "id INT, text STRING, n INT"),
    # FAILFAST on the file without a backslash: the fast reader alone, with no fallback.
    Read({"header": "true", "mode": "FAILFAST", "pathGlobFilter": "a.csv"}),
)
# csv and json options: another separator, quote, escape and null text, UTF-16, Java date
# and timestamp patterns, and the reader's timeZone option on wall times Los Angeles skips
# (2024-03-10 02:30) and repeats (2024-11-03 01:30); inferSchema finds the DATE column by
# the dateFormat (Spark's preferDate).
CSV_OPTIONS_TEXT = (
    "id;name;when;day;amount\n"
    "1;'a;b';2024-03-10 02:30:00.000000;10/03/2024;1.5\n"
    "2;NA;2024-11-03 01:30:00.000000;03/11/2024;NA\n"
    "3;'it#'s';2024-01-01 00:00:00.123456;01/01/2024;2\n"
    "4;'two\nlines';1999-12-31 23:59:59.999999;31/12/1999;-0.0\n"
)
CSV_OPTIONS = {
    "header": "true",
    "sep": ";",
    "quote": "'",
    "escape": "#",
    "nullValue": "NA",
    "dateFormat": "dd/MM/yyyy",
    "timestampFormat": "yyyy-MM-dd HH:mm:ss.SSSSSS",
    "encoding": "UTF-16",
}
CSV_OPTIONS_SCHEMA = "id INT, name STRING, when TIMESTAMP, day DATE, amount DOUBLE"
CSV_OPTIONS_READS = (
    Read({**CSV_OPTIONS, "multiLine": "true"}, CSV_OPTIONS_SCHEMA),
    Read(
        {**CSV_OPTIONS, "multiLine": "true", "timeZone": "America/Los_Angeles"}, CSV_OPTIONS_SCHEMA
    ),
    Read({**CSV_OPTIONS, "multiLine": "true", "inferSchema": "true"}),
    Read({**CSV_OPTIONS, "multiLine": "true", "inferSchema": "true", "preferDate": "false"}),
)
# csv date inference (Spark's preferDate, true by default): a value the dateFormat (else
# yyyy-MM-dd, strictly) parses is a DATE; a DATE column meeting a timestamp becomes TIMESTAMP
# (in a later row or another file), meeting anything else STRING; a day that does not exist or
# a looser form (2024-1-5) is no DATE. dateFormat in the files' own order: 10/03/2024 is March.
CSV_DATES = {
    "a.csv": "d,dt,td,di,db,loose,bad,dmy,two,sp\n"
    "2024-01-03,2024-01-03,2024-01-03 10:00:00,2024-01-03,2024-01-03,2024-01-03,2024-02-30,"
    "10/03/2024,2024-01-03, 2024-01-03\n"
    "2024-01-04,2024-01-04 10:00:00,2024-01-04,1,true,2024-1-5,2024-01-01,31/12/1999,,\n"
    ",,,,,,,01/01/2024,,\n",
    "b.csv": "d,dt,td,di,db,loose,bad,dmy,two,sp\n"
    "2024-01-05,2024-01-05,2024-01-05,2024-01-05,2024-01-05,2024-01-05,2024-01-05,05/01/2024,"
    "2024-01-05 10:00:00,2024-01-05\n",
}
CSV_DATES_READS = (
    Read({"header": "true", "inferSchema": "true"}),
    Read({"header": "true", "inferSchema": "true", "dateFormat": "dd/MM/yyyy"}),
    Read({"header": "true", "inferSchema": "true", "preferDate": "false"}),
    Read(
        {"header": "true", "inferSchema": "true", "dateFormat": "dd/MM/yyyy", "preferDate": "false"}
    ),
)


def _write_utf16_csv(folder: Path) -> None:
    (folder / "a.csv").write_bytes(CSV_OPTIONS_TEXT.encode("utf-16"))


JSON_OPTIONS_LINES = [
    '{"id": 1, "day": "10/03/2024", "when": "10.03.2024 02:30:00"}',
    '{"id": 2, "day": "03/11/2024", "when": "03.11.2024 01:30:00"}',
    '{"id": 3, "day": "2024-01-01", "when": "2024-01-01T00:00:00Z"}',
]
JSON_OPTIONS = {"dateFormat": "dd/MM/yyyy", "timestampFormat": "dd.MM.yyyy HH:mm:ss"}
JSON_OPTIONS_SCHEMA = "id INT, day DATE, when TIMESTAMP"
JSON_OPTIONS_READS = (
    Read(
        JSON_OPTIONS
    ),  # inferred: JSON infers no DATE (nor TIMESTAMP) from text, dateFormat or not
    Read(JSON_OPTIONS, JSON_OPTIONS_SCHEMA),
    Read({**JSON_OPTIONS, "timeZone": "Asia/Kolkata"}, JSON_OPTIONS_SCHEMA),
    Read({**JSON_OPTIONS, "timeZone": "America/Los_Angeles"}, JSON_OPTIONS_SCHEMA),
)
TEXT_READS = (Read({}), Read({"wholetext": "true"}), Read({"lineSep": ","}))
FAILFAST = [("FAILFAST", "_corrupt_record", None), ("FAILFAST", None, None)]
ZONES = ("America/Los_Angeles", "Asia/Kolkata")  # a zone with DST, a half-hour one
GOLDEN = (
    [
        GoldenCase(
            slug(f"infer {c.name}"),
            c.fmt,
            c.files,
            (Read(c.options),),
            c.writer,
            inputs_vary=c.writer is _write_spark_parquet,
        )
        for c in INFER_CASES
    ]
    + [GoldenCase("text-line-breaks", "text", TEXT_FILES, TEXT_READS)]
    + [GoldenCase("csv-quotes", "csv", CSV_QUOTES, CSV_QUOTE_READS)]
    + [GoldenCase("csv-options", "csv", {}, CSV_OPTIONS_READS, _write_utf16_csv)]
    + [GoldenCase("csv-dates", "csv", CSV_DATES, CSV_DATES_READS)]
    + [
        GoldenCase(
            "json-options", "json", {"a.json": "\n".join(JSON_OPTIONS_LINES)}, JSON_OPTIONS_READS
        )
    ]
    + [
        GoldenCase(slug(f"modes {c.name}"), c.fmt, c.files, _parse_reads(c, MODES + FAILFAST))
        for c in SMALL
    ]
    + [
        GoldenCase(
            slug(f"modes {c.name} in {zone}"),
            c.fmt,
            c.files,
            _parse_reads(c, [MODES[0], MODES[3]]),
            zone=zone,
        )
        for c in SMALL
        if c.name in ("csv", "json")
        for zone in ZONES
    ]
)
