"""pyfile's avro format in process (no Spark): types, values, reader schemas, inference,
codecs, splits at sync markers, damaged files and the sink's writer.

The files are written by two independent writers, fastavro and the Apache ``avro`` package;
the expected types are spark-avro's documented Avro -> Spark SQL mapping (there is no
spark-avro in the pyspark wheel to ask).
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
import itertools
import json
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import avro.datafile
import avro.io
import avro.schema
import fastavro
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql.types import (
    DateType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from pysparksources._core.arrow import spark_arrow_schema
from pysparksources._core.compat import spark_type_of
from pysparksources._core.option_table import Use
from pysparksources.errors import CorruptFileError, OptionError, SchemaError
from pysparksources.files.formats import FileSplit, read_split, writable_format_named
from pysparksources.files.formats._avro_container import encode_header, read_header
from pysparksources.files.options import parse_options
from pysparksources.files.schema.inference import infer_schema
from pysparksources.files.storage.filesystem import resolve

# Apache avro 1.12 warns that it converts no local-timestamp (it writes the numbers given).
pytestmark = pytest.mark.filterwarnings("ignore:Unknown local-timestamp")
UTC = dt.timezone.utc
Writer = Callable[[Path, dict[str, Any], list[dict[str, Any]], str], None]


def write_fastavro(path: Path, schema: dict[str, Any], records: list[Any], codec: str) -> None:
    with path.open("wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), records, codec=codec, sync_interval=200)


def write_apache(path: Path, schema: dict[str, Any], records: list[Any], codec: str) -> None:
    parsed = avro.schema.parse(json.dumps(schema))
    types = {f["name"]: f["type"] for f in schema["fields"]}
    records = [{k: _apache_value(types[k], v) for k, v in r.items()} for r in records]
    with path.open("wb") as f:
        writer = avro.datafile.DataFileWriter(f, avro.io.DatumWriter(), parsed, codec=codec)
        for i, record in enumerate(records, 1):
            writer.append(record)
            if i % 20 == 0:
                writer.sync()  # several blocks even for small files
        writer.close()


def _apache_value(avro_type: Any, value: Any) -> Any:
    """Apache avro 1.12 converts no local-timestamp: it takes the stored number."""
    logical = avro_type.get("logicalType", "") if isinstance(avro_type, dict) else ""
    if logical.startswith("local-timestamp") and value is not None:
        micros = (value - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)
        return micros // 1000 if logical.endswith("millis") else micros
    return value


WRITERS = {"fastavro": write_fastavro, "apache": write_apache}
# (writer, codec): Apache avro's snappy needs python-snappy, which nothing here installs.
WRITTEN = [
    ("fastavro", "null"),
    ("fastavro", "deflate"),
    ("fastavro", "snappy"),
    ("apache", "null"),
    ("apache", "deflate"),
]


def record(fields: list[tuple[str, Any]], name: str = "r") -> dict[str, Any]:
    return {"type": "record", "name": name, "fields": [{"name": n, "type": t} for n, t in fields]}


def infer(folder: Path, **options: str) -> str:
    config = parse_options({"path": str(folder), "format": "avro", **options}, Use.READ)
    return infer_schema(config).simpleString()


def read(
    folder: Path, ddl: str | None = None, split: tuple[int, int] | None = None, **options: str
) -> list[dict[str, Any]]:
    """Every file's rows (or one split of the one file) as Python values, through the task's
    path (read_split) into Spark's Arrow types."""
    config = parse_options({"path": str(folder), "format": "avro", **options}, Use.READ)
    schema = infer_schema(config) if ddl is None else _ddl(ddl)
    target = spark_arrow_schema(schema)
    rows: list[dict[str, Any]] = []
    for name in sorted(os.listdir(folder)):
        path = str(folder / name)
        size = os.path.getsize(path)
        piece = FileSplit(path, size) if split is None else FileSplit(path, size, *split)
        batches = list(read_split(resolve(str(folder)), piece, target, config.reader))
        assert all(batch.schema == target for batch in batches)
        rows += pa.Table.from_batches(batches, target).to_pylist()
    return rows


