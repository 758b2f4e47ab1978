"""discovery=notifications driven in this process as Spark's driver drives it (latestOffset, then
commit), against real queues and storage: moto's S3 and SQS (moto sends the bucket's own
notifications), Azurite's blob and queue services (support/notifications.py). No Spark session:
these tests work what a queue message is trusted with, which needs no executor.

- A message this source does not read ends counted and logged (id and reason, never the body),
  deleted, or left for the queue's dead-letter policy (``unreadableMessages=leave``).
- Storage says what a notified file is: size and time from the filesystem, a missing file
  skipped and counted, a forged deletion cannot drop a file that is there.
- Events of another storage account or bucket are not the path's files.
- ``discovery.json`` read back checked.
"""

from __future__ import annotations

import base64
import json
import logging
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from pysparksources._core.option_table import Use
from pysparksources.errors import CheckpointError
from pysparksources.files.offsets import LogReport, NotificationCounts
from pysparksources.files.options import parse_options
from pysparksources.files.reader import FileStreamReader
from pysparksources.files.source.file_index import SourceLister
from pysparksources.files.source.notifications import discovery as _discovery
from pysparksources.files.source.notifications.discovery import OPEN_QUEUE, NotificationDiscovery
from pysparksources.files.source.notifications.events import FileEvent
from pysparksources.files.source.notifications.queues import NotificationQueue, open_queue
from pysparksources.files.source.seen_files import SeenFiles
from support.azurite import azurite_queue  # noqa: F401  (a fixture)
from support.notifications import AzureNotifications, S3Notifications, parquet_bytes
from support.pyfile_source import stream_reader

SCHEMA = StructType([StructField("id", LongType()), StructField("name", StringType())])
DISCOVERY_LOG = "pysparksources.files.source.notifications.discovery"


@pytest.fixture
def s3(moto_s3: Any) -> Iterator[S3Notifications]:
    pair = S3Notifications(moto_s3, f"n{uuid.uuid4().hex[:10]}")
    yield pair
    pair.close()


@pytest.fixture
def azure(azurite: Any, azurite_queue: Any) -> Iterator[AzureNotifications]:  # noqa: F811
    pair = AzureNotifications(azurite, azurite_queue, f"n{uuid.uuid4().hex[:10]}")
    yield pair
    pair.close()


class Driver:
    """One pyfile stream over ``n``'s path, planned and committed as Spark's driver would."""

    def __init__(self, n: Any, log: Path, **more: str) -> None:
        options = {
            **n.options,
            "path": n.url(f"{n.root}/in"),
            "format": "parquet",
            "sourceLogLocation": str(log),
            "discovery": "notifications",
            "queueVisibilityTimeout": "30s",
            **more,
        }
        self.log = log
        # The path must exist when the stream starts; on S3 a folder exists through its objects
        # (a hidden name: never read, its notification skipped).
        n.fs.pipe_file(f"{n.root}/in/_landing", b"")
        n.fs.invalidate_cache()
        self.reader: FileStreamReader = stream_reader(options, SCHEMA)
        self.offset = self.reader.initialOffset()

    def trigger(self) -> list[dict[str, Any]]:
        """One trigger: the source-log entries of the batch it planned (none: [])."""
        end = self.reader.latestOffset(self.offset, self.reader.getDefaultReadLimit())
        if end == self.offset:
            return []
        self.reader.commit(end)
        self.offset = end
        lines = (self.log / str(end["logOffset"])).read_text().splitlines()[1:]
        return [json.loads(line) for line in lines]

    def counts(self) -> NotificationCounts:
        report = LogReport.from_json(self.reader.reportLatestOffset())
        assert report.notifications is not None
        return report.notifications

    def stop(self) -> None:
        self.reader.stop()


def _names(entries: list[dict[str, Any]]) -> list[str]:
    return sorted(e["path"].rsplit("/", 1)[-1] for e in entries)


def _s3_record(bucket: str, key: str, name: str = "ObjectCreated:Put", **obj: Any) -> str:
    record = {
        "eventVersion": "2.1",
        "eventSource": "aws:s3",
        "eventTime": "9999-12-31T23:59:59.000Z",
        "eventName": name,
        "s3": {"bucket": {"name": bucket}, "object": {"key": key, **obj}},
    }
    return json.dumps({"Records": [record]})


