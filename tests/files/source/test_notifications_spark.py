"""pyfile with discovery=notifications on real servers (real Spark, classic): Event Grid events
in an Azurite Storage queue (azure-storage-queue) and S3 event notifications that moto's
server delivers to its SQS (boto3), support/notifications.py.

Every file is read once whatever the queue does: duplicates, out-of-order delivery, files
deleted again, notifications lost (a backfill listing finds the files), SIGKILLs while a batch
is read and after it is committed but before its messages are deleted. The queue is empty
once every batch is committed.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import crash_drivers
from support.azurite import azurite_queue  # noqa: F401  (a fixture)
from support.notifications import AzureNotifications, S3Notifications, parquet_bytes
from support.pyfile_source import SCHEMA, ids_in
from support.streams import progress, run_available_now

pytestmark = [pytest.mark.spark, pytest.mark.slow]
AZURE = pytest.param("azure", marks=pytest.mark.azurite, id="azure")
S3 = pytest.param("s3", marks=pytest.mark.moto, id="s3")
VISIBILITY_S = 2


@pytest.fixture
def notifier(request: pytest.FixtureRequest) -> Iterator[Any]:
    root = f"n{uuid.uuid4().hex[:10]}"
    if request.param == "azure":
        blob, queue = request.getfixturevalue("azurite"), request.getfixturevalue("azurite_queue")
        pair: Any = AzureNotifications(blob, queue, root)
    else:
        pair = S3Notifications(request.getfixturevalue("moto_s3"), root)
    yield pair
    pair.close()


def _options(n: Any, **more: str) -> dict[str, str]:
    return {
        **n.options,
        "format": "parquet",
        "discovery": "notifications",
        "queueVisibilityTimeout": f"{VISIBILITY_S}s",
        **more,
    }


def _stream(spark: Any, n: Any, log: Path, **more: str) -> Any:
    return (
        spark.readStream.format("pyfile")
        .option("sourceLogLocation", str(log))
        .options(**_options(n, **more))
        .schema(SCHEMA)
        .load(n.url(f"{n.root}/in"))
    )


def _send(n: Any, body: str) -> None:
    """A message into the queue, as the storage service's producer would put it there."""
    if isinstance(n, AzureNotifications):
        n.queue.send_message(base64.b64encode(body.encode()).decode())
    else:
        n.sqs.send_message(QueueUrl=n.queue_url, MessageBody=body)


def _ghost(n: Any, path: str) -> str:
    """A creation event for ``path``, which is not in storage."""
    if isinstance(n, AzureNotifications):
        return json.dumps(n.event(path, size=10))
    bucket, key = path.split("/", 1)
    record = {
        "eventName": "ObjectCreated:Put",
        "s3": {"bucket": {"name": bucket}, "object": {"key": key}},
    }
    return json.dumps({"Records": [record]})


def _rows_per_batch(query: Any) -> list[int]:
    return [b["numInputRows"] for b in progress(query) if b["numInputRows"]]


def _logged_paths(log: Path, batch: int) -> list[str]:
    lines = (log / str(batch)).read_text().splitlines()[1:]
    return [json.loads(line)["path"].rsplit("/", 1)[-1] for line in lines]


@pytest.mark.parametrize("notifier", [AZURE, S3], indirect=True)
def test_every_file_once_through_duplicates_deletions_filters_and_lost_notifications(
    spark: Any, notifier: Any, tmp_path: Path
) -> None:
    n, root = notifier, notifier.root
    log, out, ck = tmp_path / "log", tmp_path / "out", tmp_path / "ck"
    n.upload(f"{root}/in/e0.parquet", parquet_bytes(range(0, 10)), notify=False)  # existing
    n.upload(f"{root}/in/f1.parquet", parquet_bytes(range(10, 20)))
    if isinstance(n, AzureNotifications):
        late = n.upload(f"{root}/in/f2.parquet", parquet_bytes(range(20, 30)), notify=False)
        n.upload(f"{root}/in/f3.parquet", parquet_bytes(range(30, 40)))
        n.publish(late, late, as_array=True)  # after f3's, twice, in one array message
        # Deleted again: the deletion delivered first, the creation after it.
        created = n.upload(f"{root}/in/h.parquet", parquet_bytes(range(800, 810)), notify=False)
        n.delete(f"{root}/in/h.parquet")
        n.publish(created)
    else:
        n.upload(f"{root}/in/f2.parquet", parquet_bytes(range(20, 30)))
        n.upload(f"{root}/in/f3.parquet", parquet_bytes(range(30, 40)))
        n.duplicate(f"{root}/in/f1.parquet")
    n.upload(f"{root}/in/g.parquet", parquet_bytes(range(900, 910)))  # deleted again
    n.delete(f"{root}/in/g.parquet")
    n.upload(f"{root}/other/x.parquet", parquet_bytes(range(700, 710)))  # not the path
    n.upload(f"{root}/in/_tmp/y.parquet", parquet_bytes(range(710, 720)))  # hidden
    n.upload(f"{root}/in/z.txt", b"not parquet")  # filtered by pathGlobFilter
    # A message that is no storage event, and one for a file that is not there: counted in
    # the progress, deleted, and the stream goes on.
    _send(n, "not a storage event")
    _send(n, _ghost(n, f"{root}/in/ghost.parquet"))

    options = {"maxFilesPerTrigger": "2", "pathGlobFilter": "*.parquet"}
    query = run_available_now(_stream(spark, n, log, **options), out, ck)
    assert ids_in(spark, out) == list(range(40))  # e0 from the first listing, f1-f3 once
    assert _rows_per_batch(query) == [20, 20]
    counts = progress(query)[-1]["sources"][0]["latestOffset"]["@notifications"]
    # Not in storage when looked up: the ghost, g (and on Azure h), deleted before the stream.
    missing = 3 if isinstance(n, AzureNotifications) else 2
    assert (counts["unreadableMessages"], counts["missingFiles"]) == (1, missing)

    # No listing now: f5 and f6 come through the queue alone, f4's notification is lost.
    n.upload(f"{root}/in/f4.parquet", parquet_bytes(range(40, 50)), notify=False)
    n.upload(f"{root}/in/f5.parquet", parquet_bytes(range(50, 60)))
    n.upload(f"{root}/in/f6.parquet", parquet_bytes(range(60, 70)))
    run_available_now(_stream(spark, n, log, **options), out, ck)
    assert ids_in(spark, out) == [*range(40), *range(50, 70)]

    # A backfill listing finds f4. Waiting out the visibility timeout first, the messages of
    # the last batch (committed, but no commit() call came before the query ended) come back
    # and are deleted now.
    time.sleep(VISIBILITY_S + 0.5)
    run_available_now(_stream(spark, n, log, backfillInterval="1s", **options), out, ck)
    assert ids_in(spark, out) == list(range(70))
    assert n.depth() == 0  # every message deleted, none read twice

    written = [p.read_bytes() for folder in (ck, log) for p in folder.rglob("*") if p.is_file()]
    for data in written:
        for secret in (*n.secrets, n.options["queueUrl"].encode().decode()):
            assert secret.encode() not in data
    offsets = [
        json.loads(line)
        for p in (ck / "offsets").iterdir()
        if p.name.isdigit()
        for line in p.read_text().splitlines()
        if "logOffset" in line
    ]
    assert offsets and all(set(offset) == {"logId", "logOffset"} for offset in offsets)


