"""Reads without a schema: pyfile's inferred schema and rows against Spark's own readers.

The cases (support/golden_cases.py) are folders of files as real feeds hold them. Spark's
reader and pyfile read the folder without a schema: the schemas must be equal (names, types,
order) and the rows the same multiset. The session time zone is whatever the session has.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from support.frames import assert_same_rows
from support.golden_cases import INFER_CASES, InferCase

pytestmark = pytest.mark.spark

# Every case's answer is recorded (tests/files/golden, ./dev golden) and pyfile is compared
# with it in process (tests/files/test_golden_reads.py). Here a few run in real sessions: the
# same answer through Spark's Python workers, over Connect and as streams.
INTEGRATION = ("json: three files", "csv: Hive folders of numbers", "parquet: Spark's own files")
CASES = [c for c in INFER_CASES if c.name in INTEGRATION]


def _folder(case: InferCase, root: Path) -> Path:
    folder = root / f"case-{INFER_CASES.index(case)}"
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


CONNECT_CASES = [
    c for c in INFER_CASES if c.name in ("json: types that change", "csv: inferSchema")
]


@pytest.mark.slow
@pytest.mark.parametrize("case", CONNECT_CASES, ids=[c.name for c in CONNECT_CASES])
def test_inference_over_connect(connect_spark: Any, corpus: Path, case: InferCase) -> None:
    expected, actual = _frames(connect_spark, case, _folder(case, corpus))
    assert actual.schema.simpleString() == expected.schema.simpleString()
    assert_same_rows(expected, actual, case.name)


STREAM_CASES = [
    c for c in INFER_CASES if c.name in ("json: three files", "csv: Hive folders of numbers")
]


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
