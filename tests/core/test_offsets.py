"""Each source's typed offsets (``<source>/offsets.py``): the bytes of today's offsets never
change, every kind knows only its own offsets, and the lag listener finds a source's lag
through ``OFFSET_KINDS`` alone. No JVM: the listener is fed progress dicts as Spark sends them.

The golden texts below are what the readers wrote before the offsets were typed (each printed
by that code: rate's planners, pyeventhub's ``_offset`` and ``reportLatestOffset``, pyfile's
offsets and report); Spark compares offsets as text, so a changed byte would make a restarted
query see new data.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timezone
from typing import Any

import pytest

import pysparksources
from pysparksources._core.compat import ReadAllAvailable
from pysparksources._core.lag import CountLag, PartitionedLag, PartitionPositions
from pysparksources._core.offsets import SourceOffset
from pysparksources._core.option_table import Use
from pysparksources.errors import OffsetError
from pysparksources.eventhubs.offsets import HubOffset, HubReport
from pysparksources.eventhubs.options import parse_options as eventhubs_parse
from pysparksources.eventhubs.reader import EventHubStreamReader
from pysparksources.files.offsets import LogOffset, LogReport, NotificationCounts
from pysparksources.monitoring import OFFSET_KINDS, LagListener
from pysparksources.rate.offsets import BatchOffset, TimeOffset
from pysparksources.rate.options import parse_options as rate_parse
from pysparksources.rate.reader import RateStreamReader

LOG_ID = "5c0f9a3e1b2d4c6e8f0a1b2c3d4e5f60"
GOLDEN: list[tuple[type[SourceOffset], str]] = [
    (TimeOffset, '{"createdMs": 1795888736815, "second": 6, "value": 30}'),
    (BatchOffset, '{"offset": 10, "timestamp": 2000}'),
    (HubOffset, '{"orders": {"0": 1842, "1": 0, "10": 5, "2": 9}}'),
    (
        HubReport,
        '{"@lastEnqueuedTime": {"0": "2026-11-23T10:00:00.123Z", "10": "2026-11-23T11:00:00.000Z"}'
        ', "orders": {"0": 1842, "1": 0, "10": 5}}',
    ),
    (LogOffset, '{"logOffset": -1}'),
    (LogOffset, '{"logOffset": 7}'),  # a log written before logs had ids
    (LogOffset, f'{{"logId": "{LOG_ID}", "logOffset": 3}}'),
    (LogReport, f'{{"logId": "{LOG_ID}", "logOffset": 3}}'),
    (
        LogReport,
        '{"@notifications": {"filesWaiting": 2, "foreignEvents": 0, "missingFiles": 0, '
        '"refusedPaths": 0, "unreadableMessages": 3}, "logId": "x", "logOffset": 4}',
    ),
]


@pytest.mark.parametrize(
    ("kind", "text"), GOLDEN, ids=[f"{k.__name__}-{i}" for i, (k, _) in enumerate(GOLDEN)]
)
def test_todays_offsets_round_trip_byte_identical(kind: type[SourceOffset], text: str) -> None:
    from_text = kind.from_json(text)
    assert from_text.to_json() == text
    # What Spark hands a reader back: the dict its JSON parser made.
    from_dict = kind.from_json(json.loads(text))
    assert from_dict == from_text
    assert json.dumps(from_dict.to_dict()) == text


def test_the_readers_write_the_golden_bytes() -> None:
    clock = {"now": 1795888736815}
    time_reader = RateStreamReader(
        rate_parse({"rowsPerSecond": "5"}, Use.STREAM_READ), clock=lambda: clock["now"]
    )
    start = time_reader.initialOffset()
    clock["now"] += 6500
    end = time_reader.latestOffset(start, ReadAllAvailable())
    assert json.dumps(end) == GOLDEN[0][1]

    batch_reader = RateStreamReader(
        rate_parse({"rowsPerBatch": "5", "advanceMillisPerBatch": "1000"}, Use.STREAM_READ)
    )
    offset = batch_reader.initialOffset()
    for _ in range(2):
        offset = batch_reader.latestOffset(offset, ReadAllAvailable())
    assert json.dumps(offset) == GOLDEN[1][1]

    config = eventhubs_parse(
        {
            "connectionString": "Endpoint=sb://h/;SharedAccessKeyName=n;SharedAccessKey=k;"
            "EntityPath=orders"
        },
        Use.STREAM_READ,
        None,
    )
    assert HubOffset("orders", {"0": 1842, "2": 9, "10": 5, "1": 0}).to_json() == GOLDEN[2][1]
    reader = EventHubStreamReader(config)
    # What latestOffset keeps for the report (it needs a hub to fill them for real).
    reader._latest = {"0": 1842, "1": 0, "10": 5}
    reader._enqueued = {
        "0": datetime(2026, 11, 23, 10, 0, 0, 123456, tzinfo=timezone.utc),
        "1": None,  # an empty partition: no time
        "10": datetime(2026, 11, 23, 11, 0, tzinfo=timezone.utc),
    }
    assert json.dumps(reader.reportLatestOffset()) == GOLDEN[3][1]

    counts = NotificationCounts(unreadable_messages=3, files_waiting=2)
    assert LogReport(LogOffset(4, "x"), counts).to_json() == GOLDEN[8][1]
    assert LogReport(LogOffset(3, LOG_ID)).to_json() == GOLDEN[6][1]
    assert LogOffset(-1).to_json() == GOLDEN[4][1]


@pytest.mark.parametrize(
    ("kind", "text"), GOLDEN, ids=[f"{k.__name__}-{i}" for i, (k, _) in enumerate(GOLDEN)]
)
def test_no_other_sources_type_reads_an_offset(kind: type[SourceOffset], text: str) -> None:
    for other in OFFSET_KINDS:
        if kind in other.offsets:
            continue
        for foreign in other.offsets:
            with pytest.raises(OffsetError, match="<checkpointLocation>/offsets/<batchId>"):
                foreign.from_json(text)


@pytest.mark.parametrize(
    ("kind", "value", "problem"),
    [
        (TimeOffset, {"createdMs": 1, "second": 0}, "expected keys createdMs, second, value"),
        (BatchOffset, {"offset": -1, "timestamp": 0}, "offset=-1"),
        (HubOffset, {"a": {"0": 1}, "b": {"0": 1}}, "not an offset of one hub"),
        (HubOffset, {"orders": {"zero": 1}}, "not a partition id"),
        (HubReport, {"orders": {"0": 1}}, "no @lastEnqueuedTime"),
        (HubReport, {"orders": {"0": 1}, "@lastEnqueuedTime": {"0": "noon"}}, "'noon'"),
        (
            HubReport,
            {"orders": {"0": 1}, "@lastEnqueuedTime": {"1": "2026-01-01T00:00:00Z"}},
            "'1'",
        ),
        (LogOffset, {"logId": 5, "logOffset": 1}, "logId=5, not a string"),
        (LogReport, {"logOffset": 1, "@notifications": {"filesWaiting": "2"}}, "notification"),
        (LogOffset, "{not json", "is not JSON"),
    ],
)
def test_a_foreign_or_edited_offset_names_the_checkpoint(
    kind: type[SourceOffset], value: Any, problem: str
) -> None:
    with pytest.raises(OffsetError) as caught:
        kind.from_json(value)
    assert problem in str(caught.value)
    assert "<checkpointLocation>/offsets/<batchId>" in str(caught.value)


def test_every_source_has_one_offset_kind() -> None:
    names = [kind.source for kind in OFFSET_KINDS]
    assert sorted(names) == sorted(pysparksources.source_names())
    types = [t for kind in OFFSET_KINDS for t in kind.offsets]
    assert len(types) == len(set(types))


def test_each_kind_states_its_own_lag_and_only_its_own() -> None:
    time_end = TimeOffset(1000, 4, 20).to_dict()
    time_latest = json.dumps(TimeOffset(1000, 6, 30).to_dict())  # Spark Connect sends text
    hub_end = {"orders": {"0": 5, "1": 3}}
    hub_latest = HubReport(
        HubOffset("orders", {"0": 9, "1": 3, "2": 4}),
        {"0": datetime(2026, 1, 1, tzinfo=timezone.utc)},
    ).to_dict()
    waiting = LogReport(LogOffset(2, "x"), NotificationCounts(files_waiting=7)).to_dict()
    expected = {
        "pyrate": ((time_end, time_latest), CountLag("pyrate", "rows", 10)),
        "pyfile": (({"logId": "x", "logOffset": 2}, waiting), CountLag("pyfile", "files", 7)),
        "pyeventhub": (
            (hub_end, hub_latest),
            PartitionedLag(
                "pyeventhub",
                "events",
                {"hub": "orders"},
                {
                    "0": PartitionPositions(5, 9, datetime(2026, 1, 1, tzinfo=timezone.utc)),
                    "1": PartitionPositions(3, 3, None),
                    "2": PartitionPositions(4, 4, None),  # added to the hub: read from 4 on
                },
            ),
        ),
    }
    for kind in OFFSET_KINDS:
        for source, (pair, lag) in expected.items():
            assert kind.lag(*pair) == (lag if source == kind.source else None), (kind, source)
    # Listing a folder, pyfile states no lag; Spark's own sources are nobody's.
    listing = ({"logOffset": 1}, {"logId": "x", "logOffset": 1})
    kafka = ({"topic": {"0": 5}}, {"topic": {"0": 9}})
    for kind in OFFSET_KINDS:
        assert kind.lag(*listing) is None and kind.lag(*kafka) is None
        assert kind.lag(None, None) is None and kind.lag("null", "{bad") is None


def test_the_listener_reads_every_source_of_a_progress(caplog: pytest.LogCaptureFixture) -> None:
    times = {"0": "2026-01-01T00:00:10.000Z"}
    progress = {
        "id": "q1",
        "name": "orders",
        "batchId": 3,
        "timestamp": "2026-01-01T00:00:11.000Z",
        "sources": [
            {
                "endOffset": '{"orders": {"0": 5}}',  # Spark Connect: JSON text
                "latestOffset": json.dumps({"orders": {"0": 9}, "@lastEnqueuedTime": times}),
            },
            {
                "endOffset": {"offset": 10, "timestamp": 0},
                "latestOffset": {"offset": 25, "timestamp": 0},
            },
            {
                "endOffset": {"logId": "x", "logOffset": 1},
                "latestOffset": LogReport(
                    LogOffset(1, "x"), NotificationCounts(files_waiting=4)
                ).to_dict(),
            },
            {"endOffset": {"logOffset": 1}, "latestOffset": {"logOffset": 1}},  # listing: none
            {"endOffset": {"topic": {"0": 1}}, "latestOffset": {"topic": {"0": 2}}},  # Kafka
        ],
    }
    listener = LagListener()
    caplog.set_level(logging.INFO, logger="pysparksources.monitoring")
    entry = listener.record(progress)
    assert entry is not None
    assert entry["sources"] == [
        {
            "index": 0,
            "format": "pyeventhub",
            "hub": "orders",
            "eventsBehind": 4,
            "secondsBehind": None,  # the listener never saw the hub before event 5 arrived
            "secondsBehindMax": None,
            "partitions": {
                "0": {
                    "eventsBehind": 4,
                    "secondsBehind": None,
                    "secondsBehindMax": None,
                    "newestEnqueuedTime": "2026-01-01T00:00:10+00:00",
                }
            },
        },
        {"index": 1, "format": "pyrate", "rowsBehind": 15},
        {"index": 2, "format": "pyfile", "filesBehind": 4},
    ]
    assert listener.lag() == {"q1": entry}
    assert caplog.records[-1].getMessage() == (
        "lag of query orders batch 3: pyeventhub orders 4 events behind (0: 4), seconds behind "
        "the newest event unknown; pyrate 15 rows behind; pyfile 4 files behind"
    )
    assert listener.record({"id": "q2", "sources": progress["sources"][3:]}) is None