@pytest.mark.parametrize("notifier", [AZURE], indirect=True)
def test_latest_first_max_bytes_and_clean_source(spark: Any, notifier: Any, tmp_path: Path) -> None:
    n, root = notifier, notifier.root
    log, out, ck = tmp_path / "log", tmp_path / "out", tmp_path / "ck"
    for i in range(3):
        n.upload(f"{root}/in/a{i}.parquet", parquet_bytes(range(i * 10, i * 10 + 10)))
        time.sleep(1.05)  # distinct modification times (Azure's have whole seconds)
    first = {"latestFirst": "true", "maxFilesPerTrigger": "1", "cleanSource": "delete"}
    run_available_now(_stream(spark, n, log, includeExistingFiles="false", **first), out, ck)
    assert [_logged_paths(log, b) for b in range(3)] == [
        ["a2.parquet"],
        ["a1.parquet"],
        ["a0.parquet"],
    ]
    n.fs.invalidate_cache()
    # Batches 0 and 1 are committed (commit() came); the last one is cleaned by the next run.
    assert sorted(p.rsplit("/", 1)[-1] for p in n.fs.ls(f"{root}/in")) == ["a0.parquet"]

    size = len(parquet_bytes(range(30, 40)))
    for i in range(3, 6):
        n.upload(f"{root}/in/b{i}.parquet", parquet_bytes(range(i * 10, i * 10 + 10)))
    second = {"maxBytesPerTrigger": str(2 * size + 10), "cleanSource": "delete"}
    query = run_available_now(_stream(spark, n, log, **second), out, ck)
    assert _rows_per_batch(query) == [20, 10]
    assert ids_in(spark, out) == list(range(60))
    n.fs.invalidate_cache()
    assert not n.fs.exists(f"{root}/in/a0.parquet")


@pytest.mark.parametrize(
    ("notifier", "moment"),
    [
        pytest.param("azure", "read", marks=pytest.mark.azurite, id="azure-read"),
        pytest.param("azure", "committed", marks=pytest.mark.azurite, id="azure-committed"),
        pytest.param("s3", "read", marks=pytest.mark.moto, id="s3-read"),
        pytest.param("s3", "committed", marks=pytest.mark.moto, id="s3-committed"),
    ],
    indirect=["notifier"],
)
def test_a_killed_query_reads_every_file_once(
    spark: Any, notifier: Any, moment: str, tmp_path: Path
) -> None:
    """SIGKILL while batch 1 is read (its messages received, not committed), or once it is
    committed and before its messages are deleted; the restart reads every row once."""
    n, root = notifier, notifier.root
    for i in range(4):
        n.upload(f"{root}/in/f{i}.parquet", parquet_bytes(range(i * 10, i * 10 + 10)))
    src, log, out, ck = n.url(f"{root}/in"), tmp_path / "log", tmp_path / "out", tmp_path / "ck"
    # Only the queue: no first listing, no backfill.
    options = json.dumps(_options(n, includeExistingFiles="false"))
    marker = tmp_path / "marker"
    pause = {"NOTIFY_PAUSE_AT": moment, "NOTIFY_PAUSE_BATCH": "1", "NOTIFY_MARKER": str(marker)}
    proc = crash_drivers.start(
        "pyfile-source", src, log, out, ck, "continuous", env={"PYFILE_OPTIONS": options, **pause}
    )
    crash_drivers.kill_when(proc, marker.exists, f"the {moment} moment")
    committed = {int(p.name) for p in (ck / "commits").iterdir() if p.name.isdigit()}
    assert (1 in committed) is (moment == "committed")
    # Batch 0's message was deleted when batch 1 was planned; the other three are held.
    assert n.depth() == 3

    time.sleep(VISIBILITY_S + 0.5)  # the killed driver's messages come back
    crash_drivers.restart_here(
        spark, "pyfile-source", src, log, out, ck, "availablenow", env={"PYFILE_OPTIONS": options}
    )
    assert ids_in(spark, out) == list(range(40))
    assert sorted(p for b in range(4) for p in _logged_paths(log, b)) == [
        f"f{i}.parquet" for i in range(4)
    ]
