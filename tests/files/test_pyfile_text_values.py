"""pyfile's text parsing and rendering rules, without a JVM.

The expected values are what Spark 4.3 itself gave for the same text (checked by the
differential suite in tests/conformance, which compares with Spark on every run); these
tests pin each rule in milliseconds so a regression shows without starting Spark.
"""

from __future__ import annotations

import io

import pyarrow as pa

from pysparksources.files.formats._csv_records import spark_csv_batches
from pysparksources.files.formats._json_values import arrow_read_type, python_batches
from pysparksources.files.formats._orc_calendar import julian_to_gregorian
from pysparksources.files.values.conversions import Parsing, conform
from pysparksources.files.values.rendering import csv_lines, json_lines
from pysparksources.files.values.zones import check_zone, instants_from_wall_times

UTC = pa.timestamp("us", tz="UTC")
LA = "America/Los_Angeles"


def _micros(values: list[str | None], zone: str, fmt: str | None = None) -> list[int | None]:
    column = conform(pa.array(values, pa.string()), UTC, Parsing(zone, None, fmt))
    return column.view(pa.int64()).to_pylist()


def _us(text: str) -> int:
    import datetime as dt

    moment = dt.datetime.fromisoformat(text)
    return (moment - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(
        microseconds=1
    )


def test_wall_times_resolve_dst_like_java_time() -> None:
    got = _micros(
        [
            "2024-03-10 02:30:00",  # skipped: moved forward by the gap, 03:30 PDT
            "2024-11-03 01:30:00",  # repeated: the earlier offset, PDT
            "2043-08-01 12:00:00",  # DST after 2037 (no transitions in the tz files)
            "2043-03-08 02:30:00",  # a gap after 2037
            None,
        ],
        LA,
    )
    assert got == [
        _us("2024-03-10T10:30:00+00:00"),
        _us("2024-11-03T08:30:00+00:00"),
        _us("2043-08-01T19:00:00+00:00"),
        _us("2043-03-08T10:30:00+00:00"),
        None,
    ]


def test_offsets_in_the_text_win_and_may_have_seconds() -> None:
    # Spark writes Los Angeles' local mean time (-07:52:58) for instants before 1883.
    got = _micros(
        ["1582-10-09T16:07:02.000-07:52:58", "2024-01-01T00:00:00Z", "2024-01-01T05:30:00+0530"],
        LA,
    )
    assert got == [
        _us("1582-10-10T00:00:00+00:00"),
        _us("2024-01-01T00:00:00+00:00"),
        _us("2024-01-01T00:00:00+00:00"),
    ]


def test_spark_patterns_with_fractions_and_am_pm() -> None:
    got = _micros(
        ["05/03/24 01:02:03.456 PM -08:00", "05/03/24 12:00:00.5 AM Z"],
        "Asia/Kolkata",
        "dd/MM/yy hh:mm:ss.SSS a XXX",
    )
    assert got == [_us("2024-03-05T21:02:03.456+00:00"), _us("2024-03-05T00:00:00.5+00:00")]


def test_zone_names_and_offsets() -> None:
    assert check_zone("Etc/UTC") == "UTC" and check_zone("GMT+5:30") == "+05:30"
    assert check_zone("Asia/Kolkata") == "Asia/Kolkata" and check_zone("Mars/Base") is None
    walls = pa.array([0], pa.timestamp("us"))
    assert instants_from_wall_times(walls, "+05:30").view(pa.int64()).to_pylist() == [
        -19_800_000_000
    ]


def test_csv_escapes_and_nulls_follow_sparks_reader() -> None:
    text = '1,""\n2,\n3,"NA"\n4,NA\n5,a\\b\n6,"a\\b"\n7,"a\\"b"\n8,"a\\\\b"\n9, sp \n11,"a\\,b"\n'

    def read(null_value: str) -> list[str | None]:
        args = ("utf-8", ["i", "s"], ",", '"', "\\", null_value, False, False, 100)
        (batch,) = spark_csv_batches(io.BytesIO(text.encode()), *args)
        return list(batch.column("s").to_pylist())

    # What Spark 4.3's csv reader returned for these lines with the default nullValue and NA.
    assert read("") == [None, None, "NA", "NA", "a\\b", "a\\b", 'a"b', "a\\b", " sp ", "a\\,b"]
    assert read("NA") == ["", None, None, None, "a\\b", "a\\b", 'a"b', "a\\b", " sp ", "a\\,b"]


def test_json_that_pyarrow_refuses_is_read_like_spark() -> None:
    target = pa.schema(
        [
            ("f", pa.float64()),
            ("m", pa.map_(pa.string(), pa.date32())),
            ("s", pa.string()),
            ("b", pa.binary()),
        ]
    )
    read_schema = pa.schema([pa.field(f.name, arrow_read_type(f.type)) for f in target])
    lines = '{"f":"NaN","m":{"a":"1000-06-15"},"s":12.50,"b":"AAE="}\n\n{"f":-0.0,"m":{}}\n'
    (batch,) = python_batches(io.BytesIO(lines.encode()), "utf-8", read_schema, 100)
    parsing = Parsing("UTC")
    f = conform(batch.column("f"), pa.float64(), parsing).to_pylist()
    assert f[0] != f[0] and str(f[1]) == "-0.0"
    assert conform(batch.column("m"), target.field("m").type, parsing).to_pylist()[1] == []
    assert batch.column("s").to_pylist() == ["12.50", None]
    assert conform(batch.column("b"), pa.binary(), parsing).to_pylist() == [b"\x00\x01", None]


def test_orc_dates_from_sparks_hybrid_calendar() -> None:
    # Day numbers Spark's ORC writer stored for 0001-01-01, 1000-06-15, 1582-10-04, 1582-10-15.
    stored = pa.array([-719164, -354114, -141428, -141427, None], pa.int32()).view(pa.date32())
    proleptic = julian_to_gregorian(stored).view(pa.int32()).to_pylist()
    assert proleptic == [-719162, -354120, -141438, -141427, None]


def test_json_writer_keeps_negative_zero_and_empty_maps() -> None:
    batch = pa.record_batch(
        [pa.array([-0.0]), pa.array([[]], pa.map_(pa.string(), pa.int32()))], names=["d", "m"]
    )
    assert json_lines(batch).to_pylist() == ['{"d":-0.0,"m":{}}\n']


def test_writer_time_zone_option_writes_wall_time_and_offset() -> None:
    stamps = pa.array([0, _us("0001-01-02T00:00:00+00:00"), _us("2043-08-01T19:00:00+00:00")], UTC)
    batch = pa.record_batch([stamps], names=["t"])
    assert csv_lines(batch, ",", LA).to_pylist() == [
        "1969-12-31T16:00:00.000000-08:00\n",
        "0001-01-01T16:07:02.000000-07:52:58\n",
        "2043-08-01T12:00:00.000000-07:00\n",
    ]
    assert csv_lines(batch, ",").to_pylist()[0] == "1970-01-01T00:00:00.000000Z\n"
