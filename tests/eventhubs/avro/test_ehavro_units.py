"""bodyFormat=avro without Spark or a hub: the type mapping, decoding, encoding, option errors."""

from __future__ import annotations

import datetime as dt
import io
import json
from decimal import Decimal
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from pyspark.sql.pandas.types import from_arrow_schema

from pysparksources._core.avro_schema import UnionNames, parse_schema, spark_ddl, spark_type
from pysparksources._core.option_table import Use
from pysparksources.errors import MalformedRecordError, OptionError, SchemaError
from pysparksources.eventhubs._body_format import read_schema_ddl
from pysparksources.eventhubs._schema import ARROW_SCHEMA
from pysparksources.eventhubs.avro.decode import decode_batch, read_arrow_schema
from pysparksources.eventhubs.avro.encode import derive_avro_schema, encode_bodies
from pysparksources.eventhubs.config import BodyFormat, SinkConfig, SourceConfig
from pysparksources.eventhubs.options import parse_options

CONN = "Endpoint=sb://ns.example/;SharedAccessKeyName=p;SharedAccessKey=SECRETKEY;EntityPath=h"

# Avro type -> Spark type, as spark-avro's SchemaConverters.toSqlType maps them.
MAPPING = [
    ('"int"', "int"),
    ('"long"', "bigint"),
    ('"float"', "float"),
    ('"double"', "double"),
    ('"boolean"', "boolean"),
    ('"string"', "string"),
    ('"bytes"', "binary"),
    ('{"type": "fixed", "name": "F", "size": 4}', "binary"),
    ('{"type": "enum", "name": "E", "symbols": ["A", "B"]}', "string"),
    ('{"type": "int", "logicalType": "date"}', "date"),
    ('{"type": "int", "logicalType": "time-millis"}', "int"),
    ('{"type": "long", "logicalType": "timestamp-millis"}', "timestamp"),
    ('{"type": "long", "logicalType": "timestamp-micros"}', "timestamp"),
    ('{"type": "long", "logicalType": "local-timestamp-millis"}', "timestamp_ntz"),
    ('{"type": "long", "logicalType": "local-timestamp-micros"}', "timestamp_ntz"),
    ('{"type": "string", "logicalType": "uuid"}', "string"),
    ('{"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}', "decimal(9,2)"),
    (
        '{"type": "fixed", "name": "D", "size": 8, "logicalType": "decimal", "precision": 18, '
        '"scale": 3}',
        "decimal(18,3)",
    ),
    ('["null", "string"]', "string"),
    ('["string", "null"]', "string"),
    ('["int", "long"]', "bigint"),
    ('["float", "double"]', "double"),
    ('["null", "int", "string"]', "struct<`member0`: int, `member1`: string>"),
    ('["boolean", "bytes"]', "struct<`member0`: boolean, `member1`: binary>"),
    ('{"type": "array", "items": ["null", "int"]}', "array<int>"),
    ('{"type": "map", "values": "long"}', "map<string, bigint>"),
    (
        '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}, '
        '{"name": "b", "type": {"type": "record", "name": "S", "fields": '
        '[{"name": "c", "type": "string"}]}}, {"name": "d", "type": "S"}]}',
        "struct<`a`: int, `b`: struct<`c`: string>, `d`: struct<`c`: string>>",
    ),
]


def _ddl(avro: str) -> str:
    return spark_ddl(spark_type(parse_schema(avro, "pyeventhub")[1], UnionNames("pyeventhub")))


@pytest.mark.parametrize(("avro", "spark"), MAPPING)
def test_avro_types_map_to_spark_types_like_spark_avro(avro: str, spark: str) -> None:
    assert _ddl(avro) == spark


