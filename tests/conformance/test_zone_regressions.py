"""Issue 13's four bugs, each reproduced the way a new user with Spark's defaults meets it.

Every test runs on the classic session and over Spark Connect, under the default session time
zone (unset: the JVM's own) and under zones that are not UTC.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from zones import session_zone

pytestmark = pytest.mark.spark

# Instants around the 2024 DST changes in Los Angeles and far from them, to the microsecond.
INSTANTS = "timestamp_micros(1710064800000000 + id * 1800000001) AS ts"


def _micros(df: Any, column: str = "ts") -> list[Any]:
    return sorted(
        (r[0] for r in df.selectExpr(f"unix_micros({column})").collect()),
        key=lambda v: (v is None, v),
    )


@pytest.mark.parametrize("zone", [None, "America/Los_Angeles"])
def test_sink_writes_parquet_timestamps_in_any_session_zone(
    session: Any, tmp_path: Path, zone: str | None
) -> None:
    """Spark hands the sink timestamps tagged with the session zone; parquet refused them."""
    with session_zone(session, zone):
        stream_out, batch_out = tmp_path / "stream", tmp_path / "batch"
        query = (
            session.readStream.format("rate-micro-batch")
            .option("rowsPerBatch", 1000)
            .load()
            .writeStream.format("pyfile")
            .option("format", "parquet")
            .option("checkpointLocation", str(tmp_path / "ck"))
            .trigger(availableNow=True)
            .start(str(stream_out))
        )
        query.awaitTermination(180)
        assert query.exception() is None, query.exception()
        got = session.read.parquet(str(stream_out))
        assert got.count() == 1000
        assert _micros(got, "timestamp") == [0] * 1000  # rate-micro-batch's first batch: epoch

        frame = session.range(100).selectExpr("id", INSTANTS)
        frame.write.format("pyfile").mode("append").option("format", "parquet").save(str(batch_out))
        assert _micros(session.read.parquet(str(batch_out))) == _micros(frame)


@pytest.mark.parametrize("zone", [None, "Asia/Kolkata"])
def test_reads_dates_in_json_written_by_spark(
    session: Any, tmp_path: Path, zone: str | None
) -> None:
    """pyarrow's json reader wanted numbers for DATE columns; Spark writes ISO strings."""
    with session_zone(session, zone):
        df = session.sql(
            f"SELECT DATE'2024-02-29' + CAST(id AS INT) AS d, id, {INSTANTS} FROM range(4)"
        )
        df.write.json(str(tmp_path / "j"))
        ours = session.read.format("pyfile").option("format", "json").schema(df.schema)
        got = ours.load(str(tmp_path / "j"))
        spark_read = session.read.schema(df.schema).json(str(tmp_path / "j"))
        assert sorted(got.collect()) == sorted(spark_read.collect())
        assert sorted(r.d.isoformat() for r in got.collect()) == [
            "2024-02-29",
            "2024-03-01",
            "2024-03-02",
            "2024-03-03",
        ]


@pytest.mark.parametrize("zone", [None, "America/Los_Angeles", "Asia/Kolkata"])
def test_zone_less_text_timestamps_use_the_session_zone(
    session: Any, tmp_path: Path, zone: str | None
) -> None:
    """Spark reads a timestamp without an offset in the session zone; pyfile read it as UTC."""
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.csv").write_text("1,2024-01-01 12:00:00\n2,2024-07-01T12:00:00.123456\n")
    (folder / "a.json").write_text(
        '{"id":1,"ts":"2024-01-01 12:00:00"}\n{"id":2,"ts":"2024-07-01T12:00:00.123456"}\n'
    )
    schema = "id INT, ts TIMESTAMP"
    with session_zone(session, zone) as effective:
        for fmt in ("csv", "json"):
            path = str(folder / f"a.{fmt}")
            ours = session.read.format("pyfile").option("format", fmt).schema(schema).load(path)
            spark_read = session.read.schema(schema).format(fmt).load(path)
            assert _micros(ours) == _micros(spark_read), (fmt, effective)
        # Spark's reader option timeZone overrides the session zone, for both readers.
        for fmt in ("csv", "json"):
            path = str(folder / f"a.{fmt}")
            ours = (
                session.read.format("pyfile")
                .option("format", fmt)
                .option("timeZone", "Pacific/Chatham")
                .schema(schema)
                .load(path)
            )
            spark_read = (
                session.read.schema(schema).option("timeZone", "Pacific/Chatham").format(fmt)
            )
            assert _micros(ours) == _micros(spark_read.load(path)), (fmt, "Pacific/Chatham")


def test_batch_read_of_an_empty_folder_is_an_empty_frame(session: Any, tmp_path: Path) -> None:
    """Spark returns an empty frame for an empty folder; pyfile failed with AssertionError."""
    empty = tmp_path / "empty"
    empty.mkdir()
    for fmt in ("parquet", "csv", "json", "text", "orc"):
        reader = session.read.format("pyfile").option("format", fmt)
        if fmt != "text":
            reader = reader.schema("id BIGINT, s STRING")
        got = reader.load(str(empty))
        assert got.collect() == [], fmt
        assert got.columns == (["value"] if fmt == "text" else ["id", "s"])
    spark_read = session.read.schema("id BIGINT, s STRING").parquet(str(empty))
    assert spark_read.collect() == []


def test_a_single_file_path_is_read_as_spark_reads_it(session: Any, tmp_path: Path) -> None:
    """Spark's readers take a file as the path; pyfile refused anything but a folder."""
    (tmp_path / "one.csv").write_text("1,a\n2,b\n")
    ours = session.read.format("pyfile").option("format", "csv").schema("id INT, s STRING")
    got = ours.load(str(tmp_path / "one.csv")).collect()
    assert sorted(got) == sorted(
        session.read.schema("id INT, s STRING").csv(str(tmp_path / "one.csv")).collect()
    )
    assert len(got) == 2
