"""pyfile's options parse from its one table (no JVM): defaults, uses, formats, aliases.

Every read option applies to spark.readStream and spark.read, every write option to
df.writeStream and df.write; one given on the other side fails naming where it applies. The
defaults are the table's, written once as a user would write them.
"""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from pysparksources._core.option_table import Use
from pysparksources.errors import OptionError, SchemaError
from pysparksources.files import _option_table as table
from pysparksources.files.config import (
    ManifestRetention,
    ReaderOptions,
    SinkConfig,
    SourceConfig,
)
from pysparksources.files.options import parse_options, read_schema
from support.pyfile_sink import batch_writer, sink_config, stream_writer
from support.pyfile_source import stream_reader

COLUMNS = StructType([StructField("id", LongType()), StructField("s", StringType())])
READS = [Use.STREAM_READ, Use.BATCH_READ, Use.READ]
WRITES = [Use.STREAM_WRITE, Use.BATCH_WRITE]


def read(tmp_path: Path, use: Use = Use.BATCH_READ, **options: str) -> SourceConfig:
    return parse_options({"path": str(tmp_path), **options}, use)


def write(tmp_path: Path, use: Use = Use.STREAM_WRITE, **options: str) -> SinkConfig:
    return parse_options({"path": str(tmp_path / "out"), **options}, use, COLUMNS)


def refused(use: Use, options: dict[str, str], schema: StructType | None = None) -> str:
    with pytest.raises(OptionError) as caught:
        parse_options(options, use, schema)
    message = str(caught.value)
    assert message.startswith("pyfile: "), message
    return message


def test_source_defaults_come_from_the_table(tmp_path: Path) -> None:
    config = read(tmp_path)
    assert config.max_file_age_ms == 7 * 86_400_000  # maxFileAge "7d"
    assert config.max_file_age_ms == int(table.MAX_FILE_AGE.default_value() * 1000)
    assert config.max_cached_files == 10_000 == table.MAX_CACHED_FILES.default_value()
    assert config.discard_cached_input_ratio == 0.2
    assert config.max_partition_bytes == 128 << 20 and config.open_cost_bytes == 4 << 20
    assert config.lease_timeout_s == 60.0
    assert config.clean_source == "off" and not config.latest_first and not config.file_name_only
    assert (config.max_files_per_trigger, config.max_bytes_per_trigger) == (None, None)
    assert config.log_location is None and config.archive_location is None
    assert config.reader == ReaderOptions(
        format="parquet",
        header=False,
        sep=",",
        quote='"',
        escape="\\",
        null_value="",
        encoding="UTF-8",
        multi_line=False,
        date_format=None,
        timestamp_format=None,
        wholetext=False,
        line_sep=None,
        time_zone=None,
        ignore_corrupt_files=False,
        ignore_missing_files=False,
        mode="PERMISSIVE",
        corrupt_column="_corrupt_record",
        format_options={},
    )


def test_sink_defaults_come_from_the_table(tmp_path: Path) -> None:
    config = write(tmp_path)
    assert (config.format, config.compression) == ("parquet", "snappy")
    assert write(tmp_path, format="json").compression == "none"
    assert write(tmp_path, compression="UNCOMPRESSED").compression == "none"
    assert config.retention == ManifestRetention(
        enabled=True, min_batches=100, cleanup_delay_ms=600_000, output_ttl_ms=None
    )
    assert (config.max_records_per_file, config.row_group_rows) == (0, 1 << 20)
    assert (config.csv_header, config.csv_sep, config.ignore_null_fields) == (False, ",", True)
    assert config.time_zone is None and config.partition_by == ()
    assert config.compact_interval == 10


def test_configs_have_no_defaults_and_pickle(tmp_path: Path) -> None:
    """The parser fills every field; a task gets exactly what it parsed."""
    for cls in (ReaderOptions, SourceConfig, SinkConfig, ManifestRetention):
        defaulted = [
            f.name
            for f in dataclasses.fields(cls)
            if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        ]
        assert defaulted == [], (cls.__name__, defaulted)
    source = read(tmp_path, format="csv", sep=";")
    assert pickle.loads(pickle.dumps(source)) == source
    sink = write(tmp_path, partitionBy="s")
    assert pickle.loads(pickle.dumps(sink)).partition_by == ("s",)


