"""pyfile sink on Azure Blob through adlfs, against Azurite on 127.0.0.1 (real Spark, classic).

Spark's JVM cannot open Azurite, so the output is read back the way the pyfile source does:
the committed files from the manifest (``committed_files``), opened with pyarrow. The account
key travels only in an ``fs.*`` option and must appear in nothing the query writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pysparksources.files._manifest import committed_files
from support.azurite import Azurite, azurite
from support.pyfile_sink import run
from support.streams import rate

pytestmark = [pytest.mark.spark, pytest.mark.azurite]
__all__ = ["azurite"]


@pytest.mark.slow
def test_stream_to_azure_blob_exactly_once_with_replay(
    spark: Any, azurite: Azurite, tmp_path: Path
) -> None:
    import adlfs

    fs = adlfs.AzureBlobFileSystem(connection_string=azurite.connection_string)
    fs.mkdir("sink", exist_ok=True)
    url, ck = "abfs://sink/out", tmp_path / "ck"
    secret = {"fs.connection_string": azurite.connection_string}
    df = rate(spark, 2000, 1000).selectExpr("value AS id", "value % 2 AS k")
    run(df, url, ck, partitionBy="k", **secret)
    # Replay the last batch, as after a crash before Spark's commit log: nothing is added.
    for name in ("1", ".1.crc"):
        (ck / "commits" / name).unlink()
    before = sorted(fs.find("sink/out"))
    run(df, url, ck, partitionBy="k", **secret)
    assert sorted(fs.find("sink/out")) == before
    names = sorted(p.rsplit("/", 1)[-1] for p in fs.ls("sink/out/_spark_metadata"))
    assert names == ["0", "1"]

    files = committed_files(url, {"connection_string": azurite.connection_string})
    assert files is not None and all(f.startswith("abfs://sink/out/k=") for f in files)
    ids: list[int] = []
    for f in files:
        with fs.open(f.removeprefix("abfs://"), "rb") as handle:
            ids += pq.read_table(handle).column("id").to_pylist()
    assert sorted(ids) == list(range(2000))

    # pyfile's source reads the same folder through the manifest, with the key only in fs.*:
    # a part file no batch committed (as a failed task leaves behind) must stay invisible.
    with fs.open("sink/out/k=0/part-stray.parquet", "wb") as handle:
        pq.write_table(pa.table({"id": [-1]}), handle)
    back = (
        spark.read.format("pyfile")
        .option("format", "parquet")
        .option("fs.connection_string", azurite.connection_string)
        .schema("id BIGINT, k BIGINT")
        .load(url)
    )
    assert sorted(r.id for r in back.collect()) == list(range(2000))

    written = [fs.cat_file(p) for p in fs.find("sink/out/_spark_metadata")]
    written += [p.read_bytes() for p in ck.rglob("*") if p.is_file()]
    for data in written:
        assert azurite.account_key.encode() not in data
        assert azurite.account_key[:20].encode() not in data
