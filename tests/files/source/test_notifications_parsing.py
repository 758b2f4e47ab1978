"""discovery=notifications without Spark: storage event messages as Event Grid and S3 write
them, which notified paths a listing would read, and the options' errors."""

from __future__ import annotations

import base64
import json
import logging
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pysparksources._core.option_table import Use
from pysparksources.errors import OptionError
from pysparksources.files.options import parse_options
from pysparksources.files.source.notifications.events import (
    FileEvent,
    NotAStorageEvent,
    parse_message,
    shown,
)
from pysparksources.files.source.notifications.throttled_log import ThrottledLog
from pysparksources.files.storage.folder_listing import selects

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


def _bridge(kind: str = "Object Created", **detail: Any) -> dict[str, Any]:
    """An S3 event as EventBridge delivers it (the AWS S3 user guide's example)."""
    return {
        "version": "0",
        "id": "17793124-05d4-b198-2fde-7ededc63b103",
        "detail-type": kind,
        "source": "aws.s3",
        "account": "111122223333",
        "time": "2021-11-12T00:00:00Z",
        "region": "ca-central-1",
        "resources": ["arn:aws:s3:::bkt"],
        "detail": {
            "version": "0",
            "bucket": {"name": "bkt"},
            "object": {"key": "in/red+flower.json", "size": 5, "sequencer": "617f08299329d189"},
            "request-id": "N4N7GDK58NMKJ12R",
            "requester": "123456789012",
            "reason": "PutObject",
            **detail,
        },
    }


def test_event_grid_in_a_storage_queue() -> None:
    expected = FileEvent("created", "test-container/new-file.txt", "my-storage-account")
    assert parse_message(_b64(BLOB_CREATED)) == [expected]  # base64, as Event Grid writes it
    assert parse_message(json.dumps(BLOB_CREATED)) == [expected]  # plain JSON too
    assert parse_message(json.dumps(BLOB_CREATED).encode()) == [expected]  # bytes too
    assert parse_message(_b64([BLOB_CREATED, BLOB_CREATED])) == [expected, expected]  # arrays
    cloud = {k: v for k, v in BLOB_CREATED.items() if k not in ("eventType", "eventTime", "topic")}
    cloud.update(type="Microsoft.Storage.BlobCreated", time="2017-06-26T18:41:00.9584103Z")
    cloud.update(specversion="1.0", source=BLOB_CREATED["topic"])
    assert parse_message(_b64(cloud)) == [expected]  # the CloudEvents 1.0 schema


def test_event_grid_deletions_other_types_and_adls_create_file() -> None:
    deleted = dict(BLOB_CREATED, eventType="Microsoft.Storage.BlobDeleted")
    deleted["data"] = {
        k: v for k, v in BLOB_CREATED["data"].items() if k not in ("contentLength", "eTag")
    }
    [event] = parse_message(_b64(deleted))
    assert event.kind == "deleted"
    # A tier change never makes a file appear: nothing, and no rejection.
    tier = dict(BLOB_CREATED, eventType="Microsoft.Storage.BlobTierChanged")
    assert parse_message(_b64(tier)) == []
    # ADLS Gen2 announces an empty file at CreateFile; its FlushWithClose carries the data.
    create_file = dict(BLOB_CREATED, data=dict(BLOB_CREATED["data"], api="CreateFile"))
    flush = dict(BLOB_CREATED, data=dict(BLOB_CREATED["data"], api="FlushWithClose"))
    assert parse_message(_b64(create_file)) == []
    assert len(parse_message(_b64(flush))) == 1
    nested = dict(BLOB_CREATED, subject="/blobServices/default/containers/c/blobs/a/b c.txt")
    assert parse_message(_b64(nested))[0].path == "c/a/b c.txt"


def test_s3_records_sns_envelopes_and_test_events() -> None:
    [event] = parse_message(json.dumps({"Records": [S3_RECORD]}))
    assert event == FileEvent("created", "bkt/in/red flower.json")
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


def test_s3_events_through_eventbridge() -> None:
    created = FileEvent("created", "bkt/in/red flower.json")
    assert parse_message(json.dumps(_bridge())) == [created]
    sns = {"Type": "Notification", "Message": json.dumps(_bridge())}
    assert parse_message(json.dumps(sns)) == [created]
    deleted = _bridge("Object Deleted", reason="DeleteObject", **{"deletion-type": "x"})
    assert parse_message(json.dumps(deleted)) == [FileEvent("deleted", "bkt/in/red flower.json")]
    assert parse_message(json.dumps(_bridge("Object Restore Completed"))) == []
    with pytest.raises(NotAStorageEvent, match="not from S3"):
        parse_message(json.dumps(dict(_bridge(), source="aws.ec2")))
    with pytest.raises(NotAStorageEvent, match="'Object Renamed'"):
        parse_message(json.dumps(_bridge("Object Renamed")))