@pytest.mark.parametrize("use", READS)
@pytest.mark.parametrize(
    "option", ["compression", "partitionBy", "checkpointLocation", "ignoreNullFields"]
)
def test_a_sink_option_given_to_a_read_is_refused(tmp_path: Path, use: Use, option: str) -> None:
    message = refused(use, {"path": str(tmp_path), option: "x"})
    assert message == f"pyfile: option '{option}' applies only to df.writeStream and df.write"
    assert "'x'" not in message


@pytest.mark.parametrize("use", WRITES)
@pytest.mark.parametrize("option", ["maxFilesPerTrigger", "sourceLogLocation", "quote", "lineSep"])
def test_a_source_option_given_to_a_write_is_refused(tmp_path: Path, use: Use, option: str) -> None:
    message = refused(use, {"path": str(tmp_path / "out"), option: "1"}, COLUMNS)
    assert message == f"pyfile: option '{option}' applies only to spark.readStream and spark.read"


def test_options_accepted_where_they_were_before(tmp_path: Path) -> None:
    """sourceLogLocation (needed by streams) is accepted by batch reads too; Spark's own
    checkpointLocation and queryName by both kinds of write."""
    assert read(tmp_path, sourceLogLocation=str(tmp_path / "log")).log_location is not None
    with pytest.raises(OptionError, match="option 'sourceLogLocation' is required: streaming"):
        read(tmp_path, Use.STREAM_READ)
    read(tmp_path, Use.READ)  # schema(): a stream and a batch read look the same there
    for use in WRITES:
        write(tmp_path, use, checkpointLocation=str(tmp_path / "ck"), queryName="q")


@pytest.mark.parametrize(
    ("fmt", "option", "value"),
    [
        ("parquet", "header", "true"),
        ("orc", "sep", ";"),
        ("json", "quote", "'"),
        ("text", "dateFormat", "yyyy"),
        ("csv", "wholetext", "true"),
        ("parquet", "encoding", "UTF-8"),
    ],
)
def test_a_format_option_with_another_format_is_refused(
    tmp_path: Path, fmt: str, option: str, value: str
) -> None:
    message = refused(Use.BATCH_READ, {"path": str(tmp_path), "format": fmt, option: value})
    assert f"invalid value {value!r} for option '{option}'" in message
    assert message.endswith(f"this option does not apply to format {fmt}")


def test_the_sinks_time_zone_applies_to_csv_and_json_only(tmp_path: Path) -> None:
    assert write(tmp_path, format="csv", timeZone="+5:30").time_zone == "+05:30"
    assert write(tmp_path, format="json", timeZone="UTC").time_zone == "UTC"
    for fmt in ("parquet", "text"):
        options = {"path": str(tmp_path / "out"), "format": fmt, "timeZone": "UTC"}
        message = refused(Use.BATCH_WRITE, options, COLUMNS)
        assert message.endswith(f"this option does not apply to format {fmt}")


def test_aliases_are_the_same_option(tmp_path: Path) -> None:
    config = read(tmp_path, format="csv", delimiter=";", charset="ISO-8859-1")
    assert (config.reader.sep, config.reader.encoding) == (";", "ISO-8859-1")
    assert write(tmp_path, format="csv", delimiter="|").csv_sep == "|"
    message = refused(Use.BATCH_READ, {"path": str(tmp_path), "sep": ";", "delimiter": ","})
    assert "option 'sep' is given twice, as 'sep' and 'delimiter'" in message
    # The alias as given names the option in a value error, and in the format check.
    message = refused(Use.BATCH_READ, {"path": str(tmp_path), "format": "csv", "delimiter": ";;"})
    assert "invalid value ';;' for option 'delimiter': expected exactly one character" in message
    message = refused(Use.BATCH_READ, {"path": str(tmp_path), "charset": "klingon"})
    assert "option 'charset'" in message and "does not apply to format parquet" in message


def test_spark_options_pyfile_cannot_honour_are_refused_for_what_they_are(tmp_path: Path) -> None:
    for use in (Use.BATCH_READ, Use.STREAM_WRITE):
        message = refused(use, {"path": str(tmp_path), "comment": "#"}, COLUMNS)
        assert message == (
            "pyfile: option 'comment' is not supported: pyarrow's csv reader has no comment lines"
        )