@pytest.mark.parametrize(
    ("avro", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"type": "record", "name": "L", "fields": [{"name": "n", "type": "L"}]}', "itself"),
        ('{"type": "nope"}', "unknown Avro type"),
        ('"Missing"', "unknown Avro type 'Missing'"),
        ('{"type": "bytes", "logicalType": "decimal", "precision": 40}', "38 digits at most"),
    ],
)
def test_bad_avro_schemas_are_refused(avro: str, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        _ddl(avro)


ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "when", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {
            "name": "price",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
        },
        {"name": "uid", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID"]}},
        {"name": "note", "type": ["null", "string"]},
        {
            "name": "either",
            "type": [
                "null",
                "int",
                "string",
                {"type": "record", "name": "Inner", "fields": [{"name": "x", "type": "int"}]},
            ],
        },
        {
            "name": "stamps",
            "type": {"type": "array", "items": {"type": "long", "logicalType": "timestamp-micros"}},
        },
        {"name": "attrs", "type": {"type": "map", "values": ["null", "double"]}},
        {"name": "code", "type": {"type": "fixed", "name": "Code", "size": 2}},
        {"name": "count", "type": ["int", "long"]},
    ],
}
UTC = dt.timezone.utc
RECORDS: list[dict[str, Any]] = [
    {
        "id": 1,
        "when": dt.datetime(2026, 1, 2, 3, 4, 5, 123000, tzinfo=UTC),
        "day": dt.date(2026, 1, 2),
        "local": dt.datetime(2026, 1, 2, 3, 4, 5, 123456),
        "price": Decimal("12.34"),
        "uid": "6b0f3a2e-6c1e-4f7e-9d8a-1c2b3d4e5f60",
        "status": "PAID",
        "note": None,
        "either": {"x": 5},
        "stamps": [dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)],
        "attrs": {"a": 1.5, "b": None},
        "code": b"ab",
        "count": 7,
    },
    {
        "id": -2,
        "when": dt.datetime(1970, 1, 1, tzinfo=UTC),
        "day": dt.date(1900, 3, 1),
        "local": dt.datetime(2100, 12, 31, 23, 59, 59),
        "price": Decimal("-0.01"),
        "uid": "6b0f3a2e-6c1e-4f7e-9d8a-1c2b3d4e5f61",
        "status": "NEW",
        "note": "n",
        "either": "s",
        "stamps": [],
        "attrs": {},
        "code": b"cd",
        "count": 2**40,
    },
]
# What the decoded body holds: unions as Spark's member structs, maps as Arrow's pairs.
EXPECTED_BODIES = [
    {
        **RECORDS[0],
        "either": {"member0": None, "member1": None, "member2": {"x": 5}},
        "attrs": [("a", 1.5), ("b", None)],
    },
    {
        **RECORDS[1],
        "either": {"member0": None, "member1": "s", "member2": None},
        "attrs": [],
    },
]


def _avro_bytes(schema: Any, record: Any) -> bytes:
    stream = io.BytesIO()
    fastavro.schemaless_writer(stream, fastavro.parse_schema(schema), record)
    return stream.getvalue()


def _received(bodies: list[bytes | None]) -> pa.RecordBatch:
    """A chunk in the plain read schema, as _arrowize builds it from received events."""
    n = len(bodies)
    columns = [
        pa.array(bodies, pa.binary()),
        pa.array(["3"] * n),
        pa.array([str(100 * i) for i in range(n)]),
        pa.array(range(40, 40 + n), pa.int64()),
        pa.array([1_700_000_000_000_000] * n, pa.timestamp("us", tz="UTC")),
        pa.array([None] * n, pa.string()),
        pa.array(["k"] * n),
        pa.array([[]] * n, ARROW_SCHEMA.field(7).type),
        pa.array([[]] * n, ARROW_SCHEMA.field(8).type),
    ]
    return pa.RecordBatch.from_arrays(columns, schema=ARROW_SCHEMA)


def _source(**options: str) -> SourceConfig:
    return parse_options(
        {
            "connectionString": CONN,
            "bodyFormat": "avro",
            "avroSchema": json.dumps(ORDER),
            **options,
        },
        Use.STREAM_READ,
    )


def _sink(options: dict[str, str], arrow: pa.Schema) -> SinkConfig:
    return parse_options(options, Use.STREAM_WRITE, from_arrow_schema(arrow))


