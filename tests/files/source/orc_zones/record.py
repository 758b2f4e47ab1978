"""Record the ORC files of test_orc_zones.py and what Spark's own ORC reader reads from them.

Run from the repository root with the project's environment (about 2 minutes; it starts one
JVM per writer and per reader zone, each in its own process):

    .venv/bin/python tests/files/source/orc_zones/record.py

Spark's writer writes the rows of :data:`VALUES` (row ``i`` holds template ``i % len(VALUES)``)
from a JVM whose default zone is each of :data:`WRITERS`; the files land here as
``<writer>-<codec>.orc`` (the zstd file has 2100 rows, so three stripes; the others one row
per template). Spark's reader then reads every file in a JVM running in each of
:data:`READERS`, and ``expected.json`` keeps what it returned (writer -> reader zone ->
template -> ts, st.a, st.b[0], st.b[2], m['k'] in microseconds; every codec reads alike).
Python's ``TZ`` is Asia/Tokyo throughout, and the session time zone is never set.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
WRITERS = {"new_york": "America/New_York", "tokyo": "Asia/Tokyo"}
READERS = ("America/New_York", "America/Los_Angeles", "UTC")
CODECS = {"new_york": ("zstd", "none", "zlib", "snappy", "lz4", "lzo"), "tokyo": ("zlib",)}
STRIPED_ROWS = 2100  # Spark's ORC writer checks the stripe size every 1024 rows


def _us(text: str) -> int:
    import datetime as dt

    moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return (moment - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(
        microseconds=1
    )


# Instants (UTC) around what the conversions depend on, and a null.
VALUES: list[int | None] = [
    *(_us(f"2021-11-07T{t}Z") for t in ("04:30", "05:00", "05:30", "06:00", "06:30", "07:00")),
    *(_us(f"2021-11-07T{t}Z") for t in ("08:30", "09:00", "09:30", "10:00")),
    *(_us(f"2021-03-14T{t}Z") for t in ("06:30", "07:00", "07:30", "09:30", "10:00", "10:30")),
    *(-1_000_000 + f for f in (-1, 0, 1, 1000, 123_456, 500_000, 999_000, 999_999)),
    *(f for f in (-1001, -1000, -999, -1, 0, 1, 999, 1000, 1001, 123_456)),
    _us("1970-01-01T04:59:59.0015Z"),
    _us("1970-01-01T05:00:00.0015Z"),
    _us("1969-12-31T19:00:00.25Z"),
    _us("1883-11-18T16:00:00Z"),
    _us("1883-11-18T16:58:00.5Z"),
    _us("1883-11-18T17:02:00Z"),
    _us("1883-11-18T19:50:00Z"),
    _us("1883-11-18T20:10:00.000001Z"),
    _us("1800-01-01T12:00:00.000001Z"),
    _us("1678-01-02T00:00:00Z"),
    _us("1899-12-31T23:59:59.5Z"),
    _us("1900-01-01T00:00:00.5Z"),
    _us("1900-01-01T05:00:00Z"),
    _us("1950-06-01T12:00:00.0005Z"),
    _us("2015-01-01T00:00:00Z"),
    _us("2015-01-01T05:00:00Z"),
    _us("2024-02-29T12:00:00Z"),
    _us("2038-01-19T03:14:08Z"),
    _us("2200-06-01T12:34:56.789Z"),
    _us("2200-11-02T05:30:00Z"),
    _us("2200-11-02T06:30:00Z"),
    _us("2261-12-30T00:00:00Z"),
    None,
]

# The columns, from template k and its value v: ts is null with v; the struct is null for some
# k and its field a for others; b holds a null; the map holds a null value.
SELECT = """
SELECT k,
  timestamp_micros(v) AS ts,
  CASE WHEN k % 13 = 5 THEN NULL ELSE named_struct(
    'a', CASE WHEN k % 11 = 1 THEN NULL ELSE timestamp_micros(v + 1) END,
    'b', array(timestamp_micros(v), CAST(NULL AS TIMESTAMP), timestamp_micros(v - 3600000000))
  ) END AS st,
  map('k', timestamp_micros(v + 7), 'n', CAST(NULL AS TIMESTAMP)) AS m
FROM rows WHERE i < {rows}
"""

READ = """
SELECT k, unix_micros(ts) AS ts, unix_micros(st.a) AS a, unix_micros(st.b[0]) AS b0,
  unix_micros(st.b[2]) AS b2, unix_micros(m['k']) AS mk
FROM orc.`{path}`
WHERE (st IS NULL OR st.b[1] IS NULL) AND m['n'] IS NULL
"""


def _session(zone: str) -> object:
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.extraJavaOptions", f"-Duser.timezone={zone}")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def write(writer: str, folder: Path) -> None:
    spark: object = _session(WRITERS[writer])
    rows = [(i, i % len(VALUES), VALUES[i % len(VALUES)]) for i in range(STRIPED_ROWS)]
    spark.createDataFrame(rows, "i int, k int, v long").createOrReplaceTempView("rows")  # type: ignore[attr-defined]
    for codec in CODECS[writer]:
        count = STRIPED_ROWS if codec == "zstd" else len(VALUES)
        frame = spark.sql(SELECT.format(rows=count)).coalesce(1)  # type: ignore[attr-defined]
        out = folder / f"{writer}-{codec}"
        options = {"compression": codec, "orc.stripe.size": "1024"}
        frame.write.mode("overwrite").options(**options).orc(str(out))
        (data,) = out.glob("part-*.orc")
        shutil.copyfile(data, HERE / f"{writer}-{codec}.orc")
    spark.stop()  # type: ignore[attr-defined]


def read(reader: str, out: Path) -> None:
    spark: object = _session(reader)
    found: dict[str, dict[str, list[object]]] = {}
    for path in sorted(HERE.glob("*.orc")):
        rows = spark.sql(READ.format(path=path)).collect()  # type: ignore[attr-defined]
        values: dict[str, list[object]] = {}
        for row in rows:
            record = [row.ts, row.a, row.b0, row.b2, row.mk]
            assert values.setdefault(str(row.k), record) == record, (path, row)
        assert len(values) == len(VALUES), path  # the WHERE clause held for every row
        writer = path.name.split("-")[0]
        assert found.setdefault(writer, values) == values, path  # the codecs read alike
    out.write_text(json.dumps(found))
    spark.stop()  # type: ignore[attr-defined]


def main() -> None:
    for old in HERE.glob("*.orc"):
        old.unlink()
    env = {**os.environ, "TZ": "Asia/Tokyo"}
    with tempfile.TemporaryDirectory() as tmp:
        for writer in WRITERS:
            folder = Path(tmp) / writer
            subprocess.run(
                [sys.executable, __file__, "write", writer, str(folder)], env=env, check=True
            )
        expected: dict[str, dict[str, object]] = {}
        for reader in READERS:
            out = Path(tmp) / "read.json"
            subprocess.run(
                [sys.executable, __file__, "read", reader, str(out)], env=env, check=True
            )
            for writer, values in json.loads(out.read_text()).items():
                expected.setdefault(writer, {})[reader] = values
    (HERE / "expected.json").write_text(json.dumps(expected, sort_keys=True) + "\n")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "write":
        write(sys.argv[2], Path(sys.argv[3]))
    elif len(sys.argv) > 1 and sys.argv[1] == "read":
        read(sys.argv[2], Path(sys.argv[3]))
    else:
        main()
