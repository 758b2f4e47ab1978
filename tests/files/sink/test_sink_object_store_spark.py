"""pyfile's sink on object stores, each a real server on 127.0.0.1 (real Spark, classic):
Azure Blob through adlfs against Azurite, S3 through s3fs against moto, GCS through gcsfs
against fake-gcs-server (support/object_stores.py).

Spark's JVM has no connector for these servers (no hadoop-azure, hadoop-aws or GCS jars), so
the output is read back the way the pyfile source does: the committed files from the manifest
(``committed_files``), opened with pyarrow, and by pyfile's source through Spark. Endpoints and
credentials travel only in ``fs.*`` options; no credential may appear in anything the query
writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pysparksources.files.sink.manifest import committed_files
from support.object_stores import ObjectStore
from support.pyfile_sink import run
from support.streams import rate

pytestmark = pytest.mark.spark


@pytest.mark.slow
def test_stream_exactly_once_with_replay(
    spark: Any, object_store: ObjectStore, tmp_path: Path
) -> None:
    store = object_store
    fs = store.bucket("sink")
    url, ck = store.url("sink/out"), tmp_path / "ck"
    options = store.fs_options()
    df = rate(spark, 2000, 1000).selectExpr("value AS id", "value % 2 AS k")
    run(df, url, ck, partitionBy="k", **options)
    # Replay the last batch, as after a crash before Spark's commit log: nothing is added.
    for name in ("1", ".1.crc"):
        (ck / "commits" / name).unlink()
    fs.invalidate_cache()
    before = sorted(fs.find("sink/out"))
    run(df, url, ck, partitionBy="k", **options)
    fs.invalidate_cache()
    assert sorted(fs.find("sink/out")) == before
    names = sorted(p.rsplit("/", 1)[-1] for p in fs.ls("sink/out/_spark_metadata"))
    assert names == ["0", "1"]

    files = committed_files(url, dict(store.storage_options))
    assert files is not None and all(f.startswith(store.url("sink/out/k=")) for f in files)
    ids: list[int] = []
    for f in files:
        with fs.open(f, "rb") as handle:
            ids += pq.read_table(handle).column("id").to_pylist()
    assert sorted(ids) == list(range(2000))

    # pyfile's source reads the same folder through the manifest, with the key only in fs.*:
    # a part file no batch committed (as a failed task leaves behind) must stay invisible.
    with fs.open("sink/out/k=0/part-stray.parquet", "wb") as handle:
        pq.write_table(pa.table({"id": [-1]}), handle)
    back = (
        spark.read.format("pyfile")
        .option("format", "parquet")
        .options(**options)
        .schema("id BIGINT, k BIGINT")
        .load(url)
    )
    assert sorted(r.id for r in back.collect()) == list(range(2000))

    written = [fs.cat_file(p) for p in fs.find("sink/out/_spark_metadata")]
    written += [p.read_bytes() for p in ck.rglob("*") if p.is_file()]
    for data in written:
        for secret_part in store.secrets:
            assert secret_part.encode() not in data