# -- messages this source does not read -----------------------------------------------------
def test_unreadable_messages_are_counted_logged_and_deleted(
    s3: S3Notifications, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The review's poison messages (each stopped the stream with a raw AttributeError or
    TypeError on every restart), an EventBridge event of another service and plain text."""
    good = _s3_record(s3.bucket, "in/a.parquet")
    record = json.loads(good)["Records"][0]
    poison = [
        json.dumps({"Records": [{**record, "s3": {**record["s3"], "bucket": "a-string"}}]}),
        json.dumps({"Records": [{**record, "s3": {**record["s3"], "object": ["x"]}}]}),
        json.dumps(
            {"Records": [{**record, "eventName": "ObjectGone:\nWARNING forged" + "x" * 999}]}
        ),
        json.dumps({"source": "aws.ec2", "detail-type": "EC2 Instance State-change", "detail": {}}),
        "SECRET-LOOKING BODY hello",
    ]
    for body in poison:
        s3.sqs.send_message(QueueUrl=s3.queue_url, MessageBody=body)
    s3.upload(f"{s3.root}/in/a.parquet", parquet_bytes(range(3)))
    driver = Driver(s3, tmp_path / "log")
    with caplog.at_level(logging.WARNING, logger=DISCOVERY_LOG):
        assert _names(driver.trigger()) == ["a.parquet"]
    counts = driver.counts()
    assert counts.unreadable_messages == len(poison)
    lines = [r.getMessage() for r in caplog.records if r.name == DISCOVERY_LOG]
    # Rate-limited: one line for all five, naming a message id and the reason, never a body.
    assert len(lines) == 1 and "is not a storage event this source reads" in lines[0]
    assert "deleted (unreadableMessages=leave" in lines[0]
    assert not any(word in lines[0] for word in ("SECRET", "a-string", "forged", "\n"))
    driver.trigger()  # the commit of the batch that read a.parquet deletes its message
    assert s3.depth() == 0
    driver.stop()


def test_leave_keeps_unreadable_messages_for_the_dead_letter_queue(
    s3: S3Notifications,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """SQS moves a message to the dead-letter queue once received maxReceiveCount times; a
    left message is hidden at each receipt (an hour; 1 s here), so a run receives it about
    once an hour, and counts and logs it once."""
    dlq = s3.sqs.create_queue(QueueName=f"dlq{uuid.uuid4().hex[:10]}")["QueueUrl"]
    arn = s3.sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])
    policy = {"deadLetterTargetArn": arn["Attributes"]["QueueArn"], "maxReceiveCount": "1"}
    s3.sqs.set_queue_attributes(
        QueueUrl=s3.queue_url, Attributes={"RedrivePolicy": json.dumps(policy)}
    )
    s3.sqs.send_message(QueueUrl=s3.queue_url, MessageBody="not an event")
    monkeypatch.setattr(_discovery, "LEFT_HIDDEN_S", 1)
    driver = Driver(s3, tmp_path / "log", unreadableMessages="leave")
    with caplog.at_level(logging.WARNING, logger=DISCOVERY_LOG):
        assert driver.trigger() == []
    assert driver.counts().unreadable_messages == 1
    # The queue's own attributes say how often it came: what the dead-letter policy counts.
    [line] = [r.getMessage() for r in caplog.records if r.name == DISCOVERY_LOG]
    assert "(delivery 1, enqueued 20" in line and "left in the queue" in line
    assert s3.depth() == 1  # left, hidden
    driver.trigger()
    time.sleep(1.3)
    driver.trigger()  # its second receipt: SQS moves it to the dead-letter queue
    assert s3.depth() == 0
    moved = s3.sqs.receive_message(QueueUrl=dlq, WaitTimeSeconds=1).get("Messages", [])
    assert [m["Body"] for m in moved] == ["not an event"]
    assert driver.counts().unreadable_messages == 1  # once a run
    driver.stop()


def test_discovery_opens_its_queue_at_the_hook_point(s3: S3Notifications, tmp_path: Path) -> None:
    """OPEN_QUEUE is where a benchmark hands discovery a queue double: whatever is installed
    there is the queue discovery reads."""
    opened: list[tuple[str, str]] = []

    def spying(kind: str, url: str, settings: Mapping[str, str]) -> NotificationQueue:
        opened.append((kind, url))
        return open_queue(kind, url, settings)

    s3.upload(f"{s3.root}/in/a.parquet", parquet_bytes(range(3)))
    with OPEN_QUEUE.installed(spying):
        driver = Driver(s3, tmp_path / "log")
        assert _names(driver.trigger()) == ["a.parquet"]
        driver.stop()
    assert opened == [("sqs", s3.queue_url)]


def test_leave_on_azure_keeps_the_message_hidden_and_counted_once(
    azure: AzureNotifications, tmp_path: Path
) -> None:
    renamed = base64.b64encode(b'{"eventType": "Microsoft.Storage.BlobRenamed"}').decode()
    azure.queue.send_message(renamed)
    driver = Driver(azure, tmp_path / "log", unreadableMessages="leave")
    driver.trigger()
    driver.trigger()
    assert driver.counts().unreadable_messages == 1
    assert azure.depth() == 1  # still in the queue
    assert list(azure.queue.peek_messages()) == []  # hidden (for an hour)
    driver.stop()


def test_s3_events_through_eventbridge_are_read(s3: S3Notifications, tmp_path: Path) -> None:
    s3.upload(f"{s3.root}/in/a b.parquet", parquet_bytes(range(3)), notify=False)
    event = {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Object Created",
        "source": "aws.s3",
        "account": "123456789012",
        "time": "2026-11-28T00:00:00Z",
        "region": "us-east-1",
        "resources": [f"arn:aws:s3:::{s3.bucket}"],
        "detail": {
            "version": "0",
            "bucket": {"name": s3.bucket},
            "object": {"key": "in/a+b.parquet", "size": 1, "etag": "e", "sequencer": "1"},
            "reason": "PutObject",
        },
    }
    s3.sqs.send_message(QueueUrl=s3.queue_url, MessageBody=json.dumps(event))
    driver = Driver(s3, tmp_path / "log", includeExistingFiles="false")
    assert _names(driver.trigger()) == ["a b.parquet"]
    driver.stop()


# -- storage, not the message, says what a file is ------------------------------------------
def test_size_time_and_existence_come_from_storage(s3: S3Notifications, tmp_path: Path) -> None:
    """An event time in the year 9999 made every later file "older than maxFileAge" (kept in
    the source log); a size of 1e13 planned 74,506 splits; a message for a file that is not
    there failed every replay with DataLossError."""
    data = parquet_bytes(range(3))
    s3.upload(f"{s3.root}/in/a.parquet", data, notify=False)
    forged = _s3_record(s3.bucket, "in/a.parquet", size=10**13, sequencer="FF")
    s3.sqs.send_message(QueueUrl=s3.queue_url, MessageBody=forged)
    ghost = _s3_record(s3.bucket, "in/ghost.parquet", size=1)
    s3.sqs.send_message(QueueUrl=s3.queue_url, MessageBody=ghost)
    driver = Driver(s3, tmp_path / "log", includeExistingFiles="false")
    before_ms = int(time.time() * 1000) + 60_000
    [entry] = driver.trigger()
    assert entry["path"].endswith("/in/a.parquet")
    assert entry["size"] == len(data)
    assert entry["timestamp"] <= before_ms  # the object's LastModified, not year 9999
    assert driver.counts().missing_files == 1
    # A file written later is read (year 9999 would have made it older than maxFileAge).
    s3.upload(f"{s3.root}/in/b.parquet", data)
    assert _names(driver.trigger()) == ["b.parquet"]
    driver.trigger()
    assert s3.depth() == 0  # the ghost's message deleted too
    driver.stop()


def test_a_forged_deletion_cannot_drop_a_file_that_is_there(
    s3: S3Notifications, tmp_path: Path
) -> None:
    """A deletion of a file waiting for a batch has storage asked again, whatever its
    sequencer or time says; a real deletion still drops it."""
    data = parquet_bytes(range(3))
    for name in ("a", "b", "c"):
        s3.upload(f"{s3.root}/in/{name}.parquet", data)
    driver = Driver(s3, tmp_path / "log", maxFilesPerTrigger="1", includeExistingFiles="false")
    [first] = _names(driver.trigger())  # the other two wait for later batches
    forged, deleted = sorted({"a.parquet", "b.parquet", "c.parquet"} - {first})
    removal = _s3_record(s3.bucket, f"in/{forged}", name="ObjectRemoved:Delete", sequencer="F" * 40)
    s3.sqs.send_message(QueueUrl=s3.queue_url, MessageBody=removal)
    s3.delete(f"{s3.root}/in/{deleted}")  # a real deletion, notified by moto
    taken = driver.trigger() + driver.trigger() + driver.trigger()
    assert _names(taken) == [forged]
    assert driver.counts().missing_files == 1  # the one really deleted
    driver.stop()


# -- whose files: the path's account or bucket ----------------------------------------------
def test_events_of_another_storage_account_are_not_the_paths_files(
    azure: AzureNotifications, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A misrouted or forged event for the same container and blob in another account named
    a blob the stream's account does not hold: DataLossError on every restart."""
    data = parquet_bytes(range(3))
    azure.upload(f"{azure.root}/in/a.parquet", data)
    for name in ("a", "elsewhere"):
        event = azure.event(f"{azure.root}/in/{name}.parquet", size=len(data))
        event["topic"] = event["topic"].rsplit("/", 1)[0] + "/otheraccount"
        azure.publish(event)
    driver = Driver(azure, tmp_path / "log", includeExistingFiles="false")
    with caplog.at_level(logging.WARNING, logger=DISCOVERY_LOG):
        assert _names(driver.trigger()) == ["a.parquet"]  # from its own account's event
    assert driver.counts().foreign_events == 2
    assert any("'otheraccount', not the path's" in r.getMessage() for r in caplog.records)
    driver.trigger()
    assert azure.depth() == 0
    driver.stop()


