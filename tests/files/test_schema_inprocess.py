"""schemaHints, rescue and schemaEvolutionMode, in process on ``memory://`` (no JVM).

Spark has no answer to compare with here (its file sources have neither hints nor rescue), so
each test states pyfile's documented behaviour (docs/pyfile-schema.md). The data source is
driven as Spark drives it: ``schema()`` at ``load()``, then a copy of the data source (Spark
pickles it) builds the reader, whose partitions are read here. The real-Spark tests that remain
(tests/files/source/test_schema_evolution.py) prove the stop-and-restart of addNewColumns
through a query, the kills and the object stores.
"""

from __future__ import annotations

import datetime
import decimal
import io
import json
import pickle
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from pysparksources.errors import OptionError, PySparkSourcesError, SchemaError
from pysparksources.files.datasource import FileDataSource
from support.memory_fs import memory_root

__all__ = ["memory_root"]  # a fixture the tests below take


def put(path: str, data: bytes | str) -> None:
    fsspec.filesystem("memory").pipe_file(path, data.encode() if isinstance(data, str) else data)


def put_json(path: str, *records: dict[str, Any]) -> None:
    put(path, "".join(json.dumps(r) + "\n" for r in records))


def put_parquet(path: str, table: pa.Table) -> None:
    out = io.BytesIO()
    pq.write_table(table, out)
    put(path, out.getvalue())


def _source(root: str, fmt: str, **options: str) -> FileDataSource:
    return FileDataSource({"format": fmt, "path": f"memory://{root}/in", **options})


def batch(
    root: str, fmt: str, schema: StructType | None = None, **options: str
) -> tuple[StructType, list[dict[str, Any]]]:
    """A batch read: the schema (inferred unless given) and the rows."""
    source = _source(root, fmt, **options)
    struct = schema if schema is not None else source.schema()
    reader = pickle.loads(pickle.dumps(source)).reader(struct)
    rows = [r for p in reader.partitions() for b in reader.read(p) for r in b.to_pylist()]
    return struct, rows


def stream(
    root: str, start: dict[str, Any] | None = None, fmt: str = "json", **options: str
) -> tuple[StructType, list[dict[str, Any]], dict[str, Any]]:
    """A stream read to its end, one file per batch, from ``start`` (None: the beginning;
    a restart passes the last offset it committed): the schema, the rows, the last offset."""
    options = {
        "sourceLogLocation": f"memory://{root}/log",
        "schemaLocation": f"memory://{root}/schema",
        "maxFilesPerTrigger": "1",
        **options,
    }
    source = _source(root, fmt, **options)
    struct = source.schema()
    reader = pickle.loads(pickle.dumps(source)).streamReader(struct)
    rows: list[dict[str, Any]] = []
    try:
        start, limit = start or reader.initialOffset(), reader.getDefaultReadLimit()
        while (end := reader.latestOffset(start, limit)) != start:
            for part in reader.partitions(start, end):
                rows += [r for b in reader.read(part) for r in b.to_pylist()]
            reader.commit(end)
            start = end
    finally:
        reader.stop()
    return struct, rows, start


def versions(root: str) -> list[int]:
    fs = fsspec.filesystem("memory")
    return sorted(int(p.rsplit("/", 1)[-1]) for p in fs.ls(f"{root}/schema/_schemas", detail=False))


# -- hints ------------------------------------------------------------------------------------
def test_hints_override_inferred_types_nested_ones_too(memory_root: str) -> None:
    put_json(
        f"{memory_root}/in/1.json",
        {"id": 1, "amount": 1.25, "tags": {"a": "x"}, "st": {"ts": "2024-01-01"}},
    )
    hints = "id INT, amount DECIMAL(12,2), tags MAP<STRING,STRING>, st.ts DATE, added STRING"
    schema, rows = batch(memory_root, "json", schemaHints=hints)
    assert schema.simpleString() == (
        "struct<amount:decimal(12,2),id:int,st:struct<ts:date>,tags:map<string,string>,"
        "added:string>"
    )
    assert rows == [
        {
            "amount": decimal.Decimal("1.25"),
            "id": 1,
            "st": {"ts": datetime.date(2024, 1, 1)},
            "tags": [("a", "x")],
            "added": None,
        }
    ]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"schemaHints": "id BIGNUM"}, "'bignum' is not a Spark SQL type"),
        ({"schemaEvolutionMode": "addNewColumns", "schemaLocation": ""}, "addNewColumns needs"),
        ({"schemaEvolutionMode": "sometimes"}, "expected one of addNewColumns"),
    ],
)
def test_bad_schema_options_fail_at_load(
    memory_root: str, options: dict[str, str], expected: str
) -> None:
    put_json(f"{memory_root}/in/1.json", {"id": 1})
    with pytest.raises(OptionError, match=expected):
        _source(memory_root, "json", **options).schema()


