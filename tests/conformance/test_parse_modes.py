"""Malformed csv and json records: pyfile against Spark's own readers on the same files.

Each case is a folder of hand-written files holding what real feeds hold (values of the wrong
type, too many or too few fields, broken quotes and JSON, overflowing numbers, decimals with
more digits than the scale, nested values that do not fit, lines with text after the record).
Both readers read it in every parse mode, with and without a corrupt-record column, and the
rows must be the same multiset (Spark's ``exceptAll`` both ways, counts equal). In FAILFAST
both must fail, pyfile naming the file. The session time zone is whatever the session has.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from support.frames import assert_same_rows
from support.golden_cases import CSV_SCHEMA, MODES, PARSE_CASES, SMALL, ParseCase

pytestmark = pytest.mark.spark

# Every small case's answers, in every mode and in two more zones, are recorded
# (tests/files/golden, ./dev golden) and pyfile is compared with them in process
# (tests/files/test_golden_reads.py). Here real sessions read the 8 MB files (slow) and one
# small case per path: Python workers, FAILFAST's error through Spark, Connect, streams.
FAST = {"test_modes_match_spark": "json", "test_failfast": "csv", "test_connect": "csv"}


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


def _large_and(name: str) -> list[Any]:
    """The 8 MB files (outside the fast tier: Spark parses each in every mode) and one small
    case (the others are golden)."""
    return [
        pytest.param(case, id=case.name, marks=() if case in SMALL else pytest.mark.slow)
        for case in PARSE_CASES
        if case not in SMALL or case.name == name
    ]


@pytest.mark.parametrize("case", _large_and(FAST["test_modes_match_spark"]))
def test_modes_match_spark(spark: Any, corpus: Path, case: ParseCase) -> None:
    folder = _folder(case, corpus)
    for mode, column, option in MODES if case in SMALL else MODES[:1] + MODES[3:4]:
        what = f"{case.name}, mode {mode}, corrupt column {column}"
        expected = spark_frame(spark, case, folder, mode, column, option)
        actual = pyfile_frame(spark, case, folder, mode, column, option)
        assert_same_rows(expected, actual, what)


@pytest.mark.parametrize("case", _large_and(FAST["test_failfast"]))
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


@pytest.mark.parametrize(
    "case", [c for c in SMALL if c.name == FAST["test_connect"]], ids=lambda c: c.name
)
def test_permissive_over_connect_matches_spark(
    connect_spark: Any, corpus: Path, case: ParseCase
) -> None:
    folder = _folder(case, corpus)
    for mode, column, option in MODES[:1] + MODES[3:4]:
        expected = spark_frame(connect_spark, case, folder, mode, column, option)
        actual = pyfile_frame(connect_spark, case, folder, mode, column, option)
        assert_same_rows(expected, actual, f"Connect: {case.name}, mode {mode}")


@pytest.mark.parametrize("name", ["csv", "json: multiLine"])
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