def _with(document: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    """A deep copy of ``document`` with the field at ``path`` set to ``value``."""
    copy: Any = json.loads(json.dumps(document))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    result: dict[str, Any] = copy
    return result


RECORDS = {"Records": [S3_RECORD]}


@pytest.mark.parametrize(
    "body",
    [
        "",
        "not base64 !",
        "éé",  # not ASCII: base64 refuses it with a plain ValueError
        b"\xff\xfe",
        _b64("just a string"),
        "{",
        "[]",
        json.dumps({"Records": "x"}),
        json.dumps({"Records": []}),
        "[" * 100_000,
        _b64(dict(BLOB_CREATED, subject="/elsewhere")),
        _b64(dict(BLOB_CREATED, data=None)),
        _b64(dict(BLOB_CREATED, eventType="Microsoft.Storage.BlobRenamed")),
        _b64(dict(BLOB_CREATED, eventType="Microsoft.Resources.ResourceWriteSuccess")),
        _b64({"hello": "world"}),
        _b64({k: v for k, v in BLOB_CREATED.items() if k != "topic"}),
        _b64(dict(BLOB_CREATED, topic="/subscriptions/x/resourceGroups/rg")),
        _b64(_with(BLOB_CREATED, ("subject",), "/blobServices/default/containers/c/blobs/\ud800")),
        # The review's examples: each raised AttributeError or TypeError out of the parser.
        json.dumps(_with(RECORDS, ("Records", 0, "s3", "bucket"), "bkt")),
        json.dumps(_with(RECORDS, ("Records", 0, "s3", "object"), "in/a.json")),
        _b64(_with(BLOB_CREATED, ("data", "api"), ["CreateFile"])),
        json.dumps(_with(RECORDS, ("Records", 0, "eventName"), None)),
        json.dumps(_with(RECORDS, ("Records", 0, "s3", "object", "key"), "")),
        json.dumps(_with(RECORDS, ("Records", 0, "eventName"), "ObjectRenamed:x")),
        json.dumps(_with(_bridge(), ("detail", "object"), None)),
    ],
    ids=lambda body: f"{len(body)}-chars",
)
def test_a_body_that_is_no_storage_event_is_refused(body: str | bytes) -> None:
    with pytest.raises(NotAStorageEvent):
        parse_message(body)


def test_text_from_a_message_is_bounded_and_printable_in_the_reason() -> None:
    name = "ObjectWhatever:" + "x" * 5000 + "\nWARNING forged line\x1b[31m"
    with pytest.raises(NotAStorageEvent) as caught:
        parse_message(json.dumps(_with(RECORDS, ("Records", 0, "eventName"), name)))
    reason = str(caught.value)
    assert len(reason) < 150 and "\n" not in reason and "\x1b" not in reason
    assert shown("a\nb\u00e9" + "z" * 100) == "a?b?" + "z" * 53 + "..."


# Hypothesis: real messages with one field replaced by anything, and anything at all.
SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
JSONISH = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)
FIELDS: list[tuple[Any, tuple[str | int, ...]]] = [
    *((BLOB_CREATED, (k,)) for k in ("subject", "eventType", "topic", "data")),
    *((BLOB_CREATED, ("data", k)) for k in ("api", "contentLength")),
    *((RECORDS, ("Records", 0, k)) for k in ("eventName", "s3")),
    *((RECORDS, ("Records", 0, "s3", k)) for k in ("bucket", "object")),
    *((RECORDS, ("Records", 0, "s3", "object", k)) for k in ("key", "size")),
    *((RECORDS, ("Records", 0, "s3", "bucket", "name")),),
    *((_bridge(), (k,)) for k in ("source", "detail-type", "detail")),
    *((_bridge(), ("detail", k)) for k in ("bucket", "object")),
]


@st.composite
def bodies(draw: st.DrawFn) -> str | bytes:
    choice = draw(st.integers(0, 3))
    if choice == 0:
        document, path = draw(st.sampled_from(FIELDS))
        mutated = _with(document, path, draw(JSONISH))
        return _b64(mutated) if draw(st.booleans()) else json.dumps(mutated)
    if choice == 1:
        return json.dumps(draw(JSONISH))
    if choice == 2:
        return draw(st.binary(max_size=64))
    return draw(st.text(max_size=64))


@given(bodies())
@example(json.dumps(_with(RECORDS, ("Records", 0, "s3", "bucket"), "bkt")))
@example(_b64(_with(BLOB_CREATED, ("data", "api"), ["CreateFile"])))
def test_fuzz_a_message_gives_events_or_the_one_rejection(body: str | bytes) -> None:
    try:
        events = parse_message(body)
    except NotAStorageEvent as error:
        reason = str(error)
        assert len(reason) < 200 and all(" " <= c <= "~" for c in reason), reason
        return
    for event in events:
        assert event.kind in ("created", "deleted")
        assert isinstance(event.path, str) and "/" in event.path
        event.path.encode("utf-8")  # never a lone surrogate
        assert event.account is None or isinstance(event.account, str)


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


def test_warnings_about_messages_are_rate_limited() -> None:
    """A queue full of one bad kind gives one line a minute per kind, saying what it left out."""
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    logger = logging.getLogger("test.throttled")
    logger.addHandler(Collect())
    now = [0.0]
    warnings = ThrottledLog(logger, interval_s=60, clock=lambda: now[0])
    assert warnings.warning("bad", "message %s", "m1")
    assert not warnings.warning("bad", "message %s", "m2")
    assert warnings.warning("other", "other %s", "o1")  # each kind has its own budget
    now[0] = 61.0
    assert warnings.warning("bad", "message %s", "m3")
    assert lines == [
        "message m1",
        "other o1",
        "message m3 (and 1 more like it in the last 61 s, not logged)",
    ]