@pytest.mark.parametrize(
    ("path", "options"),
    [
        ("abfs://c@acct1.dfs.core.windows.net/in", {"fs.account_key": "a2V5"}),
        ("abfs://c/in", {"fs.account_name": "acct1", "fs.account_key": "a2V5"}),
        (
            "abfs://c/in",
            {
                "fs.connection_string": "DefaultEndpointsProtocol=https;AccountName=acct1;"
                "AccountKey=a2V5;EndpointSuffix=core.windows.net"
            },
        ),
    ],
    ids=["abfs-url", "account-name", "connection-string"],
)
def test_the_paths_account_is_known_however_it_is_given(
    tmp_path: Path, path: str, options: dict[str, str]
) -> None:
    """The account events are compared with: from the URL, fs.account_name or the connection
    string (what adlfs connects to). Nothing is requested from the service here."""
    config = parse_options(
        {
            "path": path,
            "sourceLogLocation": str(tmp_path / "log"),
            "discovery": "notifications",
            "queueUrl": "https://acct1.queue.core.windows.net/q",
            **options,
        },
        Use.STREAM_READ,
    )
    discovery = NotificationDiscovery(config, SeenFiles(None, False), [], SourceLister(config))
    mine = FileEvent("created", "c/in/a.parquet", "ACCT1")
    assert discovery._foreign(mine) is None  # names are compared case-insensitively
    assert discovery._foreign(FileEvent("created", "c/in/a.parquet", "acct2")) is not None