def body_format_from_raw(raw: dict[str, str]) -> BodyFormat:
    """The read's body options as the data source checks them at load() (Use.READ)."""
    hub = {} if "fullyQualifiedNamespace" in raw else {"connectionString": CONN}
    return parse_options({**hub, **raw}, Use.READ).body


def test_every_type_decodes_to_spark_values_and_bad_bodies_follow_the_mode(tmp_path: Any) -> None:
    good = [_avro_bytes(ORDER, r) for r in RECORDS]
    chunk = _received([good[0], b"\x02\x04", good[1], good[1] + b"\x00", None])
    bad_rows = [1, 3, 4]  # truncated, a trailing byte, no body

    permissive = decode_batch(_source(mode="PERMISSIVE"), chunk, [None] * 5)
    assert permissive.schema == read_arrow_schema(_source(mode="PERMISSIVE").body)
    rows = permissive.to_pylist()
    assert [rows[0]["body"], rows[2]["body"]] == EXPECTED_BODIES
    assert [r["_corrupt_record"] for r in rows[::2][:2]] == [None, None]
    for i in bad_rows:
        assert rows[i]["body"] is None
        assert rows[i]["_corrupt_record"]["body"] == chunk.column(0)[i].as_py()
    assert "EOFError" in rows[1]["_corrupt_record"]["error"]
    assert "1 bytes are left" in rows[3]["_corrupt_record"]["error"]
    assert "no body" in rows[4]["_corrupt_record"]["error"]
    assert [r["sequenceNumber"] for r in rows] == [40, 41, 42, 43, 44]

    dropped = decode_batch(_source(mode="DROPMALFORMED"), chunk, [None] * 5).to_pylist()
    assert [r["sequenceNumber"] for r in dropped] == [40, 42]

    with pytest.raises(MalformedRecordError) as failed:
        decode_batch(_source(), chunk, [None] * 5)
    assert "sequenceNumber 41 in partition 3 of sb://ns.example/h" in str(failed.value)
    assert "3 of 5 events" in str(failed.value)

    folder = tmp_path / "bad"
    kept = decode_batch(_source(badRecordsPath=str(folder)), chunk, [None] * 5).to_pylist()
    assert [r["sequenceNumber"] for r in kept] == [40, 42]
    (written,) = list(folder.iterdir())
    assert written.name == "h-3-40.json"  # retried tasks overwrite, never duplicate
    lines = [json.loads(line) for line in written.read_text().splitlines()]
    assert [line["sequenceNumber"] for line in lines] == [41, 43, 44]
    assert lines[0]["body"] == "AgQ=" and lines[0]["partition"] == "3"
    assert lines[0]["eventHub"] == "h" and lines[0]["offset"] == "100"
    assert lines[2]["body"] is None and "no body" in lines[2]["error"]


MONEY = {"type": "fixed", "name": "M", "size": 4, "logicalType": "decimal", "precision": 8}
# As spark-avro (Avro's Java parser) reads it: a decimal annotation that is not valid is
# ignored, a named type defined again the same way (Apache avro's Python writer) is one type.
# fastavro refuses both, so the parsed model gives fastavro its own document.
LENIENT = {
    "type": "record",
    "name": "R",
    "fields": [
        {
            "name": "raw",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 9},
        },
        {"name": "a", "type": MONEY},
        {"name": "b", "type": ["null", MONEY]},
    ],
}


def test_a_schema_spark_avro_reads_decodes_and_encodes_where_fastavro_alone_refuses() -> None:
    writer = {
        **LENIENT,
        "fields": [
            {"name": "raw", "type": "bytes"},
            LENIENT["fields"][1],
            {"name": "b", "type": ["null", "M"]},
        ],
    }
    value = {"raw": b"\x01\x02", "a": Decimal(5), "b": Decimal(-7)}
    source = _source(avroSchema=json.dumps(LENIENT))
    assert "body struct<`raw`: binary, `a`: decimal(8,0), `b`: decimal(8,0)>" in read_schema_ddl(
        source.body
    )
    decoded = decode_batch(source, _received([_avro_bytes(writer, value)]), [None]).to_pylist()
    assert decoded[0]["body"] == value

    body_type = read_arrow_schema(source.body).field(0).type
    sink = _sink(
        {"connectionString": CONN, "bodyFormat": "avro", "avroSchema": json.dumps(LENIENT)},
        pa.schema([pa.field("body", body_type)]),
    )
    encoded, _ = encode_bodies(sink.body, pa.array([value], body_type), first_row=0)
    assert encoded == [_avro_bytes(writer, value)]


