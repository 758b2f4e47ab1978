"""Reads without a schema that cannot infer one fail at load(), naming the reason.

Spark calls the data source's ``schema()`` at ``load()``; the tests call it in process on
``memory://`` (no JVM), and one test checks through a real session that the error reaches
``load()`` as its one-line sentence.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pysparksources.errors import OptionError, SchemaError
from pysparksources.files.datasource import FileDataSource
from support.errors import python_error_lines
from support.memory_fs import memory_root

__all__ = ["memory_root"]  # a fixture the tests below take


def put(path: str, data: str | bytes) -> None:
    fsspec.filesystem("memory").pipe_file(path, data.encode() if isinstance(data, str) else data)


def put_parquet(path: str, table: pa.Table) -> None:
    out = io.BytesIO()
    pq.write_table(table, out)
    put(path, out.getvalue())


def schema_of(root: str, fmt: str, **options: str) -> Any:
    return FileDataSource({"format": fmt, "path": f"memory://{root}", **options}).schema()


@pytest.mark.spark
def test_empty_folder_says_give_a_schema(spark: Any, tmp_path: Path) -> None:
    reader = spark.read.format("pyfile").option("format", "json")
    with pytest.raises(Exception) as caught:
        reader.load(str(tmp_path)).schema  # noqa: B018 - Connect resolves the schema lazily
    lines = python_error_lines(str(caught.value))
    assert lines, str(caught.value)
    last = lines[-1]
    assert last.startswith("pysparksources.errors.SchemaError: "), last
    assert "cannot infer a schema" in last and "holds no json file yet" in last, last
    assert ".schema(" in last, last


def test_merge_schema_conflict_names_column_and_file(memory_root: str) -> None:
    put_parquet(f"{memory_root}/1.parquet", pa.table({"a": [1]}))
    put_parquet(f"{memory_root}/2.parquet", pa.table({"a": ["x"]}))
    with pytest.raises(SchemaError) as caught:
        schema_of(memory_root, "parquet", mergeSchema="true")
    message = str(caught.value)
    assert "column 'a' is bigint in earlier files but string in" in message, message
    assert "2.parquet" in message, message
    # Without mergeSchema the first file's footer is the schema, as in Spark.
    assert schema_of(memory_root, "parquet").simpleString() == "struct<a:bigint>"


def test_names_equal_but_for_case_are_refused(memory_root: str) -> None:
    put(f"{memory_root}/a.json", '{"id": 1}\n{"ID": 2}\n')
    with pytest.raises(SchemaError, match=r"'ID' and 'id'.*case-insensitively"):
        schema_of(memory_root, "json")


@pytest.mark.parametrize(
    ("fmt", "option", "value", "expected"),
    [
        ("json", "samplingRatio", "0", "expected a number more than 0 and at most 1"),
        ("json", "samplingRatio", "1.5", "expected a number between 0 and 1"),
        ("parquet", "inferSchema", "true", "does not apply to format parquet"),
        ("csv", "mergeSchema", "true", "does not apply to format csv"),
        ("json", "schemaSampleFiles", "0", "expected an integer"),
    ],
)
def test_inference_options_are_checked(
    memory_root: str, fmt: str, option: str, value: str, expected: str
) -> None:
    put(f"{memory_root}/a.json", '{"id": 1}\n')
    with pytest.raises(OptionError) as caught:
        schema_of(memory_root, fmt, **{option: value})
    assert option in str(caught.value) and expected in str(caught.value), str(caught.value)


def test_sample_limits_bound_the_files_read(memory_root: str) -> None:
    """Only the first files by path are read: a column that appears later is not seen."""
    for i in range(5):
        put(f"{memory_root}/{i}.json", f'{{"id": {i}}}\n')
    put(f"{memory_root}/9.json", '{"id": 9, "late": "x"}\n')
    assert "late" in schema_of(memory_root, "json").fieldNames()
    source = FileDataSource(
        {"format": "json", "path": f"memory://{memory_root}", "schemaSampleFiles": "5"}
    )
    limited = source.schema()
    assert limited.fieldNames() == ["id"]
    reader = pickle.loads(pickle.dumps(source)).reader(limited)
    ids = [r["id"] for p in reader.partitions() for b in reader.read(p) for r in b.to_pylist()]
    assert sorted(ids) == [0, 1, 2, 3, 4, 9]
    assert schema_of(memory_root, "json", schemaSampleBytes="20").fieldNames() == ["id"]