def test_paths_that_could_climb_out_are_counted_and_logged_by_id(
    s3: S3Notifications, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A forged key with ``..`` (raw, encoded, double-encoded) names no file of the stream:
    skipped, counted in ``refusedPaths`` and logged by message id, never read."""
    s3.upload(f"{s3.root}/in/a.parquet", parquet_bytes(range(2)))
    s3.upload(f"{s3.root}/secret.parquet", parquet_bytes(range(9)))
    for key in ("in/../secret.parquet", "in/%2e%2e/secret.parquet", "in/%252e%252e/x.parquet"):
        s3.sqs.send_message(
            QueueUrl=s3.queue_url, MessageBody=_s3_record(s3.bucket, f"{s3.root}/{key}")
        )
    driver = Driver(s3, tmp_path / "log")
    with caplog.at_level(logging.WARNING, logger=DISCOVERY_LOG):
        assert _names(driver.trigger()) == ["a.parquet"]
    assert driver.counts().refused_paths == 3
    lines = [r.getMessage() for r in caplog.records if "could reach outside" in r.getMessage()]
    assert len(lines) == 1 and "secret" not in lines[0]  # rate-limited, the path never quoted
    driver.stop()


def test_events_of_another_bucket_are_not_the_paths_files(
    s3: S3Notifications, tmp_path: Path
) -> None:
    s3.upload(f"{s3.root}/in/a.parquet", parquet_bytes(range(3)), notify=False)
    other = _s3_record(f"{s3.bucket}-other", "in/a.parquet")
    s3.sqs.send_message(QueueUrl=s3.queue_url, MessageBody=other)
    driver = Driver(s3, tmp_path / "log", includeExistingFiles="false")
    assert driver.trigger() == []
    assert driver.counts().foreign_events == 1
    assert s3.depth() == 0
    driver.stop()


# -- discovery.json, read back checked --------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"[1]", "does not hold a JSON object"),
        (b'{"startedMs": 1700000000000, "lastBackfillMs": "x"}', "lastBackfillMs"),
        (b'{"startedMs": 1700000000000, "existingListed": "yes"}', "existingListed"),
        (b'{"startedMs": 253402300799000}', "not a time up to now"),
        (b'{"startedMs": 17', "is not JSON text"),
        (b"[" * 50_000, "is not JSON text"),
        (b"\xff", "is not JSON text"),
    ],
    ids=["list", "string-time", "string-flag", "year-9999", "truncated", "deep", "not-utf8"],
)
def test_a_damaged_discovery_record_is_an_error_naming_it(
    s3: S3Notifications, tmp_path: Path, content: bytes, problem: str
) -> None:
    log = tmp_path / "log"
    log.mkdir()
    (log / "discovery.json").write_bytes(content)
    driver = Driver(s3, log, backfillInterval="1s")
    with pytest.raises(CheckpointError) as caught:
        driver.trigger()
    assert problem in str(caught.value)
    assert str(log / "discovery.json") in str(caught.value)
    assert "Delete the file to start it again" in str(caught.value)
    driver.stop()