PLAIN = {"type": "record", "name": "R", "fields": [{"name": "a", "type": MONEY}]}


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ([{"name": "b", "type": {**MONEY, "size": 5}}], "the type M is defined twice"),
        ([{"name": "a", "type": "int"}], "two fields named 'a'"),
        ([{"name": "u", "type": ["int", "string", "int"]}], "a union holds int twice"),
    ],
)
def test_a_schema_avros_java_parser_refuses_is_an_option_error(
    fields: list[Any], problem: str
) -> None:
    schema = {**PLAIN, "fields": PLAIN["fields"] + fields}
    with pytest.raises(OptionError, match="avroSchema") as error:
        _source(avroSchema=json.dumps(schema))
    assert problem in str(error.value)


def test_sink_derives_to_avros_schema_and_its_bytes_decode_back() -> None:
    body_type = pa.struct(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("name", pa.string()),
            pa.field("price", pa.decimal128(10, 2)),
            pa.field("at", pa.timestamp("us", tz="UTC")),
            pa.field("tags", pa.list_(pa.field("element", pa.string()))),
            pa.field("attrs", pa.map_(pa.string(), pa.int32())),
            pa.field("inner", pa.struct([pa.field("x", pa.float64())])),
        ]
    )
    derived = json.loads(derive_avro_schema(body_type))
    assert derived["name"] == "topLevelRecord" and "namespace" not in derived
    fields = {f["name"]: f["type"] for f in derived["fields"]}
    assert fields["id"] == "long"  # not nullable: no union
    assert fields["name"] == ["string", "null"]  # nullable: [type, "null"], as to_avro
    assert fields["price"][0] == {
        "type": "fixed",
        "name": "topLevelRecord.price.fixed",
        "size": 5,
        "logicalType": "decimal",
        "precision": 10,
        "scale": 2,
    }
    assert fields["at"][0] == {"type": "long", "logicalType": "timestamp-micros"}
    assert fields["inner"][0]["name"] == "inner"
    assert fields["inner"][0]["namespace"] == "topLevelRecord"

    values = [
        {
            "id": 1,
            "name": "a",
            "price": Decimal("9.99"),
            "at": dt.datetime(2026, 5, 1, 12, tzinfo=UTC),
            "tags": ["x", None],
            "attrs": [("k", 1)],
            "inner": {"x": 0.5},
        }
    ]
    column = pa.array(values, type=body_type)
    config = _sink(
        {"connectionString": CONN, "bodyFormat": "avro"}, pa.schema([pa.field("body", body_type)])
    )
    (encoded,), content_type = encode_bodies(config.body, column, first_row=0)
    assert content_type is None  # no registry: plain Avro
    decoded = fastavro.schemaless_reader(io.BytesIO(encoded), fastavro.parse_schema(derived), None)
    assert decoded == {**values[0], "attrs": {"k": 1}}


def test_the_derived_schema_refuses_and_writes_what_sparks_to_avro_does() -> None:
    """The schema is the one pyfile's Avro sink writes: an Avro name per field, null as null."""
    with pytest.raises(SchemaError, match="'a b' is not a valid Avro name"):
        derive_avro_schema(pa.struct([pa.field("a b", pa.int32())]))
    with pytest.raises(SchemaError, match=r"'body\.m': Avro maps have STRING keys"):
        derive_avro_schema(pa.struct([pa.field("m", pa.map_(pa.int32(), pa.int32()))]))
    derived = json.loads(derive_avro_schema(pa.struct([pa.field("n", pa.null())])))
    assert derived["fields"] == [{"name": "n", "type": "null"}]
    assert json.loads(derive_avro_schema(pa.decimal128(4, 1))) == {
        "type": "fixed",
        "name": "topLevelRecord.fixed",
        "size": 2,
        "logicalType": "decimal",
        "precision": 4,
        "scale": 1,
    }


