"""pyrate in real Spark queries, on a classic session and over Spark Connect."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import pysparksources
from pysparksources._core.option_table import Use
from pysparksources.rate._timeline import value_at_second
from pysparksources.rate.config import RateConfig
from pysparksources.rate.offsets import TimeOffset
from pysparksources.rate.options import parse_options
from pysparksources.rate.reader import RateStreamReader
from support.errors import assert_one_line_error
from support.paths import ROOT
from support.spark_processes import worker_env
from support.streams import (
    checkpoint_offsets,
    collect_rows,
    data_batches,
    stop_between_batches,
    to_parquet,
    wait_for_batches,
)
from support.variants import CLASSIC_ONLY


def stream_config(raw: dict[str, str]) -> RateConfig:
    """pyrate's config for a readStream with these options."""
    return parse_options(raw, Use.STREAM_READ)


pytestmark = pytest.mark.spark


def run_python(code: str, timeout: int = 180) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=worker_env(),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_shims_and_package_import_without_optional_extras() -> None:
    out = run_python(
        """
        import importlib.abc, pkgutil, sys
        BLOCKED = ("azure", "adlfs", "s3fs", "gcsfs", "pyarrow", "numpy", "pandas", "fsspec")
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name.split(".")[0] in BLOCKED:
                    raise ImportError("blocked optional module " + name)
        sys.meta_path.insert(0, Block())
        import pysparksources
        assert "pyspark" not in sys.modules, "import pysparksources must not load pyspark"
        names = {}
        for info in pkgutil.iter_modules():
            if info.name.startswith("pyspark_"):
                module = __import__(info.name)
                names[info.name] = module.DefaultSource.name()
        print(sorted(names.items()))
        """
    )
    shims = {name: f"pyspark_{name}" for name in pysparksources.source_names()}
    for name, module in shims.items():
        assert f"('{module}', '{name}')" in out, f"{module} is not importable without extras"


# Zero-touch registration on a fresh classic session is the wheel test's (a fresh process
# that never imports the package) and every classic test's here (the shared session never
# calls register()); Connect's local mode needs a process of its own.
@pytest.mark.slow
@pytest.mark.connect_default_port
def test_zero_touch_and_register_on_spark_connect_local() -> None:
    # remote("local[2]") needs a process without a classic session: run it on its own.
    out = run_python(
        """
        from pyspark.sql import SparkSession
        import pysparksources
        spark = SparkSession.builder.remote("local[2]").getOrCreate()
        n = spark.read.format("pyrate").option("totalRows", 6).load().count()
        print("AUTO", n)
        print("REGISTERED", pysparksources.register(spark))
        print("AFTER", spark.read.format("pyrate").option("totalRows", 4).load().count())
        spark.stop()
        """,
        timeout=240,
    )
    registered = out.split("REGISTERED ", 1)[1].split("\n", 1)[0]
    assert "AUTO 6" in out and "AFTER 4" in out
    assert registered == repr(pysparksources.source_names())


@pytest.mark.slow
def test_register_all_or_by_name(session: Any) -> None:
    assert "pyrate" in pysparksources.register(session)
    assert pysparksources.register(session, "pyrate") == ["pyrate"]
    with pytest.raises(ValueError, match="unknown pysparksources source 'nope'"):
        pysparksources.register(session, "nope")
    assert session.read.format("pyrate").option("totalRows", 3).load().count() == 3


@pytest.mark.slow
def test_batch_mode_matches_rate_micro_batch(session: Any, tmp_path: Path) -> None:
    options = {
        "rowsPerBatch": "7",
        "numPartitions": "3",
        "startTimestamp": "1000",
        "advanceMillisPerBatch": "50",
    }
    columns = "value,unix_micros(timestamp) as ts,pid"

    def start(fmt: str, extra: dict[str, str], name: str, **trigger: Any) -> Any:
        df = session.readStream.format(fmt).options(**options, **extra).load()
        df = df.selectExpr("*", "spark_partition_id() as pid")
        return to_parquet(df, tmp_path / name, tmp_path / f"{name}-ckpt", **trigger)

    spark_query = start("rate-micro-batch", {}, "spark", processingTime="0 seconds")
    wait_for_batches(spark_query, 3)
    spark_query.stop()
    ours = start("pyrate", {"totalRows": "21", "maxRowsPerTrigger": "7"}, "ours", availableNow=True)
    ours.awaitTermination(120)
    assert [p["numInputRows"] for p in data_batches(ours)] == [7, 7, 7]
    expected = [r for r in collect_rows(session, tmp_path / "spark", columns) if r[0] < 21]
    assert len(expected) == 21
    assert collect_rows(session, tmp_path / "ours", columns) == expected


def read_offsets(checkpoint: Path) -> dict[int, str]:
    """Batch id -> the source's offset line from Spark's offset log."""
    return {
        int(f.name): f.read_text().splitlines()[2]
        for f in (checkpoint / "offsets").iterdir()
        if f.name.isdigit()
    }


