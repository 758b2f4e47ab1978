"""Reads without a schema that cannot infer one fail at load(), naming the reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from support.errors import python_error_lines

pytestmark = pytest.mark.spark


def _load_error(spark: Any, folder: Path, fmt: str, **options: str) -> str:
    reader = spark.read.format("pyfile").option("format", fmt).options(**options)
    with pytest.raises(Exception) as caught:
        reader.load(str(folder)).schema  # noqa: B018 - Connect resolves the schema lazily
    lines = python_error_lines(str(caught.value))
    assert lines, str(caught.value)
    return lines[-1]


def test_empty_folder_says_give_a_schema(spark: Any, tmp_path: Path) -> None:
    last = _load_error(spark, tmp_path, "json")
    assert last.startswith("pysparksources.errors.SchemaError: "), last
    assert "cannot infer a schema" in last and "holds no json file yet" in last, last
    assert ".schema(" in last, last


def test_merge_schema_conflict_names_column_and_file(spark: Any, tmp_path: Path) -> None:
    pq.write_table(pa.table({"a": [1]}), tmp_path / "1.parquet")
    pq.write_table(pa.table({"a": ["x"]}), tmp_path / "2.parquet")
    last = _load_error(spark, tmp_path, "parquet", mergeSchema="true")
    assert "column 'a' is bigint in earlier files but string in" in last, last
    assert "2.parquet" in last, last
    # Without mergeSchema the first file's footer is the schema, as in Spark.
    df = spark.read.format("pyfile").option("format", "parquet").load(str(tmp_path))
    assert df.schema.simpleString() == "struct<a:bigint>"


def test_names_equal_but_for_case_are_refused(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('{"id": 1}\n{"ID": 2}\n')
    last = _load_error(spark, tmp_path, "json")
    assert "'ID' and 'id'" in last and "case-insensitively" in last, last


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
    spark: Any, tmp_path: Path, fmt: str, option: str, value: str, expected: str
) -> None:
    (tmp_path / "a.json").write_text('{"id": 1}\n')
    last = _load_error(spark, tmp_path, fmt, **{option: value})
    assert last.startswith("pysparksources.errors.OptionError: "), last
    assert option in last and expected in last, last


def test_sample_limits_bound_the_files_read(spark: Any, tmp_path: Path) -> None:
    """Only the first files by path are read: a column that appears later is not seen."""
    for i in range(5):
        (tmp_path / f"{i}.json").write_text(f'{{"id": {i}}}\n')
    (tmp_path / "9.json").write_text('{"id": 9, "late": "x"}\n')
    reader = spark.read.format("pyfile").option("format", "json")
    assert "late" in reader.load(str(tmp_path)).columns
    limited = reader.option("schemaSampleFiles", "5").load(str(tmp_path))
    assert limited.columns == ["id"]
    assert sorted(r.id for r in limited.collect()) == [0, 1, 2, 3, 4, 9]
    by_bytes = reader.option("schemaSampleBytes", "20").load(str(tmp_path))
    assert by_bytes.columns == ["id"]