_SIMPLE = {"BIGINT": LongType(), "INT": IntegerType(), "STRING": StringType(), "DATE": DateType()}


def _ddl(ddl: str) -> StructType:
    """``a BIGINT, b STRING``: a schema of simple types, parsed without a Spark session."""
    fields = [column.split() for column in ddl.split(",")]
    return StructType([StructField(name, _SIMPLE[kind]) for name, kind in fields])


# -- spark-avro's type mapping ----------------------------------------------------------------
DECIMAL_FIXED = {"type": "fixed", "name": "D", "size": 5, "logicalType": "decimal", "precision": 9}
MAPPING: list[tuple[Any, str, Any, Any]] = [
    # (Avro type, Spark type, a value to write, the value read)
    ("boolean", "boolean", True, True),
    ("int", "int", -7, -7),
    ("long", "bigint", 2**40, 2**40),
    ("float", "float", 1.5, 1.5),
    ("double", "double", 2.25, 2.25),
    ("string", "string", "é", "é"),
    ("bytes", "binary", b"\x00\xff", b"\x00\xff"),
    ({"type": "fixed", "name": "F", "size": 2}, "binary", b"ab", b"ab"),
    ({"type": "enum", "name": "E", "symbols": ["A", "B"]}, "string", "B", "B"),
    ({"type": "int", "logicalType": "date"}, "date", dt.date(1500, 3, 1), dt.date(1500, 3, 1)),
    (
        {"type": "long", "logicalType": "timestamp-millis"},
        "timestamp",
        dt.datetime(2020, 1, 2, 3, 4, 5, 6000, tzinfo=UTC),
        dt.datetime(2020, 1, 2, 3, 4, 5, 6000, tzinfo=UTC),
    ),
    (
        {"type": "long", "logicalType": "timestamp-micros"},
        "timestamp",
        dt.datetime(1900, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
        dt.datetime(1900, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
    ),
    (
        {"type": "long", "logicalType": "local-timestamp-millis"},
        "timestamp_ntz",
        dt.datetime(2020, 1, 2, 3, 4, 5, 6000),
        dt.datetime(2020, 1, 2, 3, 4, 5, 6000),
    ),
    (
        {"type": "long", "logicalType": "local-timestamp-micros"},
        "timestamp_ntz",
        dt.datetime(2020, 1, 2, 3, 4, 5, 6),
        dt.datetime(2020, 1, 2, 3, 4, 5, 6),
    ),
    (
        {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 3},
        "decimal(10,3)",
        decimal.Decimal("-1234.567"),
        decimal.Decimal("-1234.567"),
    ),
    (DECIMAL_FIXED, "decimal(9,0)", decimal.Decimal("123456789"), decimal.Decimal("123456789")),
    (
        {"type": "string", "logicalType": "uuid"},
        "string",
        str(uuid.UUID(int=7)),
        str(uuid.UUID(int=7)),
    ),
    (["null", "long"], "bigint", None, None),
    (["long", "null"], "bigint", 5, 5),
    (["int", "long"], "bigint", 3, 3),
    (["float", "double"], "double", 0.5, 0.5),
    (
        ["int", "string"],
        "struct<member0:int,member1:string>",
        "x",
        {"member0": None, "member1": "x"},
    ),
    (
        ["null", "int", "string"],
        "struct<member0:int,member1:string>",
        4,
        {"member0": 4, "member1": None},
    ),
    ({"type": "map", "values": "int"}, "map<string,int>", {"k": 1}, [("k", 1)]),
    ({"type": "array", "items": ["null", "string"]}, "array<string>", ["a", None], ["a", None]),
    (record([("x", "double")], "In"), "struct<x:double>", {"x": 1.0}, {"x": 1.0}),
]


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize(("avro_type", "spark", "value", "expected"), MAPPING)
def test_avro_types_read_as_spark_avro_maps_them(
    tmp_path: Path, writer: str, avro_type: Any, spark: str, value: Any, expected: Any
) -> None:
    WRITERS[writer](tmp_path / "a.avro", record([("c", avro_type)]), [{"c": value}], "null")
    assert infer(tmp_path) == f"struct<c:{spark}>"
    assert read(tmp_path) == [{"c": expected}]


IN = {"type": "record", "name": "In", "fields": [{"name": "x", "type": "int"}]}
OUT = {
    "type": "record",
    "name": "Out",
    "namespace": "a.b",
    "fields": [{"name": "x", "type": "int"}],
}
LOOKALIKES = [
    # (union, values written with fastavro's tuple notation for the named branch, read)
    (
        ["null", IN, {"type": "map", "values": "int"}],
        [("In", {"x": 1}), {"x": 2}, None],
        [{"member0": {"x": 1}, "member1": None}, {"member0": None, "member1": [("x", 2)]}, None],
    ),
    (
        [IN, OUT],
        [("a.b.Out", {"x": 1}), ("In", {"x": 2})],
        [{"member0": None, "member1": {"x": 1}}, {"member0": {"x": 2}, "member1": None}],
    ),
    (
        [{"type": "enum", "name": "E", "symbols": ["A"]}, "string"],
        [("E", "A"), "B"],
        [{"member0": "A", "member1": None}, {"member0": None, "member1": "B"}],
    ),
    (
        [{"type": "fixed", "name": "F", "size": 2}, "bytes"],
        [("F", b"ab"), b"xyz"],
        [{"member0": b"ab", "member1": None}, {"member0": None, "member1": b"xyz"}],
    ),
]


@pytest.mark.parametrize(("union", "values", "expected"), LOOKALIKES)
def test_a_union_member_is_told_by_its_type_name_where_values_look_alike(
    tmp_path: Path, union: Any, values: list[Any], expected: list[Any]
) -> None:
    write_fastavro(tmp_path / "a.avro", record([("c", union)]), [{"c": v} for v in values], "null")
    assert read(tmp_path) == [{"c": e} for e in expected]


def test_a_header_schema_avros_java_parser_reads_is_read_as_it_reads_it(tmp_path: Path) -> None:
    """{"type": "F"} names a type, {"type": {...}} is the type inside, a decimal whose scale
    exceeds its precision is plain bytes: spark-avro reads such a header; fastavro does not."""
    plain = record([("a", {"type": "fixed", "name": "F", "size": 2}), ("b", "F"), ("c", "bytes")])
    write_fastavro(tmp_path / "a.avro", plain, [{"a": b"xy", "b": b"zw", "c": b"\x01"}], "null")
    data = (tmp_path / "a.avro").read_bytes()
    header = read_header(io.BytesIO(data))
    lenient = record(
        [
            ("a", {"type": "fixed", "name": "F", "size": 2}),
            ("b", {"type": {"type": "F"}}),
            ("c", {"type": "bytes", "logicalType": "decimal", "precision": 2, "scale": 5}),
        ]
    )
    rewritten = encode_header(json.dumps(lenient), "null", header.sync) + data[header.end :]
    (tmp_path / "a.avro").write_bytes(rewritten)
    assert infer(tmp_path) == "struct<a:binary,b:binary,c:binary>"
    assert read(tmp_path) == [{"a": b"xy", "b": b"zw", "c": b"\x01"}]


def test_a_union_of_int_and_long_beside_others_is_refused_and_avro_schema_reads_it(
    tmp_path: Path,
) -> None:
    write_fastavro(
        tmp_path / "a.avro", record([("u", ["int", "long", "string"])]), [{"u": 1}], "null"
    )
    with pytest.raises(SchemaError, match=r"a\.avro: the union .*int and long"):
        infer(tmp_path)
    reader = json.dumps(record([("u", ["long", "string"])]))
    assert read(tmp_path, avroSchema=reader) == [{"u": {"member0": 1, "member1": None}}]


def test_stable_union_names_follow_the_member_types(tmp_path: Path) -> None:
    schema = record([("u", ["int", "string", {"type": "enum", "name": "E", "symbols": ["A"]}])])
    write_fastavro(tmp_path / "a.avro", schema, [{"u": "x"}, {"u": 2}], "null")
    assert infer(tmp_path) == "struct<u:struct<member0:int,member1:string,member2:string>>"
    options = {"enableStableIdentifiersForUnionType": "true"}
    assert infer(tmp_path, **options) == (
        "struct<u:struct<member_int:int,member_string:string,member_E:string>>"
    )
    options["stableIdentifierPrefixForUnionType"] = "m_"
    assert read(tmp_path, **options) == [
        {"u": {"m_int": None, "m_string": "x", "m_E": None}},
        {"u": {"m_int": 2, "m_string": None, "m_E": None}},
    ]


# -- every writer, every codec ----------------------------------------------------------------
PEOPLE = record(
    [
        ("id", "long"),
        ("name", ["null", "string"]),
        ("born", {"type": "int", "logicalType": "date"}),
        ("tags", {"type": "map", "values": "string"}),
    ]
)


def people(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": i,
            "name": None if i % 3 == 0 else f"n{i}",
            "born": dt.date(2000, 1, 1) + dt.timedelta(days=i),
            "tags": {"k": str(i)},
        }
        for i in range(n)
    ]


@pytest.mark.parametrize(("writer", "codec"), WRITTEN)
def test_each_writer_and_codec_reads_back_whole(tmp_path: Path, writer: str, codec: str) -> None:
    WRITERS[writer](tmp_path / "p.avro", PEOPLE, people(300), codec)
    assert read_header(open(tmp_path / "p.avro", "rb")).codec == codec  # noqa: SIM115
    rows = read(tmp_path)
    assert [r["id"] for r in rows] == list(range(300))
    assert rows[4] == {
        "id": 4,
        "name": "n4",
        "born": dt.date(2000, 1, 5),
        "tags": [("k", "4")],
    }
    assert rows[3]["name"] is None


# -- splits at sync markers ---------------------------------------------------------------------
@pytest.mark.parametrize(("writer", "codec"), WRITTEN)
def test_splits_read_every_record_exactly_once(tmp_path: Path, writer: str, codec: str) -> None:
    WRITERS[writer](tmp_path / "p.avro", PEOPLE, people(2000), codec)
    size = os.path.getsize(tmp_path / "p.avro")
    for pieces in (2, 3, 7, 50):
        step = -(-size // pieces)
        ids: list[int] = []
        counts = []
        for start in range(0, size, step):
            found = [r["id"] for r in read(tmp_path, "id BIGINT", (start, step))]
            counts.append(len(found))
            ids += found
        assert ids == list(range(2000)), (pieces, counts)
        assert sum(1 for c in counts if c) > 1  # the file really was shared between splits


@settings(max_examples=30, deadline=None)
@given(cuts=st.lists(st.integers(1, 30_000), max_size=8, unique=True))
def test_any_cut_of_a_file_reads_each_record_once(cuts: list[int], tmp_path_factory: Any) -> None:
    folder = tmp_path_factory.mktemp("cuts")
    write_fastavro(folder / "p.avro", PEOPLE, people(1500), "deflate")
    size = os.path.getsize(folder / "p.avro")
    bounds = sorted({0, size, *(c % size for c in cuts)})
    ids: list[int] = []
    for start, end in itertools.pairwise(bounds):
        ids += [r["id"] for r in read(folder, "id BIGINT", (start, end - start))]
    assert ids == list(range(1500))


@pytest.mark.parametrize(("writer", "codec"), [("fastavro", "null"), ("apache", "deflate")])
def test_a_cut_at_or_beside_each_sync_marker_reads_each_record_once(
    tmp_path: Path, writer: str, codec: str
) -> None:
    """The edges: a split that starts exactly at a marker owns the block after it; one byte
    later, the next split does."""
    WRITERS[writer](tmp_path / "p.avro", PEOPLE, people(200), codec)
    data = (tmp_path / "p.avro").read_bytes()
    sync = read_header(io.BytesIO(data)).sync
    markers = [i for i in range(len(data)) if data.startswith(sync, i)]
    assert len(markers) > 5
    for marker in markers:
        for cut in (marker - 1, marker, marker + 1):
            first = read(tmp_path, "id BIGINT", (0, cut))
            rest = read(tmp_path, "id BIGINT", (cut, len(data) - cut))
            assert [r["id"] for r in first + rest] == list(range(200)), (marker, cut)


# -- reader schemas and inference ---------------------------------------------------------------
def test_avro_schema_resolves_files_to_a_reader_schema(tmp_path: Path) -> None:
    old = record([("id", "int"), ("name", "string")])
    write_fastavro(tmp_path / "a.avro", old, [{"id": 1, "name": "a"}], "null")
    new = record(
        [
            ("id", "long"),  # promoted
            ("label", "string"),
            ("score", "double"),
        ]
    )
    new["fields"][1]["aliases"] = ["name"]
    new["fields"][2]["default"] = 0.5
    options = {"avroSchema": json.dumps(new)}
    assert infer(tmp_path, **options) == "struct<id:bigint,label:string,score:double>"
    assert read(tmp_path, **options) == [{"id": 1, "label": "a", "score": 0.5}]


def test_a_bad_avro_schema_is_an_option_error_when_the_options_are_read() -> None:
    for text, problem in [
        ("{not json", "not valid JSON"),
        ('"int"', "not a record"),
        (json.dumps(record([("a", "nope")])), "unknown Avro type 'nope'"),
        (json.dumps(record([("a", "r")])), "contains itself"),
    ]:
        for use in (Use.READ, Use.STREAM_READ):
            options = {"path": "/x", "format": "avro", "avroSchema": text}
            options["sourceLogLocation"] = "/log"
            with pytest.raises(OptionError, match="'avroSchema': expected an Avro schema") as e:
                parse_options(options, use)
            assert problem in str(e.value)


def test_a_file_that_does_not_resolve_to_avro_schema_fails_naming_it(tmp_path: Path) -> None:
    write_fastavro(tmp_path / "a.avro", record([("id", "int")]), [{"id": 1}], "null")
    reader = json.dumps(record([("id", "int"), ("new", "string")]))  # no default for new
    with pytest.raises(CorruptFileError, match=r"a\.avro: SchemaError: .*does not resolve"):
        read(tmp_path, "id INT", avroSchema=reader)


def test_a_named_type_defined_again_the_same_way_is_one_type(tmp_path: Path) -> None:
    """Apache avro's Python writer repeats a decimal fixed's definition at each use."""
    money = {"type": "fixed", "name": "M", "size": 4, "logicalType": "decimal", "precision": 8}
    schema = record([("a", money), ("b", ["null", "M"])])
    write_apache(tmp_path / "a.avro", schema, [{"a": decimal.Decimal(5), "b": None}], "null")
    assert (
        json.loads(read_header(open(tmp_path / "a.avro", "rb")).schema)["fields"][1][  # noqa: SIM115
            "type"
        ][1]
        != "M"
    )  # written again in full
    assert read(tmp_path) == [{"a": decimal.Decimal(5), "b": None}]
    other = {**money, "size": 5}
    with pytest.raises(OptionError, match="defined twice"):
        parse_options(
            {
                "path": "/x",
                "format": "avro",
                "avroSchema": json.dumps(record([("a", money), ("b", other)])),
            },
            Use.READ,
        )


def test_inference_merges_the_writer_schemas_of_the_sampled_files(tmp_path: Path) -> None:
    write_fastavro(tmp_path / "1.avro", record([("a", "int")]), [{"a": 1}], "null")
    write_apache(tmp_path / "2.avro", record([("a", "long"), ("b", "string")]), [], "null")
    assert infer(tmp_path) == "struct<a:bigint,b:string>"
    assert read(tmp_path) == [{"a": 1, "b": None}]
    write_fastavro(tmp_path / "3.avro", record([("b", "int")]), [], "null")
    with pytest.raises(SchemaError, match=r"column 'b' is int in .*3\.avro but string"):
        infer(tmp_path)


def test_a_type_spark_avro_would_not_read_so_names_the_column(tmp_path: Path) -> None:
    write_fastavro(tmp_path / "a.avro", record([("s", "string")]), [{"s": "x"}], "null")
    with pytest.raises(
        CorruptFileError, match=r"column 's' is Avro string.*not as the schema's int"
    ):
        read(tmp_path, "s INT")


def test_fields_match_by_name_case_insensitively_or_by_position(tmp_path: Path) -> None:
    schema = record([("Id", "long"), ("other", "string")])
    write_fastavro(tmp_path / "a.avro", schema, [{"Id": 1, "other": "o"}], "null")
    assert read(tmp_path, "id BIGINT, missing STRING") == [{"id": 1, "missing": None}]
    assert read(tmp_path, "x BIGINT, y STRING", positionalFieldMatching="true") == [
        {"x": 1, "y": "o"}
    ]
    assert read(tmp_path, "missing STRING") == [{"missing": None}]  # the rows still count


# -- damaged files ------------------------------------------------------------------------------
def test_a_damaged_file_fails_naming_it_or_is_skipped(tmp_path: Path) -> None:
    write_fastavro(tmp_path / "p.avro", PEOPLE, people(500), "deflate")
    data = (tmp_path / "p.avro").read_bytes()
    (tmp_path / "p.avro").write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptFileError, match=r"cannot read avro file .*p\.avro.*early"):
        read(tmp_path, "id BIGINT")
    rows = read(tmp_path, "id BIGINT", ignoreCorruptFiles="true")
    assert 0 < len(rows) < 500
    assert [r["id"] for r in rows] == list(range(len(rows)))  # the blocks before the damage
    (tmp_path / "p.avro").write_bytes(b"PAR1" + data[4:])
    with pytest.raises(CorruptFileError, match="not an Avro object container file"):
        read(tmp_path, "id BIGINT")


def test_a_header_over_64_mib_is_refused_before_it_is_read_whole(tmp_path: Path) -> None:
    schema = json.dumps(record([("id", "long")]))
    sync = b"s" * 16
    big = {"pad": b"x" * (65 << 20)}
    (tmp_path / "h.avro").write_bytes(encode_header(schema, "null", sync, big))
    with pytest.raises(CorruptFileError, match=r"h\.avro declares an Avro header of \d+ bytes"):
        infer(tmp_path)
    with pytest.raises(CorruptFileError, match=r"h\.avro: .*a header over 64 MiB"):
        read(tmp_path, "id BIGINT")


@settings(max_examples=40, deadline=None)
@given(at=st.integers(0, 10_000), byte=st.integers(0, 255))
def test_a_flipped_byte_reads_or_fails_with_a_named_error(
    at: int, byte: int, tmp_path_factory: Any
) -> None:
    folder = tmp_path_factory.mktemp("flip")
    buffer = io.BytesIO()
    fastavro.writer(buffer, fastavro.parse_schema(PEOPLE), people(200), codec="deflate")
    data = bytearray(buffer.getvalue())
    data[at % len(data)] = byte
    (folder / "p.avro").write_bytes(bytes(data))
    try:
        read(folder, "id BIGINT, name STRING, born DATE")
    except CorruptFileError as error:
        assert "p.avro" in str(error)


# -- the sink's writer --------------------------------------------------------------------------
SINK_SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("name", pa.string()),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("ntz", pa.timestamp("us")),
        ("day", pa.date32()),
        ("amount", pa.decimal128(12, 2)),
        ("raw", pa.binary()),
        ("nested", pa.struct([("x", pa.int32()), ("when", pa.date32())])),
        ("items", pa.list_(pa.float64())),
        ("props", pa.map_(pa.string(), pa.decimal128(5, 1))),
    ]
)
SINK_ROWS = [
    {
        "id": 1,
        "name": "a",
        "ts": dt.datetime(1800, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
        "ntz": dt.datetime(2024, 2, 29, 12, 0),
        "day": dt.date(2024, 2, 29),
        "amount": decimal.Decimal("-12.34"),
        "raw": b"\x00",
        "nested": {"x": 3, "when": dt.date(1970, 1, 2)},
        "items": [1.5, None],
        "props": [("p", decimal.Decimal("1.5"))],
    },
    dict.fromkeys(SINK_SCHEMA.names),
]


def written(codec: str, **options: str) -> bytes:
    config = parse_options(
        {"path": "/tmp/x", "format": "avro", "compression": codec, **options},
        Use.BATCH_WRITE,
        StructType([StructField(f.name, spark_type_of(f.type)) for f in SINK_SCHEMA]),
    )
    stream = pa.BufferOutputStream()
    writer = writable_format_named("avro").open_writer(stream, SINK_SCHEMA, config)
    batch = pa.RecordBatch.from_pylist(SINK_ROWS, SINK_SCHEMA)
    writer.write(batch)
    writer.close()
    return bytes(stream.getvalue().to_pybytes())


@pytest.mark.parametrize("codec", ["uncompressed", "deflate", "snappy", "bzip2", "xz"])
def test_the_sink_writes_files_both_readers_and_pyfile_read_back(
    tmp_path: Path, codec: str
) -> None:
    data = written(codec)
    (tmp_path / "part.avro").write_bytes(data)
    assert read(tmp_path) == [
        {**row, "props": row["props"] and [("p", decimal.Decimal("1.5"))]} for row in SINK_ROWS
    ]
    by_fastavro = list(fastavro.reader(io.BytesIO(data)))
    assert by_fastavro[0]["ts"] == SINK_ROWS[0]["ts"]
    assert by_fastavro[0]["amount"] == decimal.Decimal("-12.34")
    assert by_fastavro[0]["props"] == {"p": decimal.Decimal("1.5")}
    assert by_fastavro[1] == dict.fromkeys(SINK_SCHEMA.names)
    if codec in ("uncompressed", "deflate", "bzip2"):  # Apache avro: no xz; snappy is an extra
        by_apache = list(avro.datafile.DataFileReader(io.BytesIO(data), avro.io.DatumReader()))
        assert by_apache[0]["id"] == 1 and by_apache[0]["day"] == dt.date(2024, 2, 29)
        assert by_apache[0]["nested"] == {"x": 3, "when": dt.date(1970, 1, 2)}


def test_the_sink_names_the_record_as_spark_does(tmp_path: Path) -> None:
    header = read_header(io.BytesIO(written("none")))
    schema = json.loads(header.schema)
    assert (schema["name"], schema.get("namespace")) == ("topLevelRecord", None)
    assert schema["fields"][2]["type"] == [
        {"type": "long", "logicalType": "timestamp-micros"},
        "null",
    ]
    named = json.loads(
        read_header(io.BytesIO(written("none", recordName="Row", recordNamespace="a.b"))).schema
    )
    assert (named["name"], named["namespace"]) == ("Row", "a.b")


def test_the_sink_refuses_a_column_avro_cannot_name() -> None:
    fmt = writable_format_named("avro")
    assert fmt.write_problem([pa.field("a b", pa.int32())]) is not None
    assert fmt.write_problem([pa.field("m", pa.map_(pa.int32(), pa.int32()))]) is not None
    assert fmt.write_problem(list(SINK_SCHEMA)) is None
