"""pyfile's source on object stores, each a real server on 127.0.0.1 (real Spark, classic):
Azure Blob through adlfs against Azurite, S3 through s3fs against moto, GCS through gcsfs
against fake-gcs-server (support/object_stores.py).

Input and the source log both live in the store; admission splits the files into batches, the
stream restarts, or is SIGKILLed mid-stream and restarted, and every row comes out once.
Endpoints and credentials travel only in ``fs.*`` options: they must never reach an error
message, Spark's offsets or the source log.
"""

from __future__ import annotations

import io
import json
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from support import crash_drivers
from support.object_stores import ObjectStore, store_param
from support.pyfile_source import SCHEMA, ids_in
from support.streams import progress, run_available_now

pytestmark = pytest.mark.spark


def _upload(fs: Any, path: str, ids: range) -> None:
    buffer = io.BytesIO()
    pq.write_table(pa.table({"id": list(ids), "name": [f"n{i}" for i in ids]}), buffer)
    fs.pipe_file(path, buffer.getvalue())


def _stream(spark: Any, url: str, log_url: str, fs_options: dict[str, str]) -> Any:
    return (
        spark.readStream.format("pyfile")
        .option("format", "parquet")
        .option("sourceLogLocation", log_url)
        .option("maxFilesPerTrigger", 2)
        .options(**fs_options)
        .schema(SCHEMA)
        .load(url)
    )


@pytest.mark.slow
def test_stream_exactly_once_across_restarts(
    spark: Any, object_store: ObjectStore, tmp_path: Path
) -> None:
    store = object_store
    fs = store.bucket("landing")
    store.bucket("logs")
    for i in range(3):
        _upload(fs, f"landing/orders/day=1/f{i}.parquet", range(i * 10, i * 10 + 10))
    fs.pipe_file("landing/orders/_SUCCESS", b"")  # hidden by Spark's rule
    out, ck = tmp_path / "out", tmp_path / "ck"
    url, log_url = store.url("landing/orders"), store.url("logs/q1/pyfile-source")
    options = store.fs_options()
    batches = progress(run_available_now(_stream(spark, url, log_url, options), out, ck))
    # maxFilesPerTrigger=2: three files are two batches.
    assert [b["numInputRows"] for b in batches if b["numInputRows"]] == [20, 10]
    for i in range(3, 5):
        _upload(fs, f"landing/orders/day=2/f{i}.parquet", range(i * 10, i * 10 + 10))
    run_available_now(_stream(spark, url, log_url, options), out, ck)
    run_available_now(_stream(spark, url, log_url, options), out, ck)  # nothing new
    assert ids_in(spark, out) == list(range(50))  # every row once
    fs.invalidate_cache()
    assert fs.exists("logs/q1/pyfile-source/0")  # the source log is in the store too

    # Nothing the query wrote (Spark's whole checkpoint, the source log) holds a credential.
    written = [p.read_bytes() for p in ck.rglob("*") if p.is_file()]
    written += [fs.cat_file(p) for p in fs.find("logs/q1/pyfile-source")]
    for data in written:
        for secret_part in store.secrets:
            assert secret_part.encode() not in data
    offsets = [
        line
        for p in (ck / "offsets").iterdir()
        if not p.name.startswith(".")
        for line in p.read_text().splitlines()
        if "logOffset" in line
    ]
    assert offsets and all(set(json.loads(line)) == {"logId", "logOffset"} for line in offsets)


@pytest.mark.parametrize(
    "object_store, case",
    [
        store_param("azurite", "wrong container"),
        store_param("azurite", "wrong key"),
        # s3fs and gcsfs create a missing bucket (the log's makedirs), moto accepts any key and
        # fake-gcs-server has no authentication: there the source log is damaged instead.
        store_param("s3", "damaged log"),
        store_param("gcs", "damaged log"),
    ],
    indirect=["object_store"],
)
def test_a_failing_query_never_shows_the_credentials(
    spark: Any, object_store: ObjectStore, tmp_path: Path, case: str
) -> None:
    store = object_store
    fs = store.bucket("landing2")
    store.bucket("logs2")
    _upload(fs, "landing2/f.parquet", range(3))
    storage_options = store.storage_options
    url, log_url = store.url("landing2"), store.url("logs2/q")
    if case == "wrong container":
        log_url = store.url("no-such-container/q")  # the log cannot be written
    elif case == "damaged log":
        fs.pipe_file("logs2/q/identity.json", b"{not json")  # the log's id cannot be read
    else:
        assert store.bad_credentials is not None
        storage_options = store.bad_credentials
    df = _stream(spark, url, log_url, store.fs_options(storage_options))
    query = (
        df.writeStream.format("parquet")
        .option("path", str(tmp_path / "out"))
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    with pytest.raises(Exception) as raised:
        query.awaitTermination(120)
        if query.exception() is None:
            raise AssertionError(f"{case}: the query did not fail")
    message = str(raised.value) + str(query.exception() or "")
    assert "AssertionError" not in type(raised.value).__name__, message
    assert "prepareForTriggerAvailableNow" in message  # failed at start, in the source
    if case == "damaged log":
        assert store.url("logs2/q/identity.json") in message, message
    hidden = [*store.secrets, *(storage_options.values() if case == "wrong key" else ())]
    for secret_part in hidden:
        assert secret_part not in message


def _log_batches(fs: Any, log: str) -> int:
    fs.invalidate_cache()
    names = [p.rsplit("/", 1)[-1] for p in fs.find(log)]
    return sum(1 for name in names if name.split(".")[0].isdigit())


# The kill on local disk is tests/files/source/test_crash_spark.py; here the source log is in
# the store (each killed driver costs a JVM start, so S3 and GCS only; Azurite's log is
# proven across restarts above).
@pytest.mark.slow
@pytest.mark.parametrize("object_store", [store_param("s3"), store_param("gcs")], indirect=True)
def test_sigkill_mid_stream_then_restart_is_exactly_once(
    spark: Any, object_store: ObjectStore, tmp_path: Path
) -> None:
    files, rows = 8, 50  # the kill comes after 4 of the 8 one-file batches
    store = object_store
    fs = store.bucket("crash")
    folder = f"crash/{uuid.uuid4().hex}"
    src, log = f"{folder}/in", f"{folder}/log"
    for i in range(files):
        _upload(fs, f"{src}/f{i:02d}.parquet", range(i * rows, (i + 1) * rows))
    env = {"PYFILE_OPTIONS": json.dumps(store.fs_options())}
    args = [store.url(src), store.url(log), tmp_path / "out", tmp_path / "ck"]
    proc = crash_drivers.start("pyfile-source", *args, "continuous", env=env)
    crash_drivers.kill_when(proc, lambda: _log_batches(fs, log) >= 4, "4 batches in the log")
    assert _log_batches(fs, log) < files, "the kill came after the stream had finished"

    crash_drivers.restart_here(spark, "pyfile-source", *args, "availablenow", env=env)
    ids = ids_in(spark, tmp_path / "out")
    assert ids == list(range(files * rows)), "rows lost or duplicated across the crash"
