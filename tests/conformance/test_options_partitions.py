"""pyfile vs Spark with csv options, Hive partition folders and the streaming path."""

from __future__ import annotations

from pathlib import Path

import pytest
from cases import CSV_CASES, PARTITION_TS, PARTITIONS
from corpus import write_seed
from documented import DOCUMENTED
from harness import RESULTS, Case, compare_format, failures
from zones import session_zone, zone_name

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_seed(tmp_path_factory.mktemp("corpus"))


LOS_ANGELES = "America/Los_Angeles"
# Each case runs in the default zone and Los Angeles on both session kinds; by default only
# the classic session in Los Angeles (a zone with DST, not UTC) runs, the rest is slow.
MATRIX = [
    pytest.param(
        kind,
        zone,
        id=f"{kind}-{zone_name(zone)}",
        marks=() if (kind, zone) == ("classic", LOS_ANGELES) else pytest.mark.slow,
    )
    for kind in ("classic", "connect")
    for zone in (None, LOS_ANGELES)
]


def _run(
    request: pytest.FixtureRequest,
    kind: str,
    zone: str | None,
    seed: Path,
    tmp_path: Path,
    fmt: str,
    cases: list[Case],
) -> None:
    session = request.getfixturevalue("spark" if kind == "classic" else "connect_spark")
    cells = []
    with session_zone(session, zone):
        name = zone_name(zone)
        for number, case in enumerate(cases):
            work = tmp_path / str(number)
            cells += compare_format(session, seed, fmt, work, name, kind, DOCUMENTED, case)
    RESULTS.extend(cells)
    problems = failures(cells)
    assert not problems, "\n".join(problems)


# ``session`` is parametrized directly (the root conftest orders Connect items by it).
@pytest.mark.parametrize(("session", "zone"), MATRIX)
def test_csv_options_match_spark(
    session: str, zone: str | None, seed: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    _run(request, session, zone, seed, tmp_path, "csv", CSV_CASES)


@pytest.mark.parametrize(("session", "zone"), MATRIX)
def test_partition_folders_match_spark(
    session: str, zone: str | None, seed: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    _run(request, session, zone, seed, tmp_path, "parquet", [PARTITIONS, PARTITION_TS])


@pytest.mark.parametrize("session", ["classic", pytest.param("connect", marks=pytest.mark.slow)])
@pytest.mark.parametrize("fmt", ["json"])
def test_streaming_source_and_sink_match_batch(
    session: str, seed: Path, tmp_path: Path, fmt: str, request: pytest.FixtureRequest
) -> None:
    """The corpus through pyfile's stream source and stream sink (AvailableNow), not a batch."""
    from corpus import DDL
    from harness import Cell, canonical, columns_for, judge, schema_of, spark_read, spark_write

    kind = session
    spark = request.getfixturevalue("spark" if kind == "classic" else "connect_spark")
    case = "streaming: pyfile source -> pyfile sink"
    with session_zone(spark, "America/Los_Angeles") as zone:
        stream = (
            spark.readStream.format("pyfile")
            .option("format", "parquet")
            .option("sourceLogLocation", str(tmp_path / "log"))
            .schema(DDL)
            .load(str(seed.parent))
        )
        query = (
            stream.writeStream.format("pyfile")
            .option("format", fmt)
            .option("checkpointLocation", str(tmp_path / "ck"))
            .trigger(availableNow=True)
            .start(str(tmp_path / "out"))
        )
        query.awaitTermination(300)
        assert query.exception() is None, query.exception()
        columns = columns_for(fmt)
        schema = schema_of(columns, fmt)
        spark_write(spark.read.schema(DDL).parquet(str(seed)), fmt, tmp_path / "spark")
        expected = canonical(spark_read(spark, fmt, tmp_path / "spark", schema))
        got = canonical(spark_read(spark, fmt, tmp_path / "out", schema))
    cells = []
    for column in columns:
        outcome, detail = judge(
            column, fmt, "write", expected[column], got[column], DOCUMENTED, case
        )
        cells.append(Cell(column, fmt, "write", zone, kind, outcome, detail, case))
    RESULTS.extend(cells)
    problems = failures(cells)
    assert not problems, "\n".join(problems)
