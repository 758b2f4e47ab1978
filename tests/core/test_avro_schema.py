"""The one Avro schema model (``_core/avro_schema.py``) in process: the choices it makes where
pyfile's and pyeventhub's parsers used to differ, its bounds, and the fastavro document.

Both sources parse with it, so each case is checked for both sources' names; the end-to-end
consequences are in tests/files/test_avro_format.py and tests/eventhubs/avro/.
"""

from __future__ import annotations

import io
import json
from typing import Any

import fastavro
import pytest

from pysparksources._core.avro_schema import (
    MAX_DEPTH,
    MAX_JSON_DEPTH,
    SPARK_LOGICAL_TYPES,
    UnionNames,
    fastavro_document,
    parse_schema,
    spark_ddl,
    spark_type,
)
from pysparksources.errors import SchemaError

SOURCES = ["pyfile", "pyeventhub"]


def ddl(schema: Any, source: str = "pyfile", stable: bool = False) -> str:
    node = parse_schema(json.dumps(schema), source)[1]
    return spark_ddl(spark_type(node, UnionNames(source, stable)))


# A logical type Avro's Java parser ignores (LogicalTypes.fromSchemaIgnoreInvalid), so that
# spark-avro reads the plain type: pyeventhub used to refuse the bad decimals.
IGNORED = [
    ({"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 9}, "binary"),
    ({"type": "bytes", "logicalType": "decimal"}, "binary"),
    ({"type": "bytes", "logicalType": "decimal", "precision": True}, "binary"),
    ({"type": "bytes", "logicalType": "decimal", "precision": 0}, "binary"),
    (
        {"type": "fixed", "name": "F", "size": 2, "logicalType": "decimal", "precision": 9},
        "binary",
    ),
    ({"type": "string", "logicalType": "date"}, "string"),
    ({"type": "int", "logicalType": "timestamp-millis"}, "int"),
    ({"type": "long", "logicalType": "time-micros"}, "bigint"),
    ({"type": "string", "logicalType": "uuid"}, "string"),
]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize(("avro", "spark"), IGNORED)
def test_a_logical_type_that_does_not_fit_is_read_as_its_plain_type(
    source: str, avro: dict[str, Any], spark: str
) -> None:
    assert ddl(avro, source) == spark


@pytest.mark.parametrize(("avro", "spark"), IGNORED)
def test_fastavro_reads_plain_values_where_the_model_reads_the_plain_type(
    avro: dict[str, Any], spark: str
) -> None:
    """fastavro refuses some of these annotations: the document it gets has none of them."""
    document = fastavro_document(avro, SPARK_LOGICAL_TYPES)
    assert "logicalType" not in document
    parsed = fastavro.parse_schema(document)
    value = {"binary": b"\x01\x02", "string": "s", "int": 3, "bigint": 4}[spark]
    stream = io.BytesIO()
    fastavro.schemaless_writer(stream, parsed, value)
    stream.seek(0)
    assert fastavro.schemaless_reader(stream, parsed) == value


def test_fastavro_document_keeps_only_the_logical_types_asked_for() -> None:
    schema = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "d", "type": {"type": "int", "logicalType": "date"}},
            {
                "name": "m",
                "type": {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2},
            },
        ],
    }
    logical = [
        [f["type"].get("logicalType") for f in fastavro_document(schema, keep)["fields"]]
        for keep in ((), {"decimal"}, SPARK_LOGICAL_TYPES)
    ]
    assert logical == [[None, None], [None, "decimal"], ["date", "decimal"]]
    assert schema["fields"][0]["type"]["logicalType"] == "date"  # a copy: the input is kept


@pytest.mark.parametrize("source", SOURCES)
def test_a_decimal_wider_than_spark_is_refused(source: str) -> None:
    wide = {"type": "bytes", "logicalType": "decimal", "precision": 40, "scale": 1}
    with pytest.raises(SchemaError, match=r"decimal\(40,1\) is wider .*38 digits at most") as e:
        ddl(wide, source)
    assert e.value.source == source


