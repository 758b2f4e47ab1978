"""pyfile on Azure Blob through adlfs, against Azurite on 127.0.0.1 (real Spark, classic).

Input and the source log both live in the emulator; the stream restarts and every row comes
out once. Credentials travel only in ``fs.*`` options: they must never reach an error message,
Spark's offsets or the source log.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from support.azurite import Azurite, azurite
from support.pyfile_source import SCHEMA, ids_in
from support.streams import progress, run_available_now

pytestmark = pytest.mark.spark
__all__ = ["azurite"]


def _upload(fs: Any, path: str, ids: range) -> None:
    buffer = io.BytesIO()
    pq.write_table(pa.table({"id": list(ids), "name": [f"n{i}" for i in ids]}), buffer)
    fs.pipe_file(path, buffer.getvalue())


def _stream(spark: Any, emulator: Azurite, url: str, log_url: str, secret: str) -> Any:
    return (
        spark.readStream.format("pyfile")
        .option("format", "parquet")
        .option("sourceLogLocation", log_url)
        .option("maxFilesPerTrigger", 2)
        .option("fs.connection_string", secret)
        .schema(SCHEMA)
        .load(url)
    )


def _secrets(emulator: Azurite) -> list[str]:
    return [emulator.connection_string, emulator.account_key, emulator.account_key[:20]]


@pytest.mark.slow
def test_stream_from_azure_blob_exactly_once_across_restarts(
    spark: Any, azurite: Azurite, tmp_path: Path
) -> None:
    import adlfs

    fs = adlfs.AzureBlobFileSystem(connection_string=azurite.connection_string)
    fs.mkdir("landing")
    fs.mkdir("logs")
    for i in range(3):
        _upload(fs, f"landing/orders/day=1/f{i}.parquet", range(i * 10, i * 10 + 10))
    fs.pipe_file("landing/orders/_SUCCESS", b"")  # hidden by Spark's rule
    out, ck = tmp_path / "out", tmp_path / "ck"
    url, log_url = "abfs://landing/orders", "abfs://logs/q1/pyfile-source"
    secret = azurite.connection_string
    batches = progress(run_available_now(_stream(spark, azurite, url, log_url, secret), out, ck))
    assert sum(b["numInputRows"] for b in batches) == 30
    for i in range(3, 5):
        _upload(fs, f"landing/orders/day=2/f{i}.parquet", range(i * 10, i * 10 + 10))
    run_available_now(_stream(spark, azurite, url, log_url, secret), out, ck)
    run_available_now(_stream(spark, azurite, url, log_url, secret), out, ck)  # nothing new
    assert ids_in(spark, out) == list(range(50))  # every row once
    assert fs.exists("logs/q1/pyfile-source/0")  # the source log is on Azurite too

    # Nothing the query wrote (Spark's whole checkpoint, the source log) holds a credential.
    written = [p.read_bytes() for p in ck.rglob("*") if p.is_file()]
    written += [fs.cat_file(p) for p in fs.find("logs/q1/pyfile-source")]
    for data in written:
        for secret_part in _secrets(azurite):
            assert secret_part.encode() not in data
    offsets = [
        line
        for p in (ck / "offsets").iterdir()
        if not p.name.startswith(".")
        for line in p.read_text().splitlines()
        if "logOffset" in line
    ]
    assert offsets and all(set(json.loads(line)) == {"logId", "logOffset"} for line in offsets)


@pytest.mark.parametrize("case", ["wrong container", "wrong key"])
def test_a_failing_query_never_shows_the_credentials(
    spark: Any, azurite: Azurite, tmp_path: Path, case: str
) -> None:
    import adlfs

    fs = adlfs.AzureBlobFileSystem(connection_string=azurite.connection_string)
    fs.mkdir("landing2", exist_ok=True)
    fs.mkdir("logs2", exist_ok=True)
    _upload(fs, "landing2/f.parquet", range(3))
    secret = azurite.connection_string
    url, log_url = "abfs://landing2", "abfs://logs2/q"
    if case == "wrong container":
        log_url = "abfs://no-such-container/q"  # the log cannot be written
    else:
        secret = secret.replace(azurite.account_key, "QUJD" * 22)
    df = _stream(spark, azurite, url, log_url, secret)
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
    for secret_part in [*_secrets(azurite), secret, "QUJD" * 22]:
        assert secret_part not in message