def test_values_parse_through_their_declared_type(tmp_path: Path) -> None:
    config = read(
        tmp_path,
        maxFileAge="90s",
        maxBytesPerTrigger="512k",
        discardCachedInputRatio="0.5",
        cleanSource="DELETE",
        sourceLogLeaseTimeout="2m",
        maxPartitionBytes="1g",
    )
    assert config.max_file_age_ms == 90_000 and config.max_bytes_per_trigger == 512 << 10
    # Spark reads maxFileAge with timeStringAsMs: a bare number is milliseconds.
    assert read(tmp_path, maxFileAge="3600000").max_file_age_ms == 3_600_000
    assert config.discard_cached_input_ratio == 0.5 and config.clean_source == "delete"
    assert config.lease_timeout_s == 120.0 and config.max_partition_bytes == 1 << 30
    sink = write(
        tmp_path, logCleanupDelay="1h", minBatchesToRetain="5", logDeletion="false", retention="7d"
    )
    assert sink.retention == ManifestRetention(
        enabled=False, min_batches=5, cleanup_delay_ms=3_600_000, output_ttl_ms=7 * 86_400_000
    )
    for options, accepted in (
        ({"maxCachedFiles": "-1"}, "expected an integer between 0 and 2147483647"),
        ({"sourceLogLeaseTimeout": "0s"}, "expected a duration of at least 1s"),
        ({"format": "text", "lineSep": ""}, "expected a non-empty separator"),
        ({"format": "csv", "quote": "ab"}, "expected exactly one character"),
        ({"pathGlobFilter": "a/*.csv"}, "expected a file-name glob such as *.csv"),
        ({"pathGlobFilter": "[z-a]"}, "not a valid glob pattern"),
        ({"format": "json", "timeZone": "Mars/Olympus"}, "expected a time zone id"),
        ({"format": "csv", "encoding": "klingon"}, "expected a character set Python knows"),
        ({"format": "csv", "mode": "LENIENT"}, "expected one of PERMISSIVE, DROPMALFORMED"),
        ({"format": "parquet", "mode": "FAILFAST"}, "does not apply to format parquet"),
    ):
        message = refused(Use.BATCH_READ, {"path": str(tmp_path), **options})
        assert accepted in message, (options, message)


def test_read_schema_is_texts_or_inferred(tmp_path: Path) -> None:
    assert read_schema(read(tmp_path, Use.READ, format="text")) == "value STRING"
    with pytest.raises(SchemaError, match=r"cannot infer a schema: .* holds no csv file yet"):
        read_schema(read(tmp_path, Use.READ, format="csv"))
    (tmp_path / "a.csv").write_text("id,name\n1,a\n")
    inferred = read_schema(read(tmp_path, Use.READ, format="csv", header="true"))
    assert inferred.simpleString() == "struct<id:string,name:string>"
    with pytest.raises(OptionError, match="does not exist"):
        read_schema(read(tmp_path / "missing", Use.READ, format="text"))


def test_overwrite_is_refused_by_the_writers(tmp_path: Path) -> None:
    options = {"path": str(tmp_path / "out")}
    for build in (stream_writer, batch_writer):
        with pytest.raises(OptionError) as caught:
            build(options, COLUMNS, True)
        assert str(caught.value).startswith(
            "pyfile: invalid value <not shown> for option 'outputMode': pyfile only appends"
        )
    assert sink_config(options, COLUMNS).format == "parquet"  # the options themselves are fine


def test_a_schema_spark_refuses_is_a_schema_error(tmp_path: Path) -> None:
    twice = StructType([StructField("a", LongType()), StructField("A", LongType())])
    options = {"path": str(tmp_path), "sourceLogLocation": str(tmp_path / "log")}
    with pytest.raises(SchemaError) as caught:
        stream_reader(options, twice)
    assert str(caught.value).startswith("pyfile: the schema's column name 'A' appears twice")


def test_committed_files_stays_importable_from_the_reader() -> None:
    """Documented in docs/pyfile-sink.md as pysparksources.files.reader.committed_files."""
    from pysparksources.files.reader import committed_files as public
    from pysparksources.files.sink.manifest import committed_files

    assert public is committed_files
