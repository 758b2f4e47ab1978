"""discovery=notifications without Spark: storage event messages as Event Grid and S3 write
them, which notified paths a listing would read, and the options' errors."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from pysparksources._core.option_table import Use
from pysparksources.errors import OptionError
from pysparksources.files._listing import selects
from pysparksources.files._notifications import FileEvent, is_later, parse_message
from pysparksources.files.options import parse_options

# The example of MicrosoftDocs' event-schema-blob-storage.md, as Event Grid delivers it.
BLOB_CREATED = {
    "topic": "/subscriptions/id/resourceGroups/Storage/providers/Microsoft.Storage/"
    "storageAccounts/my-storage-account",
    "subject": "/blobServices/default/containers/test-container/blobs/new-file.txt",
    "eventType": "Microsoft.Storage.BlobCreated",
    "eventTime": "2017-06-26T18:41:00.9584103Z",
    "id": "831e1650-001e-001b-66ab-eeb76e069631",
    "data": {
        "api": "PutBlockList",
        "clientRequestId": "6d79dbfb-0e37-4fc4-981f-442c9ca65760",
        "requestId": "831e1650-001e-001b-66ab-eeb76e000000",
        "eTag": '"0x8D4BCC2E4835CD0"',
        "contentType": "text/plain",
        "contentLength": 524288,
        "blobType": "BlockBlob",
        "url": "https://my-storage-account.blob.core.windows.net/testcontainer/new-file.txt",
        "sequencer": "00000000000004420000000000028963",
    },
    "dataVersion": "",
    "metadataVersion": "1",
}
S3_RECORD = {
    "eventVersion": "2.1",
    "eventSource": "aws:s3",
    "awsRegion": "us-west-2",
    "eventTime": "1970-01-01T00:00:00.000Z",
    "eventName": "ObjectCreated:Put",
    "s3": {
        "s3SchemaVersion": "1.0",
        "configurationId": "c",
        "bucket": {"name": "bkt", "arn": "arn:aws:s3:::bkt"},
        "object": {"key": "in/red+flower.json", "size": 1024, "sequencer": "0055AED6DCD90281E5"},
    },
}


def _b64(document: Any) -> str:
    return base64.b64encode(json.dumps(document).encode()).decode()


def test_event_grid_in_a_storage_queue() -> None:
    expected = FileEvent(
        "created",
        "test-container/new-file.txt",
        524288,
        1498502460958,
        BLOB_CREATED["data"]["sequencer"],
    )
    assert parse_message(_b64(BLOB_CREATED)) == [expected]  # base64, as Event Grid writes it
    assert parse_message(json.dumps(BLOB_CREATED)) == [expected]  # plain JSON too
    assert parse_message(_b64([BLOB_CREATED, BLOB_CREATED])) == [expected, expected]  # arrays
    cloud = {k: v for k, v in BLOB_CREATED.items() if k not in ("eventType", "eventTime", "topic")}
    cloud.update(type="Microsoft.Storage.BlobCreated", time="2017-06-26T18:41:00.9584103Z")
    cloud.update(specversion="1.0", source="/subscriptions/id")
    assert parse_message(_b64(cloud)) == [expected]  # the CloudEvents 1.0 schema


def test_event_grid_deletions_other_types_and_adls_create_file() -> None:
    deleted = dict(BLOB_CREATED, eventType="Microsoft.Storage.BlobDeleted")
    deleted["data"] = {
        k: v for k, v in BLOB_CREATED["data"].items() if k not in ("contentLength", "eTag")
    }
    [event] = parse_message(_b64(deleted))
    assert (event.kind, event.size) == ("deleted", -1)
    renamed = dict(BLOB_CREATED, eventType="Microsoft.Storage.BlobRenamed")
    assert parse_message(_b64(renamed)) == []
    # ADLS Gen2 announces an empty file at CreateFile; its FlushWithClose carries the data.
    create_file = dict(BLOB_CREATED, data=dict(BLOB_CREATED["data"], api="CreateFile"))
    flush = dict(BLOB_CREATED, data=dict(BLOB_CREATED["data"], api="FlushWithClose"))
    assert parse_message(_b64(create_file)) == []
    assert len(parse_message(_b64(flush))) == 1
    nested = dict(BLOB_CREATED, subject="/blobServices/default/containers/c/blobs/a/b c.txt")
    assert parse_message(_b64(nested))[0].path == "c/a/b c.txt"


def test_s3_records_sns_envelopes_and_test_events() -> None:
    [event] = parse_message(json.dumps({"Records": [S3_RECORD]}))
    assert event == FileEvent("created", "bkt/in/red flower.json", 1024, 0, "0055AED6DCD90281E5")
    # moto encodes "/" too (quote_plus); unquote_plus reads both.
    moto = json.loads(json.dumps(S3_RECORD))
    moto["s3"]["object"] = {"key": "dir%2Fred+flower%2Bx.json", "size": 3, "eTag": "e"}
    assert parse_message(json.dumps({"Records": [moto]}))[0].path == "bkt/dir/red flower+x.json"
    sns = {"Type": "Notification", "Message": json.dumps({"Records": [S3_RECORD]})}
    assert parse_message(json.dumps(sns)) == [event]
    test_event = {"Service": "Amazon S3", "Event": "s3:TestEvent", "Time": "t", "Bucket": "bkt"}
    assert parse_message(json.dumps(test_event)) == []
    removed = dict(S3_RECORD, eventName="ObjectRemoved:Delete")
    assert parse_message(json.dumps({"Records": [removed]}))[0].kind == "deleted"
    restore = dict(S3_RECORD, eventName="ObjectRestore:Completed")
    assert parse_message(json.dumps({"Records": [restore]})) == []


@pytest.mark.parametrize(
    "body",
    [
        "",
        "not base64 !",
        _b64("just a string"),
        "{",
        json.dumps({"Records": "x"}),
        _b64(dict(BLOB_CREATED, subject="/elsewhere")),
        _b64(dict(BLOB_CREATED, data=None)),
    ],
)
def test_a_body_that_is_no_storage_event_is_refused(body: str) -> None:
    with pytest.raises(ValueError):
        parse_message(body)


def test_ordering_by_sequencer_then_time() -> None:
    def event(sequencer: str | None, time_ms: int) -> FileEvent:
        return FileEvent("created", "p", 1, time_ms, sequencer)

    assert is_later(event("0A", 0), event("9", 5))  # hexadecimal, of different lengths
    assert not is_later(event("9", 5), event("0A", 0))
    assert is_later(event(None, 2), event("1", 1))  # no sequencer on one side: the times
    assert not is_later(event(None, 1), event(None, 1))  # a tie is not later


@pytest.mark.parametrize(
    ("path", "pattern", "name_filter", "recursive", "read"),
    [
        ("c/in/f.parquet", None, None, False, True),
        ("c/in/sub/f.parquet", None, None, False, False),  # a plain subfolder: not listed
        ("c/in/sub/f.parquet", None, None, True, True),
        ("c/in/day=1/f.parquet", None, None, False, True),  # partition folders are
        ("c/in/_tmp/f.parquet", None, None, True, False),  # hidden folders never
        ("c/in/.f.parquet", None, None, False, False),
        ("c/in/f.txt", None, "*.parquet", False, False),
        ("c/inbox/f.parquet", None, None, False, False),
        ("c/other/f.parquet", None, None, False, False),
        ("c/in/a/f.parquet", "c/in/*", None, False, True),  # a folder the glob matches
        ("c/in/f.parquet", "c/in/*.parquet", None, False, True),  # the file it matches
        ("c/in/f.csv", "c/in/*.parquet", None, False, False),
        ("c/in/b/f.parquet", "c/in/{a,b}", None, False, True),
        ("c/in/z/f.parquet", "c/in/{a,b}", None, False, False),
    ],
)
def test_which_notified_files_a_listing_would_read(
    path: str, pattern: str | None, name_filter: str | None, recursive: bool, read: bool
) -> None:
    assert selects(path, "c/in", pattern, name_filter, recursive) is read


BASE = {
    "path": "abfs://c/in",
    "sourceLogLocation": "/tmp/unused-log",
    "discovery": "notifications",
    "queueUrl": "https://acct.queue.core.windows.net/q?sv=2024&sig=SECRETSIG",
    "fs.account_name": "acct",
}


@pytest.mark.parametrize(
    ("change", "option"),
    [
        ({"queueUrl": None}, "queueUrl"),
        ({"queueUrl": "ftp://q"}, "queueUrl"),
        ({"queue.aws_secret_access_key": "x"}, "queue.aws_secret_access_key"),
        ({"path": "/tmp/in"}, "discovery"),
        ({"discovery": "listing"}, "queueUrl"),
        ({"discovery": "listing", "queueUrl": None, "backfillInterval": "1m"}, "backfillInterval"),
        ({"discovery": "listing", "queueUrl": None, "queue.sas_token": "x"}, "queue.sas_token"),
        ({"backfillInterval": "0s"}, "backfillInterval"),
        ({"queueVisibilityTimeout": "soon"}, "queueVisibilityTimeout"),
    ],
)
def test_bad_options_fail_at_start_naming_the_option(change: dict[str, Any], option: str) -> None:
    options = {k: v for k, v in {**BASE, **change}.items() if v is not None}
    with pytest.raises(OptionError) as caught:
        parse_options(options, Use.STREAM_READ)
    assert caught.value.option == option
    assert "SECRETSIG" not in str(caught.value)


def test_options_reach_the_config_and_never_its_repr() -> None:
    given = {
        **BASE,
        "queue.sas_token": "SECRETSAS",
        "backfillInterval": "10m",
        "queueVisibilityTimeout": "1500ms",
        "includeExistingFiles": "false",
    }
    notifications = parse_options(given, Use.STREAM_READ).notifications
    assert notifications is not None
    assert (notifications.kind, notifications.visibility_timeout_s) == ("azure", 2)
    assert (notifications.backfill_interval_s, notifications.include_existing) == (600, False)
    assert "SECRET" not in repr(parse_options(given, Use.STREAM_READ))
    sqs = {
        "path": "s3://b/in",
        "sourceLogLocation": "/tmp/x",
        "discovery": "notifications",
        "queueUrl": "https://sqs.eu-west-1.amazonaws.com/1/q",
    }
    s3 = parse_options(sqs, Use.STREAM_READ).notifications
    assert s3 is not None and s3.kind == "sqs"
    listing = {"path": "/tmp", "sourceLogLocation": "/tmp/x"}
    assert parse_options(listing, Use.STREAM_READ).notifications is None
    with pytest.raises(OptionError, match=r"applies only to spark\.readStream"):
        parse_options({"path": "abfs://c/in", "discovery": "notifications"}, Use.BATCH_READ)
