"""pyfile vs Spark with csv options, Hive partition folders and the streaming path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def _kind(request: pytest.FixtureRequest) -> str:
    return str(request.node.callspec.params.get("session", "classic"))


def _run(session: Any, seed: Path, tmp_path: Path, fmt: str, cases: list[Case], kind: str) -> None:
    cells = []
    for zone in (None, "America/Los_Angeles"):
        with session_zone(session, zone):
            name = zone_name(zone)
            for number, case in enumerate(cases):
                work = tmp_path / f"{name}-{number}"
                cells += compare_format(session, seed, fmt, work, name, kind, DOCUMENTED, case)
    RESULTS.extend(cells)
    problems = failures(cells)
    assert not problems, "\n".join(problems)


def test_csv_options_match_spark(
    session: Any, seed: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    _run(session, seed, tmp_path, "csv", CSV_CASES, _kind(request))


def test_partition_folders_match_spark(
    session: Any, seed: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    _run(session, seed, tmp_path, "parquet", [PARTITIONS, PARTITION_TS], _kind(request))


@pytest.mark.parametrize("fmt", ["json"])
def test_streaming_source_and_sink_match_batch(
    session: Any, seed: Path, tmp_path: Path, fmt: str, request: pytest.FixtureRequest
) -> None:
    """The corpus through pyfile's stream source and stream sink (AvailableNow), not a batch."""
    from corpus import DDL
    from harness import Cell, canonical, columns_for, judge, schema_of, spark_read, spark_write

    kind = _kind(request)
    case = "streaming: pyfile source -> pyfile sink"
    with session_zone(session, "America/Los_Angeles") as zone:
        stream = (
            session.readStream.format("pyfile")
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
        spark_write(session.read.schema(DDL).parquet(str(seed)), fmt, tmp_path / "spark")
        expected = canonical(spark_read(session, fmt, tmp_path / "spark", schema))
        got = canonical(spark_read(session, fmt, tmp_path / "out", schema))
    cells = []
    for column in columns:
        outcome, detail = judge(
            column, fmt, "write", expected[column], got[column], DOCUMENTED, case
        )
        cells.append(Cell(column, fmt, "write", zone, kind, outcome, detail, case))
    RESULTS.extend(cells)
    problems = failures(cells)
    assert not problems, "\n".join(problems)
