"""Bad options and bad files fail the query at its start, naming the option or the file."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from support.errors import assert_one_line_error
from support.pyfile_source import SCHEMA, ids_in, stream, write_parquet, write_text
from support.streams import progress, run_available_now

pytestmark = pytest.mark.spark


def failure(df: Any, tmp_path: Path) -> str:
    query = (
        df.writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    with pytest.raises(Exception) as caught:
        query.awaitTermination(120)
    return str(caught.value)


def test_missing_log_location_is_named(session: Any, tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    df = session.readStream.format("pyfile").schema(SCHEMA).load(str(tmp_path / "in"))
    assert "sourceLogLocation" in failure(df, tmp_path)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"maxFilesPerTrigger": "0"}, "maxFilesPerTrigger"),
        ({"maxFilesPerTrigger": "2", "maxBytesPerTrigger": "1m"}, "maxBytesPerTrigger"),
        ({"maxFilesPertrigger2": "1"}, "did you mean"),
        ({"format": "xml"}, "format"),
        ({"format": "json", "multiLine": "maybe"}, "multiLine"),
        ({"format": "csv", "mode": "LENIENT"}, "mode"),
        ({"format": "csv", "inferSchema": "maybe"}, "inferSchema"),
        ({"format": "parquet", "header": "true"}, "header"),
        ({"cleanSource": "archive"}, "sourceArchiveDir"),
        ({"maxFileAge": "soon"}, "maxFileAge"),
        ({"format": "csv", "sep": ";;"}, "sep"),
        ({"format": "csv", "timestampFormat": "yyyy-MM-dd QQ"}, "timestampFormat"),
        ({"fs.account_key": "s3cr3t", "maxCachedFiles": "-1"}, "maxCachedFiles"),
    ],
)
def test_bad_options_fail_at_start(
    spark: Any, tmp_path: Path, options: dict[str, str], named: str
) -> None:
    (tmp_path / "in").mkdir()
    reader = spark.readStream.format("pyfile").option("sourceLogLocation", str(tmp_path / "l"))
    message = failure(reader.options(**options).schema(SCHEMA).load(str(tmp_path / "in")), tmp_path)
    assert named in message
    assert "s3cr3t" not in message


@pytest.mark.slow
def test_missing_folder_fails_at_start_but_an_empty_glob_waits(
    session: Any, tmp_path: Path
) -> None:
    log = str(tmp_path / "log")
    missing = session.readStream.format("pyfile").option("sourceLogLocation", log)
    message = failure(missing.schema(SCHEMA).load(str(tmp_path / "no-such-dir")), tmp_path)
    assert "no-such-dir" in message and "does not exist" in message
    with pytest.raises(Exception, match="does not exist"):
        session.read.format("pyfile").schema(SCHEMA).load(str(tmp_path / "nope")).collect()
    # A glob may match nothing yet, as in Spark: the stream simply has no data.
    glob = session.readStream.format("pyfile").option("sourceLogLocation", log)
    df = glob.schema(SCHEMA).load(str(tmp_path / "later" / "*.parquet"))
    batches = progress(run_available_now(df, tmp_path / "out", tmp_path / "ck2"))
    assert sum(int(b["numInputRows"]) for b in batches) == 0


def test_a_sink_option_given_to_a_read_fails_at_load_or_start(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    sink_only = "option 'compression' applies only to df.writeStream and df.write"
    # Without .schema(...) Spark asks for the schema at load(): the options are checked there.
    text = spark.read.format("pyfile").option("format", "text").option("compression", "gzip")
    with pytest.raises(Exception) as caught:
        text.load(str(tmp_path / "in"))
    assert f"pyfile: {sink_only}" in assert_one_line_error(str(caught.value), sink_only)
    # With a schema, when the query starts.
    reader = spark.readStream.format("pyfile").option("sourceLogLocation", str(tmp_path / "l"))
    df = reader.option("compression", "gzip").schema(SCHEMA).load(str(tmp_path / "in"))
    assert f"pyfile: {sink_only}" in failure(df, tmp_path)


def test_a_stream_without_schema_or_files_is_refused_at_load(spark: Any, tmp_path: Path) -> None:
    with pytest.raises(Exception, match="cannot infer a schema"):
        _ = spark.readStream.format("pyfile").option("format", "csv").load(str(tmp_path)).schema


def test_corrupt_file_is_named_or_skipped(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "in"
    old = time.time() - 50
    write_parquet(src / "good.parquet", range(3), old)
    write_text(src / "bad.parquet", "this is not parquet", old + 1)
    message = failure(stream(spark, src, tmp_path / "log1"), tmp_path / "a")
    assert "bad.parquet" in message and "ignoreCorruptFiles" in message

    df = stream(spark, src, tmp_path / "log2", ignoreCorruptFiles="true")
    run_available_now(df, tmp_path / "out", tmp_path / "ck2")
    assert ids_in(spark, tmp_path / "out") == [0, 1, 2]
    recorded = list((tmp_path / "log2" / "corrupt").iterdir())
    assert len(recorded) == 1 and "bad.parquet" in recorded[0].read_text()


def test_bad_csv_value_in_failfast_names_the_file(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "in"
    write_text(src / "x.csv", "id,name\n1,a\nnot-a-number,b\n")
    df = stream(spark, src, tmp_path / "log", "csv", mode="FAILFAST")
    message = failure(df, tmp_path)
    assert "x.csv" in message
