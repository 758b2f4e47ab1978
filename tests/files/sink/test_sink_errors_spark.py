"""Bad sink options fail the query at its start, naming the option and what is accepted.

Every case runs through the writer constructor Spark calls at query start (fast, no JVM); a
few also run as real queries to show the sentence reaches the user on classic and Connect.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pysparksources.errors import OptionError
from support.pyfile_sink import sink_config, stream_writer
from support.streams import rate

pytestmark = pytest.mark.spark


def _failure(df: Any, tmp_path: Path, out: Path | str | None = None, **options: Any) -> str:
    writer = df.writeStream.format("pyfile").option("checkpointLocation", str(tmp_path / "ck"))
    for key, value in options.items():
        writer = writer.option(key, str(value))
    if out is not None:
        writer = writer.option("path", str(out))
    with pytest.raises(Exception) as info:
        writer.trigger(availableNow=True).start().awaitTermination(120)
    return str(info.value)


CASES = [
    ({"format": "xml"}, "invalid value 'xml' for option 'format'"),
    ({"compression": "lzo"}, "expected one of none, uncompressed, snappy"),
    ({"format": "json", "compression": "snappy"}, "expected one of none, uncompressed, gzip"),
    ({"partitionBy": "nope"}, "column 'nope' is not in the data"),
    ({"partitionBy": "timestamp, value"}, "at least one column must stay in the data files"),
    ({"partitionBy": "value,VALUE"}, "listed twice"),
    ({"partitionBy": "timestamp"}, "partition columns may be strings, integers"),
    ({"format": "text"}, "text writes exactly one string column"),
    ({"compresion": "gzip"}, "did you mean 'compression'"),
    ({"maxRecordsPerFile": "-1"}, "expected an integer >= 0"),
    ({"sep": "ab", "format": "csv"}, "expected one character"),
]


def _construct(path: Path | str | None, **options: str) -> str:
    from pyspark.sql.types import LongType, StructField, StructType, TimestampType

    schema = StructType(
        [StructField("timestamp", TimestampType()), StructField("value", LongType())]
    )
    raw = {**options, **({"path": str(path)} if path is not None else {})}
    with pytest.raises(OptionError) as info:
        stream_writer(raw, schema)
    return str(info.value)


@pytest.mark.parametrize(("options", "message"), CASES, ids=[m for _, m in CASES])
def test_bad_option_is_rejected(tmp_path: Path, options: dict[str, str], message: str) -> None:
    text = _construct(tmp_path / "out", **options)
    form = "pyfile: unknown option" if "did you mean" in message else "pyfile: invalid value"
    assert text.startswith(form) and message in text
    assert not (tmp_path / "out").exists()


def test_bad_paths(tmp_path: Path) -> None:
    assert "option 'path' is required: the output folder" in _construct(None)
    (tmp_path / "file.txt").write_text("x")
    assert "existing file" in _construct(tmp_path / "file.txt")
    assert "not a usable fsspec URL" in _construct("nosuchproto://bucket/out")


def test_secrets_never_in_errors(tmp_path: Path) -> None:
    secret = "AccountKey=c2VjcmV0LXNlY3JldA=="
    text = _construct(tmp_path / "out", format="xml", **{"fs.connection_string": secret})
    assert "c2VjcmV0" not in text
    from pyspark.sql.types import LongType, StructField, StructType

    schema = StructType([StructField("a", LongType())])
    config = sink_config({"path": str(tmp_path), "fs.key": secret}, schema)
    assert "c2VjcmV0" not in repr(config) and "c2VjcmV0" not in repr(config.location)


@pytest.mark.parametrize(
    ("options", "message"),
    [({"format": "xml"}, "'format'"), ({"partitionBy": "nope"}, "column 'nope' is not")],
)
def test_bad_option_fails_the_real_query_at_start(
    spark: Any, tmp_path: Path, options: dict[str, str], message: str
) -> None:
    text = _failure(rate(spark, 10, 10), tmp_path, tmp_path / "out", **options)
    assert "pyfile: invalid value" in text and message in text


def test_a_source_option_given_to_a_write_fails_at_start_or_save(
    spark: Any, tmp_path: Path
) -> None:
    source_only = "applies only to spark.readStream and spark.read"
    text = _failure(rate(spark, 10, 10), tmp_path, tmp_path / "out", maxFilesPerTrigger="2")
    assert f"pyfile: option 'maxFilesPerTrigger' {source_only}" in text
    writer = spark.range(3).write.format("pyfile").mode("append")
    with pytest.raises(Exception) as caught:
        writer.option("sourceLogLocation", str(tmp_path / "log")).save(str(tmp_path / "b"))
    assert f"pyfile: option 'sourceLogLocation' {source_only}" in str(caught.value)
    assert not (tmp_path / "b").exists()


@pytest.mark.slow
def test_complete_mode_is_rejected_on_connect_too(session: Any, tmp_path: Path) -> None:
    df = rate(session, 10, 10).groupBy().count()
    writer = (
        df.writeStream.format("pyfile")
        .outputMode("complete")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .option("path", str(tmp_path / "out"))
    )
    with pytest.raises(Exception) as info:
        writer.trigger(availableNow=True).start().awaitTermination(120)
    assert "pyfile only appends" in str(info.value)
    # Batch writes: overwrite is refused the same way.
    with pytest.raises(Exception, match="pyfile only appends"):
        session.range(3).write.format("pyfile").mode("overwrite").save(str(tmp_path / "b"))
