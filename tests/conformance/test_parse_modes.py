"""Malformed csv and json records: pyfile against Spark's own readers on the same files.

Each case is a folder of hand-written files holding what real feeds hold (values of the wrong
type, too many or too few fields, broken quotes and JSON, overflowing numbers, decimals with
more digits than the scale, nested values that do not fit, lines with text after the record).
Both readers read it in every parse mode, with and without a corrupt-record column, and the
rows must be the same multiset (Spark's ``exceptAll`` both ways, counts equal). In FAILFAST
both must fail, pyfile naming the file. The session time zone is whatever the session has.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from zones import ZONES, session_zone

from support.frames import assert_same_rows

pytestmark = pytest.mark.spark

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


CASES = [
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
SMALL = [case for case in CASES if "8 MB" not in case.name]
# (mode, corrupt-record column or None, columnNameOfCorruptRecord option or None)
MODES = [
    ("PERMISSIVE", "_corrupt_record", None),
    ("PERMISSIVE", None, None),
    ("PERMISSIVE", "bad_record", "bad_record"),
    ("DROPMALFORMED", "_corrupt_record", None),
    ("DROPMALFORMED", None, None),
]


def _folder(case: ParseCase, root: Path) -> Path:
    folder = root / case.name.split(":")[0].replace(" ", "-")
    folder = root / f"{folder.name}-{abs(hash(case.name)) % 10_000}"
    if not folder.exists():
        folder.mkdir(parents=True)
        for name, text in case.files.items():
            (folder / name).write_bytes(text.encode("utf-8"))
    return folder


def _options(case: ParseCase, mode: str, option: str | None) -> dict[str, str]:
    options = {**case.options, "mode": mode}
    if option is not None:
        options["columnNameOfCorruptRecord"] = option
    return options


def _schema(case: ParseCase, column: str | None) -> str:
    return case.schema + (f", {column} STRING" if column else "")


def spark_frame(session: Any, case: ParseCase, folder: Path, mode: str, column: Any, option: Any):  # type: ignore[no-untyped-def]
    reader = session.read.format(case.fmt).schema(_schema(case, column))
    return reader.options(**_options(case, mode, option)).load(str(folder))


def pyfile_frame(session: Any, case: ParseCase, folder: Path, mode: str, column: Any, option: Any):  # type: ignore[no-untyped-def]
    reader = session.read.format("pyfile").option("format", case.fmt)
    reader = reader.schema(_schema(case, column)).options(**_options(case, mode, option))
    return reader.load(str(folder))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("parse-modes")


def _by_size(cases: list[ParseCase]) -> list[Any]:
    """The 8 MB files are outside the fast tier (Spark parses each in every mode)."""
    return [
        pytest.param(case, id=case.name, marks=() if case in SMALL else pytest.mark.slow)
        for case in cases
    ]


@pytest.mark.parametrize("case", _by_size(CASES))
def test_modes_match_spark(spark: Any, corpus: Path, case: ParseCase) -> None:
    folder = _folder(case, corpus)
    for mode, column, option in MODES if case in SMALL else MODES[:1] + MODES[3:4]:
        what = f"{case.name}, mode {mode}, corrupt column {column}"
        expected = spark_frame(spark, case, folder, mode, column, option)
        actual = pyfile_frame(spark, case, folder, mode, column, option)
        assert_same_rows(expected, actual, what)


@pytest.mark.parametrize("zone", [z for z in ZONES if z is not None])
@pytest.mark.parametrize("name", ["csv", "json"])
def test_malformed_timestamps_match_spark_in_other_session_zones(
    spark: Any, corpus: Path, name: str, zone: str
) -> None:
    """Zone-less timestamps are wall times in the session zone: the same rows in DST and
    half-hour zones, malformed ones included (the test above runs in the default zone)."""
    case = next(c for c in SMALL if c.name == name)
    folder = _folder(case, corpus)
    with session_zone(spark, zone):
        for mode, column, option in MODES[:1] + MODES[3:4]:
            expected = spark_frame(spark, case, folder, mode, column, option)
            actual = pyfile_frame(spark, case, folder, mode, column, option)
            assert_same_rows(expected, actual, f"{name} in {zone}, mode {mode}")


@pytest.mark.parametrize("case", _by_size(CASES))
def test_failfast_fails_like_spark_naming_the_file(
    spark: Any, corpus: Path, case: ParseCase
) -> None:
    folder = _folder(case, corpus)
    for column in ("_corrupt_record", None):
        with pytest.raises(Exception, match=r"MALFORMED_RECORD|Malformed"):
            spark_frame(spark, case, folder, "FAILFAST", column, None).collect()
        with pytest.raises(Exception) as caught:
            pyfile_frame(spark, case, folder, "FAILFAST", column, None).collect()
        message = str(caught.value)
        assert "CorruptFileError" in message and any(name in message for name in case.files)
        assert "mode=PERMISSIVE keeps malformed records" in message


@pytest.mark.parametrize("case", SMALL, ids=lambda c: c.name)
def test_permissive_over_connect_matches_spark(
    connect_spark: Any, corpus: Path, case: ParseCase
) -> None:
    folder = _folder(case, corpus)
    for mode, column, option in MODES[:1] + MODES[3:4]:
        expected = spark_frame(connect_spark, case, folder, mode, column, option)
        actual = pyfile_frame(connect_spark, case, folder, mode, column, option)
        assert_same_rows(expected, actual, f"Connect: {case.name}, mode {mode}")


@pytest.mark.parametrize("name", ["csv", "json", "json: multiLine"])
def test_stream_reads_malformed_records_like_spark(
    spark: Any, corpus: Path, tmp_path: Path, name: str
) -> None:
    from support.streams import run_available_now

    case = next(c for c in SMALL if c.name == name)
    folder = _folder(case, corpus)
    stream = spark.readStream.format("pyfile").options(format=case.fmt, **case.options)
    stream = stream.option("sourceLogLocation", str(tmp_path / "log"))
    df = stream.schema(_schema(case, "_corrupt_record")).load(str(folder))
    run_available_now(df, tmp_path / "out", tmp_path / "ck")
    actual = spark.read.parquet(str(tmp_path / "out"))
    expected = spark_frame(spark, case, folder, "PERMISSIVE", "_corrupt_record", None)
    assert_same_rows(expected, actual, f"stream, {name}")
    assert actual.where("_corrupt_record IS NOT NULL").count() >= 5


def test_a_corrupt_record_column_that_is_not_a_string_is_refused_at_start(
    spark: Any, corpus: Path
) -> None:
    folder = _folder(SMALL[0], corpus)
    reader = spark.read.format("pyfile").option("format", "csv")
    with pytest.raises(Exception, match=r"_corrupt_record.*STRING") as caught:
        reader.schema(CSV_SCHEMA + ", _corrupt_record INT").load(str(folder)).collect()
    assert "columnNameOfCorruptRecord" in str(caught.value)