def test_general_unions_and_maps_encode_from_sparks_shapes() -> None:
    config = _sink(
        {"connectionString": CONN, "bodyFormat": "avro", "avroSchema": json.dumps(ORDER)},
        pa.schema([pa.field("body", read_arrow_schema(_source().body).field(0).type)]),
    )
    column = pa.array(EXPECTED_BODIES, read_arrow_schema(_source().body).field(0).type)
    encoded, _ = encode_bodies(config.body, column, first_row=0)
    back = decode_batch(_source(), _received(encoded), [None] * 2).to_pylist()
    assert [r["body"] for r in back] == EXPECTED_BODIES


def test_option_errors_name_the_option_and_never_the_secret() -> None:
    def error(**options: str) -> str:
        with pytest.raises(OptionError) as raised:
            body_format_from_raw({"clientSecret": "TOPSECRET", **options})
        return str(raised.value)

    assert "'avroSchema'" in error(bodyFormat="avro")
    assert "'bodyFormat'" in error(bodyFormat="protobuf")
    assert "'avroSchema'" in error(bodyFormat="avro", avroSchema='{"type": "nah"}')
    assert "'mode'" in error(bodyFormat="avro", avroSchema='"int"', mode="lenient")
    assert "only with bodyFormat=avro" in error(avroSchema='"int"')
    assert "only with mode=PERMISSIVE" in error(
        bodyFormat="avro", avroSchema='"int"', columnNameOfCorruptRecord="bad"
    )
    assert "'columnNameOfCorruptRecord'" in error(
        bodyFormat="avro", avroSchema='"int"', mode="PERMISSIVE", columnNameOfCorruptRecord="offset"
    )
    registry = error(
        bodyFormat="avro",
        avroSchema='"int"',
        **{"schemaRegistry.fullyQualifiedNamespace": "x.servicebus.windows.net"},
    )
    assert "'tenantId'" in registry and "TOPSECRET" not in registry
    ok = body_format_from_raw(
        {
            "bodyFormat": "AVRO",
            "avroSchema": '"int"',
            "mode": "permissive",
            "schemaRegistry.fullyQualifiedNamespace": "https://x.servicebus.windows.net/",
            "fullyQualifiedNamespace": "ns.servicebus.windows.net",
            "eventHubName": "h",
            "auth": "managedidentity",  # any case, as the hub's auth option
        }
    )
    assert ok.registry is not None and ok.registry.namespace == "x.servicebus.windows.net"
    assert ok.registry.auth == "managedIdentity" and ok.mode == "PERMISSIVE"
    principal = body_format_from_raw(
        {
            "bodyFormat": "avro",
            "avroSchema": '"int"',
            "schemaRegistry.fullyQualifiedNamespace": "x.servicebus.windows.net",
            "tenantId": "t",
            "clientId": "c",
            "clientSecret": "TOPSECRET",
        }
    )
    assert principal.registry is not None and principal.registry.auth == "servicePrincipal"
    assert "TOPSECRET" not in repr(principal) + principal.registry.describe()
    assert read_schema_ddl(ok).startswith("body int, partition string")
    assert read_schema_ddl(ok).endswith("`_corrupt_record` struct<body: binary, error: string>")


def test_sink_refuses_a_body_column_the_schema_does_not_encode() -> None:
    with pytest.raises(SchemaError, match="the body column is struct<id:int>, but avroSchema"):
        _sink(
            {"connectionString": CONN, "bodyFormat": "avro", "avroSchema": json.dumps(ORDER)},
            pa.schema([pa.field("body", pa.struct([pa.field("id", pa.int32())]))]),
        )
    with pytest.raises(OptionError, match=r"schemaRegistry\.group"):
        _sink(
            {
                "connectionString": CONN,
                "bodyFormat": "avro",
                "schemaRegistry.fullyQualifiedNamespace": "x.servicebus.windows.net",
            },
            pa.schema([pa.field("body", pa.struct([pa.field("id", pa.int32())]))]),
        )