def _record(fields: list[tuple[str, Any]], name: str = "R") -> dict[str, Any]:
    return {"type": "record", "name": name, "fields": [{"name": n, "type": t} for n, t in fields]}


FIXED = {"type": "fixed", "name": "F", "size": 4, "logicalType": "decimal", "precision": 8}
REFUSED = [
    (_record([("a", "R")]), "record R contains itself"),
    (_record([("a", FIXED), ("b", {**FIXED, "size": 5})]), "the type F is defined twice"),
    (_record([("a", "int"), ("a", "long")]), "two fields named 'a'"),
    (["int", "string", "int"], "a union holds int twice"),
    (["null", ["int", "string"]], "a union holds another union directly"),
    ("Missing", "unknown Avro type 'Missing'"),
    ({"type": "nope"}, "unknown Avro type 'nope'"),
    ({"type": "enum", "name": "E"}, "enum E needs a list of symbols"),
]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize(("avro", "message"), REFUSED)
def test_what_avros_java_parser_refuses_both_sources_refuse(
    source: str, avro: Any, message: str
) -> None:
    with pytest.raises(SchemaError, match=message) as e:
        parse_schema(json.dumps(avro), source, "avroSchema")
    assert str(e.value).startswith(f"{source}: avroSchema: ")


def test_a_named_type_defined_again_the_same_way_is_one_type_and_one_for_fastavro() -> None:
    """Apache avro's Python writer repeats a decimal fixed's definition at each use."""
    schema = _record(
        [("a", FIXED), ("b", ["null", FIXED]), ("c", {"type": "F"}), ("d", {"type": ["int"]})]
    )
    assert ddl(schema) == (
        "struct<`a`: decimal(8,0), `b`: decimal(8,0), `c`: decimal(8,0), `d`: int>"
    )
    document = fastavro_document(schema)
    assert [f["type"] for f in document["fields"][1:]] == [["null", "F"], "F", ["int"]]
    # fastavro refuses the repeated definition, {"type": "F"} and {"type": [...]} itself
    fastavro.parse_schema(document)
    with pytest.raises(Exception, match="redefined named type"):
        fastavro.parse_schema(schema)


def test_union_members_are_named_by_position_or_by_type() -> None:
    union = ["null", "int", {"type": "enum", "name": "a.E", "symbols": ["X"]}]
    assert ddl(union) == "struct<`member0`: int, `member1`: string>"
    assert ddl(union, stable=True) == "struct<`member_int`: int, `member_E`: string>"
    clash = ["int", {"type": "fixed", "name": "INT", "size": 1}]
    with pytest.raises(SchemaError, match="member_INT"):
        ddl(clash, stable=True)


def _nested_arrays(depth: int) -> Any:
    schema: Any = "int"
    for _ in range(depth - 1):
        schema = {"type": "array", "items": schema}
    return schema


@pytest.mark.parametrize("source", SOURCES)
def test_both_sources_bound_a_schema_alike(source: str) -> None:
    assert ddl(_nested_arrays(MAX_DEPTH), source).count("array<") == MAX_DEPTH - 1
    with pytest.raises(SchemaError, match=f"types nested deeper than {MAX_DEPTH}"):
        ddl(_nested_arrays(MAX_DEPTH + 1), source)
    deep_json = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
    with pytest.raises(SchemaError, match=f"JSON nested deeper than {MAX_JSON_DEPTH}"):
        parse_schema(deep_json, source)
    doubling: Any = _record([("x", "int")], "L0")
    for level in range(1, 40):
        inner = doubling["name"]
        doubling = _record([("a", doubling), ("b", inner)], f"L{level}")
    with pytest.raises(SchemaError, match="expands to more than 100000 types"):
        parse_schema(json.dumps(doubling), source)
