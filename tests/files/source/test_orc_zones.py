"""ORC timestamps read as Spark's ORC reader reads them, whatever the JVM's and Python's zones.

The files in orc_zones/ were written by Spark from JVMs running in New York and Tokyo, and
expected.json holds what Spark's own reader returned for them in JVMs running in New York,
Los Angeles and UTC (orc_zones/record.py records both; Python's TZ was Asia/Tokyo). pyfile
reads them here in a Python process whose TZ is Asia/Tokyo, with the JVM zone given as a
Spark task without a session finds it (``-Duser.timezone`` in JAVA_TOOL_OPTIONS). No JVM.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as orc
import pytest

from pysparksources.files.formats._orc_codecs import Compression, decompress
from pysparksources.files.values.zones import jvm_default_zone

FILES = Path(__file__).with_name("orc_zones")
EXPECTED = json.loads((FILES / "expected.json").read_text())
READERS = ("America/New_York", "America/Los_Angeles", "UTC")

# Run in a child process with TZ=Asia/Tokyo: every file read in each JVM zone given, through
# read_split (the task's path) into Spark's Arrow types; per row [k, ts, st.a, st.b, m] in
# microseconds.
READ_ALL = """
import datetime as dt, json, os, sys
import pyarrow as pa
from pysparksources._core.option_table import Use
from pysparksources.files.storage.filesystem import resolve
from pysparksources.files.formats._read_split import FileSplit, read_split
from pysparksources.files.options import parse_options

folder = sys.argv[1]
us = pa.timestamp("us", tz="UTC")
target = pa.schema([
    ("k", pa.int32()), ("ts", us), ("st", pa.struct([("a", us), ("b", pa.list_(us))])),
    ("m", pa.map_(pa.string(), us)),
])
options = parse_options({"path": folder, "format": "orc"}, Use.BATCH_READ).reader
epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)

def micros(value):
    if isinstance(value, dt.datetime):
        return (value - epoch) // dt.timedelta(microseconds=1)
    if isinstance(value, dict):
        return {key: micros(item) for key, item in value.items()}
    if isinstance(value, list):
        return [micros(item) for item in value]
    return value

found = {}
for zone in sys.argv[2:]:
    os.environ["JAVA_TOOL_OPTIONS"] = "-Duser.timezone=" + zone
    for name in sorted(os.listdir(folder)):
        if name.endswith(".orc"):
            path = os.path.join(folder, name)
            split = FileSplit(path, os.path.getsize(path))
            batches = list(read_split(resolve(folder), split, target, options))
            assert all(batch.schema == target for batch in batches), name
            rows = pa.Table.from_batches(batches, target).to_pylist()
            found[name + " " + zone] = [
                [r["k"], micros(r["ts"]), micros(r["st"]), micros(dict(r["m"]))] for r in rows
            ]
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def read_in_tokyo() -> dict[str, list[list[object]]]:
    env = {**os.environ, "TZ": "Asia/Tokyo"}
    env.pop("JDK_JAVA_OPTIONS", None)
    proc = subprocess.run(
        [sys.executable, "-c", READ_ALL, str(FILES), *READERS],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    found: dict[str, list[list[object]]] = json.loads(proc.stdout)
    return found


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("name", sorted(p.name for p in FILES.glob("*.orc")))
def test_pyfile_reads_orc_timestamps_as_spark_does(
    read_in_tokyo: dict[str, list[list[object]]], name: str, reader: str
) -> None:
    expected = EXPECTED[name.split("-")[0]][reader]
    rows = read_in_tokyo[f"{name} {reader}"]
    assert len(rows) == (2100 if name == "new_york-zstd.orc" else len(expected))
    for k, ts, st, m in rows:
        spark_ts, spark_a, spark_b0, spark_b2, spark_mk = expected[str(k)]
        got = {"ts": ts, "m": m}
        want = {"ts": spark_ts, "m": {"k": spark_mk, "n": None}}
        if st is not None:
            got["st"] = st
            want["st"] = {"a": spark_a, "b": [spark_b0, None, spark_b2]}
        assert got == want, (k, name, reader)


def test_pyarrow_alone_reads_the_writers_wall_times() -> None:
    """Why pyfile converts: pyarrow gives New York's wall times where Spark (in New York) gives
    the instants, the same in any Python TZ."""
    table = orc.ORCFile(FILES / "new_york-none.orc").read(columns=["k", "ts"])
    pyarrow_us = dict(
        zip(table["k"].to_pylist(), table["ts"].cast(pa.int64()).to_pylist(), strict=True)
    )
    spark_us = {int(k): v[0] for k, v in EXPECTED["new_york"]["America/New_York"].items()}
    differs = [
        k for k in spark_us if spark_us[k] is not None and pyarrow_us[k] // 1000 != spark_us[k]
    ]
    assert len(differs) == len(spark_us) - 1  # every row but the null one


def test_jvm_zone_without_a_task_comes_from_java_options_then_the_machine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("JDK_JAVA_OPTIONS", raising=False)
    monkeypatch.delenv("JAVA_TOOL_OPTIONS", raising=False)
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    assert jvm_default_zone() == "Asia/Tokyo"
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-Xmx1g -Duser.timezone=America/New_York")
    assert jvm_default_zone() == "America/New_York"
    monkeypatch.setenv("JDK_JAVA_OPTIONS", "-Duser.timezone=Europe/Paris")
    assert jvm_default_zone() == "Europe/Paris"


def test_orc_chunks_decompress_stored_and_compressed_alike() -> None:
    """ORC streams are chunks, each stored or compressed (brotli: no Spark writer to record)."""
    data = b"writer zone America/New_York " * 40
    for kind, codec in ((Compression.BROTLI, "brotli"), (Compression.ZSTD, "zstd")):
        packed = pa.Codec(codec).compress(data[:500], asbytes=True)
        stream = (len(packed) << 1).to_bytes(3, "little") + packed
        stream += (len(data[500:]) << 1 | 1).to_bytes(3, "little") + data[500:]
        assert decompress(stream, kind) == data