# -- rescue -----------------------------------------------------------------------------------
def test_csv_and_parquet_rescue_in_batch_reads(memory_root: str) -> None:
    put(f"{memory_root}/in/1.csv", "id,name\n1,a\n")
    put(f"{memory_root}/in/2.csv", "id,name,Name,new\nx,b,B,n\n")
    options = {"header": "true", "inferSchema": "true", "schemaSampleFiles": "1"}
    schema, rows = batch(memory_root, "csv", schemaEvolutionMode="rescue", **options)
    assert schema.simpleString() == "struct<id:int,name:string,_rescued_data:string>"
    rows = sorted(rows, key=lambda r: str(r["name"]))
    assert rows[0] == {"id": 1, "name": "a", "_rescued_data": None}
    rescued = json.loads(rows[1]["_rescued_data"])
    assert rows[1]["id"] is None and rows[1]["name"] == "b"
    assert rescued["id"] == "x" and rescued["Name"] == "B" and rescued["new"] == "n"
    assert rescued["_file_path"].endswith("/in/2.csv")

    parquet = f"{memory_root}/parquet"
    put_parquet(f"{parquet}/in/1.parquet", pa.table({"id": [1], "v": ["a"]}))
    put_parquet(f"{parquet}/in/2.parquet", pa.table({"id": ["2"], "v": ["b"], "w": [2.5]}))
    _, rows = batch(parquet, "parquet", schemaEvolutionMode="rescue")
    rows = sorted(rows, key=lambda r: r["v"])
    assert [r["id"] for r in rows] == [1, 2]  # "2" converts to the schema's BIGINT
    assert rows[0]["_rescued_data"] is None
    assert json.loads(rows[1]["_rescued_data"])["w"] == 2.5


def test_rescued_data_column_renames_the_column(memory_root: str) -> None:
    put_json(f"{memory_root}/in/1.json", {"id": 1})
    put_json(f"{memory_root}/in/2.json", {"id": 2, "extra": "x"})
    schema, rows = batch(
        memory_root,
        "json",
        schemaSampleFiles="1",
        schemaEvolutionMode="none",
        rescuedDataColumn="leftovers",
    )
    assert schema.fieldNames() == ["id", "leftovers"]
    rows = sorted(rows, key=lambda r: r["id"])
    assert rows[0]["leftovers"] is None and json.loads(rows[1]["leftovers"])["extra"] == "x"


def test_a_given_schema_needs_the_rescued_column(memory_root: str) -> None:
    put_json(f"{memory_root}/in/1.json", {"id": 1, "x": 2})
    ids = StructType([StructField("id", LongType())])
    with pytest.raises(PySparkSourcesError, match="add `_rescued_data STRING` to it"):
        batch(memory_root, "json", ids, schemaEvolutionMode="rescue")
    with_rescue = StructType([*ids.fields, StructField("_rescued_data", StringType())])
    _, rows = batch(memory_root, "json", with_rescue, schemaEvolutionMode="rescue")
    assert json.loads(rows[0]["_rescued_data"])["x"] == 2
    with pytest.raises(PySparkSourcesError, match=r"schemaHints.*applies only when pyfile infers"):
        batch(memory_root, "json", with_rescue, schemaEvolutionMode="rescue", schemaHints="id INT")


# -- evolution in a stream ----------------------------------------------------------------------
def test_rescue_keeps_new_columns_mismatched_types_and_case(memory_root: str) -> None:
    put_json(f"{memory_root}/in/1.json", {"id": 1, "amount": 1.5})
    put_json(
        f"{memory_root}/in/2.json",
        {"id": "two", "amount": 2.5, "Amount": 9, "extra": [1, 2]},
        {"id": 3},
    )
    schema, rows, _ = stream(memory_root, schemaEvolutionMode="rescue", schemaSampleFiles="1")
    assert schema.simpleString() == "struct<amount:double,id:bigint,_rescued_data:string>"
    assert versions(memory_root) == [0]  # the schema never changes
    by_amount = {r["amount"]: r for r in rows}
    assert by_amount[1.5]["_rescued_data"] is None
    rescued = json.loads(by_amount[2.5]["_rescued_data"])
    assert rescued["id"] == "two" and rescued["Amount"] == 9 and rescued["extra"] == [1, 2]
    assert rescued["_file_path"].endswith("/in/2.json")
    assert by_amount[2.5]["id"] is None
    assert sorted(str(r["id"]) for r in rows) == ["1", "3", "None"]


def test_fail_on_new_columns_stops_and_records_nothing(memory_root: str) -> None:
    put_json(f"{memory_root}/in/1.json", {"id": 1})
    put_json(f"{memory_root}/in/2.json", {"id": 2, "late": True})
    with pytest.raises(SchemaError, match=r"2\.json has columns the schema lacks: 'late'"):
        stream(memory_root, schemaEvolutionMode="failOnNewColumns", schemaSampleFiles="1")
    assert versions(memory_root) == [0]


def test_none_ignores_new_columns(memory_root: str) -> None:
    put_json(f"{memory_root}/in/1.json", {"id": 1})
    put_json(f"{memory_root}/in/2.json", {"id": 2, "late": True})
    schema, rows, _ = stream(memory_root, schemaEvolutionMode="none", schemaSampleFiles="1")
    assert schema.fieldNames() == ["id"]
    assert sorted(r["id"] for r in rows) == [1, 2]


def test_add_new_columns_records_a_version_and_stops(memory_root: str) -> None:
    """What the Spark test runs through a query and its restart, here at the source."""
    put_json(f"{memory_root}/in/1.json", {"id": 1, "name": "a"})
    schema, rows, committed = stream(memory_root)
    assert schema.simpleString() == "struct<id:bigint,name:string,_rescued_data:string>"
    assert [r["id"] for r in rows] == [1] and versions(memory_root) == [0]
    put_json(f"{memory_root}/in/2.json", {"id": 3, "name": "c", "city": "Oslo", "zip": 123})
    with pytest.raises(SchemaError, match=r"new columns 'city', 'zip'.*schema version 1"):
        stream(memory_root, committed)
    assert versions(memory_root) == [0, 1]
    widened, rows, _ = stream(memory_root, committed)
    assert widened.simpleString() == (
        "struct<id:bigint,name:string,city:string,zip:bigint,_rescued_data:string>"
    )
    assert [(r["id"], r["city"], r["zip"]) for r in rows] == [(3, "Oslo", 123)]