@pytest.mark.slow
def test_time_mode_matches_sparks_rate(spark: Any, tmp_path: Path) -> None:
    options = {"rowsPerSecond": "20", "rampUpTime": "3s", "numPartitions": "3"}
    df = spark.readStream.format("rate").options(**options).load()
    df = df.selectExpr("value", "unix_micros(timestamp) as ts", "spark_partition_id() as pid")
    query = to_parquet(df, tmp_path / "out", tmp_path / "ckpt", processingTime="700 milliseconds")
    wait_for_batches(query, 6)
    query.stop()
    created_ms = int((tmp_path / "ckpt" / "sources" / "0" / "0").read_text().splitlines()[1])
    seconds = {batch: int(line) for batch, line in read_offsets(tmp_path / "ckpt").items()}
    spark_rows = collect_rows(spark, tmp_path / "out", "value,ts,pid")
    committed = {int(f.name) for f in (tmp_path / "ckpt" / "commits").iterdir() if f.name.isdigit()}

    reader = RateStreamReader(stream_config(options))
    ours = []
    for batch in sorted(committed):
        s0, s1 = seconds.get(batch - 1, 0), seconds[batch]

        def offset(s: int) -> dict[str, int]:
            return {"createdMs": created_ms, "second": s, "value": value_at_second(s, 20, 3)}

        for pid, part in enumerate(reader.partitions(offset(s0), offset(s1))):
            for rb in reader.read(part):
                ts = rb.column("timestamp").cast(pa.int64()).to_pylist()
                ours += [
                    (v, t, pid) for v, t in zip(rb.column("value").to_pylist(), ts, strict=True)
                ]
    assert len(spark_rows) > 20  # the ramp-up and at least one full-speed second
    assert sorted(ours) == spark_rows


@CLASSIC_ONLY
@pytest.mark.slow
def test_time_mode_stream_is_gapless_and_limited(session: Any, tmp_path: Path) -> None:
    # 1000 rows a second against at most 150 per trigger of 200 ms (750 a second, fewer when a
    # batch outlasts its trigger): the query falls behind from its first batch, however fast.
    df = (
        session.readStream.format("pyrate")
        .option("rowsPerSecond", 1000)
        .option("maxRowsPerTrigger", 150)
        .option("numPartitions", 2)
        .load()
    )
    query = to_parquet(df, tmp_path / "out", tmp_path / "ckpt", processingTime="200 milliseconds")
    wait_for_batches(query, 4)
    query.stop()
    batches = data_batches(query)
    assert batches and all(p["numInputRows"] <= 150 for p in batches)
    # The source reports how far behind the query is: the latest offset runs ahead of the end.
    sources = [p["sources"][0] for p in batches]
    assert any(s["latestOffset"]["value"] > s["endOffset"]["value"] for s in sources)
    values = [r[0] for r in collect_rows(session, tmp_path / "out", "value")]
    assert values == list(range(len(values)))


@pytest.mark.slow
def test_available_now_reads_in_limited_batches_then_stops(session: Any, tmp_path: Path) -> None:
    df = (
        session.readStream.format("pyrate")
        .option("rowsPerBatch", 1000)
        .option("totalRows", 3500)
        .option("maxRowsPerTrigger", 1500)
        .load()
    )
    query = to_parquet(df, tmp_path / "out", tmp_path / "ckpt", availableNow=True)
    assert query.awaitTermination(120)
    assert [p["numInputRows"] for p in data_batches(query)] == [1500, 1500, 500]
    rows = collect_rows(session, tmp_path / "out", "value,unix_millis(timestamp)")
    assert rows == [(v, (v // 1000) * 1000) for v in range(3500)]


@CLASSIC_ONLY
def test_available_now_reads_a_finite_time_mode_stream_whole(session: Any, tmp_path: Path) -> None:
    """A new time-mode query has no rows due yet; with totalRows AvailableNow reads them all."""
    df = (
        session.readStream.format("pyrate")
        .option("rowsPerSecond", 1000)
        .option("totalRows", 2500)
        .option("maxRowsPerTrigger", 1000)
        .load()
    )
    query = to_parquet(df, tmp_path / "out", tmp_path / "ckpt", availableNow=True)
    assert query.awaitTermination(120)
    assert [p["numInputRows"] for p in data_batches(query)] == [1000, 1000, 500]
    rows = collect_rows(session, tmp_path / "out", "value,unix_millis(timestamp)")
    created = rows[0][1]
    # Every batch ends at a whole second: Spark's rate timestamps, creation + 1 ms per row.
    assert rows == [(v, created + v) for v in range(2500)]
    # What Spark stored decodes to the typed offset and encodes back to the same bytes.
    stored = checkpoint_offsets(tmp_path / "ckpt")
    assert len(stored) == 3 and TimeOffset.from_json(stored[-1]).value == 2500
    assert [TimeOffset.from_json(line).to_json() for line in stored] == stored


@pytest.mark.slow
def test_available_now_backlog_respects_the_limit_unlike_sparks_rate(
    spark: Any, tmp_path: Path
) -> None:
    def run(fmt: str, **trigger: Any) -> Any:
        options = {"rowsPerSecond": "50"} | ({"maxRowsPerTrigger": "40"} if fmt == "pyrate" else {})
        df = spark.readStream.format(fmt).options(**options).load()
        return to_parquet(df, tmp_path / fmt, tmp_path / f"{fmt}-ckpt", **trigger)

    # A trigger long enough that a batch on a loaded machine still ends well before the next:
    # stop_between_batches stops a query in that gap.
    native, ours = (
        run("rate", processingTime="3 seconds"),
        run("pyrate", processingTime="3 seconds"),
    )
    wait_for_batches(native, 1)
    wait_for_batches(ours, 1)
    stop_between_batches(native, tmp_path / "rate-ckpt")
    stop_between_batches(ours, tmp_path / "pyrate-ckpt")
    time.sleep(3)  # a backlog of about 150 rows builds up while both queries are down
    native, ours = run("rate", availableNow=True), run("pyrate", availableNow=True)
    assert native.awaitTermination(120) and ours.awaitTermination(120)
    native_batches = [p["numInputRows"] for p in data_batches(native)]
    ours_batches = [p["numInputRows"] for p in data_batches(ours)]
    # Spark's rate has no admission control: the whole backlog lands in one batch.
    assert len(native_batches) == 1 and native_batches[0] >= 100
    assert sum(ours_batches) >= 100 and all(n <= 40 for n in ours_batches)
    values = [r[0] for r in collect_rows(spark, tmp_path / "pyrate", "value")]
    assert values == list(range(len(values)))


@CLASSIC_ONLY
@pytest.mark.slow
def test_restart_from_checkpoint_equals_uninterrupted_run(session: Any, tmp_path: Path) -> None:
    # 7 micro-batches of at most 20 rows whose ends straddle the 50-row logical batches: the
    # first run stops once 2 have completed, leaving room for one or two more to start before
    # stop() lands (one interrupted is re-run after the restart) and still resume mid-stream.
    total = 140
    options = {
        "rowsPerBatch": "50",
        "numPartitions": "2",
        "maxRowsPerTrigger": "20",
        "totalRows": str(total),
        "startTimestamp": "7",
    }

    def start(name: str, **trigger: Any) -> Any:
        df = session.readStream.format("pyrate").options(**options).load()
        return to_parquet(df, tmp_path / name, tmp_path / f"{name}-ckpt", **trigger)

    first = start("restarted", processingTime="100 milliseconds")
    wait_for_batches(first, 2)
    first.stop()
    partial = collect_rows(session, tmp_path / "restarted", "value")
    assert 0 < len(partial) < total
    assert start("restarted", availableNow=True).awaitTermination(120)
    assert start("straight", availableNow=True).awaitTermination(120)
    columns = "value,unix_micros(timestamp)"
    restarted = collect_rows(session, tmp_path / "restarted", columns)
    assert restarted == collect_rows(session, tmp_path / "straight", columns)
    assert [r[0] for r in restarted] == list(range(total))


def test_batch_read(session: Any) -> None:
    df = session.read.format("pyrate").options(rowsPerBatch="4", totalRows="10", numPartitions="3")
    rows = sorted(
        tuple(r) for r in df.load().selectExpr("value", "unix_millis(timestamp)").collect()
    )
    assert rows == [(v, (v // 4) * 1000) for v in range(10)]
    with pytest.raises(Exception, match="totalRows"):
        session.read.format("pyrate").load().collect()


@pytest.mark.parametrize(
    ("option", "value", "accepted"),
    [
        ("rowsPerSecond", "0", ">= 1"),
        ("numPartitions", "two", "integer"),
        ("rampUpTime", "soon", "duration"),
        ("maxRowsPerTrigger", "-3", ">= 1"),
        ("rowsPerSecnd", "9", "did you mean"),
    ],
)
def test_bad_option_fails_when_the_query_is_defined(
    session: Any, option: str, value: str, accepted: str
) -> None:
    with pytest.raises(Exception) as caught:
        session.readStream.format("pyrate").option(option, value).load().writeStream.format(
            "noop"
        ).start().stop()
    message = str(caught.value)
    assert f"'{option.lower()}'" in message.lower() and accepted in message
    # A known option's value is quoted; an unknown one's never is (it may be a misspelled secret).
    assert (f"'{value}'" in message) == (accepted != "did you mean")


def test_options_apply_where_declared_and_pyrate_has_no_sink(session: Any) -> None:
    """A stream-only option on spark.read, and pyrate used as a sink, fail naming why."""
    batch = session.read.format("pyrate").options(totalRows="5", maxRowsPerTrigger="2")
    with pytest.raises(Exception) as caught:
        batch.load().collect()
    assert_one_line_error(
        str(caught.value), "pyrate: option 'maxRowsPerTrigger' applies only to spark.readStream"
    )
    rows = session.read.format("pyrate").option("totalRows", 3).load()
    with pytest.raises(Exception) as caught:
        rows.write.format("pyrate").mode("append").save()
    message = str(caught.value)
    assert (
        "pysparksources.errors.UnsupportedError: pyrate: this format does not support df.write"
        in (message)
    ), message
