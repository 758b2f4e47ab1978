"""Fast pure-Python checks: admission split, position parsing, slot hashing, option parsing."""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from pysparksources._core.option_table import Use
from pysparksources.errors import OptionError
from pysparksources.eventhubs._admission import TriggerGate, next_end, split_limit
from pysparksources.eventhubs._option_table import TABLE
from pysparksources.eventhubs._positions import (
    END,
    START,
    Position,
    parse_position,
    parse_positions,
)
from pysparksources.eventhubs.config import SourceConfig
from pysparksources.eventhubs.options import parse_options
from pysparksources.eventhubs.planning import (
    EventHubPartition,
    java_string_hash,
    pack_tasks,
    plan_partitions,
    slot_key,
    split_counts,
)
from support.paths import DOCS

CONN = "Endpoint=sb://127.0.0.1:5672;SharedAccessKeyName=k;SharedAccessKey=SECRETKEY42;EntityPath=h"


def config(**options: str) -> SourceConfig:
    return parse_options({"connectionString": CONN, **options}, Use.STREAM_READ)


def test_split_proportional_floor_and_small_partition_not_starved() -> None:
    assert split_limit(100, {"0": 1000, "1": 1000, "2": 1}) == {"0": 49, "1": 49, "2": 1}


def test_split_caps_at_backlog_and_passes_everything_under_limit() -> None:
    assert split_limit(10, {"0": 3, "1": 4}) == {"0": 3, "1": 4}
    assert split_limit(None, {"0": 7, "1": 0}) == {"0": 7, "1": 0}
    assert split_limit(5, {"0": 0, "1": 100}) == {"0": 0, "1": 5}


def test_split_is_exact_for_huge_backlogs() -> None:
    big = 2**62
    assert split_limit(3, {"0": big, "1": big, "2": big}) == {"0": 1, "1": 1, "2": 1}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("start", START),
        ("earliest", START),
        ("-1", START),
        ('{"offset": "-1"}', START),
        ("@latest", END),
        ("end", END),
        ('{"offset": "@latest"}', END),
        ('{"seqNo": 5}', Position("seqNo", seq_no=5)),
        ('{"seqNo": 5, "isInclusive": false}', Position("seqNo", seq_no=5, inclusive=False)),
        ('{"offset": "1024"}', Position("offset", offset="1024")),
        (
            '{"enqueuedTime": "2026-01-01T00:00:00Z"}',
            Position("enqueuedTime", enqueued_time=datetime(2026, 1, 1, tzinfo=timezone.utc)),
        ),
        # The Scala connector serialized every field, unused ones null or -1.
        (
            '{"offset": null, "seqNo": 7, "enqueuedTime": null, "isInclusive": true}',
            Position("seqNo", seq_no=7),
        ),
    ],
)
def test_parse_position(text: str, expected: Position) -> None:
    assert parse_position(text) == expected


def test_resolve_simple_positions() -> None:
    assert START.resolve_simple(3, 10) == 3
    assert END.resolve_simple(3, 10) == 10
    assert Position("seqNo", seq_no=4, inclusive=False).resolve_simple(0, 10) == 5


def test_parse_positions_accepts_scala_keys() -> None:
    parsed = parse_positions(
        '{"0": {"seqNo": 2}, "{\\"ehName\\": \\"h\\", \\"partitionId\\": 1}": "end"}'
    )
    assert parsed == {"0": Position("seqNo", seq_no=2), "1": END}


def test_java_string_hash_matches_java() -> None:
    # Values from java.lang.String.hashCode.
    assert java_string_hash("") == 0
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("abc") == 96354
    assert java_string_hash("polygenelubricants") == -2147483648


def test_balanced_hash_spreads_consecutive_partitions_round_robin() -> None:
    slots = [slot_key("BalancedHash", "hub", str(p), 4) for p in range(8)]
    assert sorted(slots[:4]) == [0, 1, 2, 3]
    assert slots[:4] == slots[4:]
    h = java_string_hash("hub")
    assert slots[0] == h % 4


def test_plan_splits_large_ranges_and_orders_by_slot() -> None:
    cfg = config(maxEventsPerPartition="4", partitionPreferredLocationStrategy="BalancedHash")
    planned = plan_partitions(cfg, {"0": (0, 10), "1": (5, 5), "2": (3, 4)}, 3)
    assert sorted((p.partition_id, p.start, p.until) for p in planned) == [
        ("0", 0, 3),
        ("0", 3, 6),
        ("0", 6, 10),
        ("2", 3, 4),
    ]
    assert [p.slot for p in planned] == sorted(p.slot for p in planned)


def test_scala_aliases_and_iso_durations() -> None:
    cfg = parse_options(
        {
            "eventhubs.connectionString": CONN,
            "eventhubs.consumerGroup": "cg1",
            "eventhubs.receiverTimeout": "PT30S",
            "eventhubs.startingPosition": (
                '{"offset": "-1", "seqNo": -1, "enqueuedTime": null, "isInclusive": true}'
            ),
        },
        Use.STREAM_READ,
    )
    assert cfg.consumer_group == "cg1"
    assert cfg.receiver_timeout_s == 30
    assert cfg.starting == START


@pytest.mark.parametrize(
    ("options", "option"),
    [
        ({"startingPosition": "yesterday"}, "startingPosition"),
        ({"startingPosition": '{"seqNo": -5}'}, "startingPosition"),
        ({"startingPosition": '{"seqNo": 1, "bogus": 2}'}, "startingPosition"),
        ({"startingPositions": '{"x": "start"}'}, "startingPositions"),
        ({"startingPositions": "[1]"}, "startingPositions"),
        ({"endingPosition": "end"}, "endingPosition"),
        ({"maxEventsPerTrigger": "0"}, "maxEventsPerTrigger"),
        ({"maxEventsPerTrigger": "lots"}, "maxEventsPerTrigger"),
        ({"maxEventsPerPartition": "-1"}, "maxEventsPerPartition"),
        ({"minPartitions": "0"}, "minPartitions"),
        ({"minEventsPerTrigger": "0"}, "minEventsPerTrigger"),
        ({"minEventsPerTrigger": "9", "maxEventsPerTrigger": "8"}, "minEventsPerTrigger"),
        ({"maxTriggerDelay": "5s"}, "maxTriggerDelay"),
        ({"minEventsPerTrigger": "5", "maxTriggerDelay": "soon"}, "maxTriggerDelay"),
        ({"partitions": ""}, "partitions"),
        ({"partitions": "0,x"}, "partitions"),
        ({"partitions": "1,1"}, "partitions"),
        ({"partitions": "-1"}, "partitions"),
        ({"failOnDataLoss": "maybe"}, "failOnDataLoss"),
        ({"receiverTimeout": "soon"}, "receiverTimeout"),
        ({"operationTimeout": "0"}, "operationTimeout"),
        ({"prefetchCount": "0"}, "prefetchCount"),
        ({"receiveBatchSize": "x"}, "receiveBatchSize"),
        ({"useExclusiveReceiver": "2"}, "useExclusiveReceiver"),
        ({"partitionPreferredLocationStrategy": "Random"}, "partitionPreferredLocationStrategy"),
        ({"receiverIdleTimeout": "-"}, "receiverIdleTimeout"),
        ({"receiverBufferBytes": "0"}, "receiverBufferBytes"),
        ({"receiverBufferBytes": "64x"}, "receiverBufferBytes"),
        ({"partitionInfoCacheInterval": "x"}, "partitionInfoCacheInterval"),
        ({"consumerGroup": " "}, "consumerGroup"),
        ({"maxEventPerTrigger": "5"}, "maxeventpertrigger"),
        ({"eventhubs.consumerGroup": "a", "consumerGroup": "b"}, "consumerGroup"),
    ],
)
def test_bad_option_values(options: dict[str, str], option: str) -> None:
    with pytest.raises(OptionError) as err:
        config(**options)
    assert err.value.option.lower() == option.lower()
    assert "SECRETKEY42" not in str(err.value)


def test_receiver_buffer_takes_a_size() -> None:
    assert config(receiverBufferBytes="64m").buffer_bytes == 64 * 1024 * 1024
    assert config(receiverBufferBytes="1000").buffer_bytes == 1000


def test_secret_never_in_errors_or_repr() -> None:
    with pytest.raises(OptionError) as err:
        parse_options({"connectionString": "SharedAccessKey=SECRETKEY42"}, Use.STREAM_READ)
    assert "SECRETKEY42" not in str(err.value)
    with pytest.raises(OptionError) as err2:
        parse_options(
            {"connectionString": CONN, "eventhubs.connectionString": CONN}, Use.STREAM_READ
        )
    assert "SECRETKEY42" not in str(err2.value)
    assert "SECRETKEY42" not in repr(config())


def test_next_end_reads_partitions_missing_from_the_start_from_their_beginning() -> None:
    # The reader enters an added partition in the offsets first (test_ehsource_grow.py); the
    # planner's own rule for a start that lacks one stays as it was.
    end = next_end({"0": 5, "1": 7}, {"0": 9, "1": 7, "2": 4}, {"0": 0, "1": 0, "2": 1}, None)
    assert end == {"0": 9, "1": 7, "2": 4}
    limited = next_end({"0": 5}, {"0": 105, "1": 3}, {"1": 0}, 10)
    assert limited == {"0": 14, "1": 1}


def test_available_now_snapshot_keeps_partitions_outside_it() -> None:
    assert next_end({"0": 2, "1": 3}, {"0": 4}, {}, None) == {"0": 4, "1": 3}


def _documented_task_stats() -> list[str]:
    """The field names docs/pyeventhub-source.md gives for a taskStatsPath line."""
    docs = (DOCS / "pyeventhub-source.md").read_text()
    match = re.search(
        r"appends one JSON line per partition range\s+it read \((.*?)\)\s+to", docs, re.DOTALL
    )
    assert match is not None, "the taskStatsPath paragraph is gone from the docs"
    return re.findall(r"`(\w+)`", match.group(1))


def test_task_stats_line_has_the_documented_fields(tmp_path: Path) -> None:
    from pysparksources.eventhubs import _task_stats

    quiet = EventHubPartition(config(), "3", 10, 25, 0)
    _task_stats.record(quiet, "miss", 15, 0.5)  # option unset: writes nothing
    assert list(tmp_path.iterdir()) == []
    part = EventHubPartition(config(taskStatsPath=str(tmp_path / "stats")), "3", 10, 25, 0)
    _task_stats.record(part, "skip", 15, 0.1234567)
    _task_stats.record(part, "miss", 15, 2.0)
    (written,) = (tmp_path / "stats").iterdir()
    assert written.name == f"tasks-{os.getpid()}.jsonl"
    lines = [json.loads(line) for line in written.read_text().splitlines()]
    assert [sorted(line) for line in lines] == [sorted(_documented_task_stats())] * 2
    first = lines[0]
    assert (first["partition"], first["start"], first["until"]) == ("3", 10, 25)
    assert (first["reuse"], first["cacheHit"], first["events"]) == ("skip", True, 15)
    assert first["seconds"] == 0.123457 and first["pid"] == os.getpid()
    assert first["batchId"] is None and first["executorId"] is None  # no Spark task here
    assert first["taskAttemptId"] is None and first["rangesInTask"] == 1
    assert (lines[1]["reuse"], lines[1]["cacheHit"]) == ("miss", False)


def test_plan_min_partitions_splits_in_proportion_and_max_still_caps() -> None:
    # Kafka's rule: pieces in proportion to size, rounded half up, at least one per range.
    assert split_counts({"0": 1000, "1": 10}, None, 8) == {"0": 8, "1": 1}
    assert split_counts({"0": 500, "1": 500}, None, 5) == {"0": 3, "1": 3}
    assert split_counts({"0": 3}, None, 8) == {"0": 3}  # never a piece of no events
    assert split_counts({"0": 1000, "1": 10}, None, 2) == {"0": 1, "1": 1}  # already enough
    assert split_counts({"0": 100, "1": 100}, 10, 4) == {"0": 10, "1": 10}  # max wins
    planned = plan_partitions(config(minPartitions="4"), {"0": (10, 20), "1": (0, 10)}, 2)
    ranges = sorted((p.partition_id, p.start, p.until) for p in planned)
    assert ranges == [("0", 10, 15), ("0", 15, 20), ("1", 0, 5), ("1", 5, 10)]


def _shape(tasks: list) -> list[list[tuple[str, int, int]]]:
    return [[(r.partition_id, r.start, r.until) for r in t.ranges] for t in tasks]


def test_pack_tasks_groups_small_ranges_up_to_the_event_and_partition_bounds() -> None:
    ranges = {str(p): (p * 100, p * 100 + 6250) for p in range(32)}
    cfg = config()  # defaults: at least 20,000 events, at most 16 partitions per task
    tasks = pack_tasks(cfg, plan_partitions(cfg, ranges, 32))
    assert [len(t.ranges) for t in tasks] == [4] * 8  # 4 x 6,250 = 25,000 >= 20,000
    covered = sorted(r for shape in _shape(tasks) for r in shape)
    assert covered == sorted((pid, lo, hi) for pid, (lo, hi) in ranges.items())
    for task in tasks:  # distinct partitions in a task: they are read at the same time
        assert len({r.partition_id for r in task.ranges}) == len(task.ranges)
    few = config(maxPartitionsPerTask="3")
    assert [len(t.ranges) for t in pack_tasks(few, plan_partitions(few, ranges, 32))] == [
        3
    ] * 10 + [2]
    trickle = {str(p): (0, 5) for p in range(40)}
    assert [len(t.ranges) for t in pack_tasks(cfg, plan_partitions(cfg, trickle, 40))] == [
        16,
        16,
        8,
    ]


def test_pack_tasks_leaves_big_and_split_ranges_one_per_task() -> None:
    big = {"0": (0, 30_000), "1": (0, 20_000), "2": (0, 5)}
    cfg = config()
    shapes = _shape(pack_tasks(cfg, plan_partitions(cfg, big, 3)))
    # A range of minEventsPerTask or more ends its task: the two big ones are never together
    # (the small one rides with whichever comes after it in slot order).
    assert len(shapes) == 2
    assert all(sum(hi - lo for _, lo, hi in shape) >= 20_000 for shape in shapes)
    small = {"0": (0, 10), "1": (0, 10)}
    for options in (
        {"minEventsPerTask": "1"},
        {"minPartitions": "2"},
        {"maxEventsPerPartition": "5"},
    ):
        cfg = config(**options)
        tasks = pack_tasks(cfg, plan_partitions(cfg, small, 2))
        assert all(len(t.ranges) == 1 for t in tasks), options


@pytest.mark.parametrize("splitter", ["minPartitions", "maxEventsPerPartition"])
def test_packing_and_splitting_together_are_refused_naming_both(splitter: str) -> None:
    with pytest.raises(OptionError) as caught:
        config(minEventsPerTask="1000", **{splitter: "4"})
    message = str(caught.value)
    assert "minEventsPerTask" in message and splitter in message


def test_trigger_gate_holds_back_until_min_or_delay_since_last_batch() -> None:
    now = [100.0]
    gate = TriggerGate(min_events=10, max_delay_s=5.0, clock=lambda: now[0])
    assert not gate.admit(0)  # the run's first check finds nothing: the clock starts here
    now[0] = 102.0
    assert not gate.admit(3)  # 3 < 10 and only 2 s since the first check
    now[0] = 103.0
    assert gate.admit(10)  # the minimum is there
    now[0] = 107.9
    assert not gate.admit(4)  # 4.9 s since that batch
    now[0] = 108.0
    assert gate.admit(4)  # the delay has passed: whatever waits
    now[0] = 200.0
    assert not gate.admit(0)  # nothing waits: no batch, and the clock is not reset
    assert gate.admit(1)  # a quiet spell longer than the delay: read at once


def test_trigger_gate_first_check_of_a_run_never_holds_back() -> None:
    gate = TriggerGate(min_events=1000, max_delay_s=60.0, clock=lambda: 5.0)
    assert gate.admit(3)  # a restarted query reads what piled up, as Kafka's source does
    assert not gate.admit(3)


def test_trigger_bounds_and_partitions_parse() -> None:
    cfg = config(
        minEventsPerTrigger="5", maxEventsPerTrigger="8", maxTriggerDelay="3s", partitions=" 2, 0"
    )
    assert (cfg.min_events_per_trigger, cfg.max_events_per_trigger) == (5, 8)
    assert cfg.max_trigger_delay_s == 3.0
    assert cfg.partitions == ("0", "2")
    assert config(minEventsPerTrigger="5").max_trigger_delay_s == 900.0
    with pytest.raises(OptionError, match="minEventsPerTrigger"):
        parse_options({"connectionString": CONN, "minEventsPerTrigger": "5"}, Use.BATCH_READ)


@pytest.mark.parametrize(
    ("options", "use", "where"),
    [
        ({"endingPosition": "end"}, Use.STREAM_READ, "spark.read"),
        ({"eventhubs.endingPositions": '{"0": "end"}'}, Use.STREAM_READ, "spark.read"),
        ({"maxEventsPerTrigger": "5"}, Use.BATCH_READ, "spark.readStream"),
        ({"minEventsPerTrigger": "5"}, Use.BATCH_READ, "spark.readStream"),
        ({"maxTriggerDelay": "1m"}, Use.BATCH_READ, "spark.readStream"),
        ({"maxRetries": "3"}, Use.STREAM_READ, "df.writeStream and df.write"),
        ({"stampBatchId": "true"}, Use.BATCH_READ, "df.writeStream and df.write"),
        ({"consumerGroup": "cg"}, Use.STREAM_WRITE, "spark.readStream and spark.read"),
    ],
)
def test_an_option_given_where_it_does_not_apply_names_where_it_does(
    options: dict[str, str], use: Use, where: str
) -> None:
    from pyspark.sql.types import StringType, StructField, StructType

    schema = StructType([StructField("body", StringType())])
    with pytest.raises(OptionError) as err:
        parse_options({"connectionString": CONN, **options}, use, schema)
    (given,) = options
    assert str(err.value) == f"pyeventhub: option '{given}' applies only to {where}"
    assert "SECRETKEY42" not in str(err.value)


def test_read_options_of_either_kind_pass_where_spark_asks_for_the_schema() -> None:
    # At load() a stream and a batch read look the same: each reader checks its own kind.
    both = parse_options(
        {"connectionString": CONN, "endingPosition": "end", "maxEventsPerTrigger": "5"}, Use.READ
    )
    assert both.max_events_per_trigger == 5 and both.ending == END


def test_defaults_come_from_the_option_table() -> None:
    stream, batch = config(), parse_options({"connectionString": CONN}, Use.BATCH_READ)
    assert stream.max_trigger_delay_s == 900.0  # "15m"
    assert (stream.starting, batch.starting) == (END, START)  # "@latest" / "start"
    assert (stream.receiver_timeout_s, stream.operation_timeout_s) == (60.0, 300.0)
    assert (stream.prefetch, stream.receive_batch_size) == (100, 500)
    assert stream.buffer_bytes == 64 * 1024 * 1024 and stream.consumer_group == "$Default"
    for option, value in (
        ("maxTriggerDelay", stream.max_trigger_delay_s),
        ("receiverTimeout", stream.receiver_timeout_s),
        ("operationTimeout", stream.operation_timeout_s),
        ("prefetchCount", stream.prefetch),
        ("receiverBufferBytes", stream.buffer_bytes),
        ("receiverIdleTimeout", stream.idle_timeout_s),
        ("partitionInfoCacheInterval", stream.info_cache_s),
        ("partitionDiscoveryInterval", stream.discovery_s),
        ("failOnDataLoss", stream.fail_on_data_loss),
    ):
        declared = next(o for o in TABLE.options if o.name == option)
        assert declared.default_value(Use.STREAM_READ) == value, option
    starting = next(o for o in TABLE.options if o.name == "startingPosition")
    assert starting.default_value(Use.BATCH_READ) == batch.starting


def test_what_counts_as_a_refusal_and_how_it_is_named() -> None:
    # The SDK's public errors as it raises them: the AMQP condition in the documented
    # EventHubError.error (after "amqp:"), the socket's error down the __cause__/__context__
    # chain (under the SDK's own AMQP error). Decided by condition and exception type,
    # whatever the message says.
    import socket

    from azure.eventhub.exceptions import (
        AuthenticationError,
        ConnectError,
        ConnectionLostError,
        EventDataSendError,
        EventHubError,
    )

    from pysparksources.eventhubs._refusals import no_such_name, refusal

    def sdk_error(
        kind: type[EventHubError],
        condition: str,
        cause: BaseException | None = None,
    ) -> Exception:
        error = kind("anything at all")
        error.error = condition
        if cause is not None:  # as the SDK raises it: ``raise error from None`` in an except
            middle = RuntimeError("the SDK's AMQP error")
            middle.__cause__ = cause
            error.__context__ = middle
            error.__suppress_context__ = True
        return error

    link = sdk_error(ConnectionLostError, "not-found")  # a refused attach
    management = sdk_error(ConnectError, "not-found")  # a 404 management reply
    delivery = sdk_error(EventDataSendError, "not-found")
    auth = sdk_error(AuthenticationError, "unauthorized-access")
    refused = sdk_error(ConnectError, "socket-error", ConnectionRefusedError(111, "refused"))
    no_name = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    unknown_host = sdk_error(ConnectError, "socket-error", no_name)
    no_answer = socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
    dns_down = sdk_error(ConnectError, "socket-error", no_answer)
    assert [
        refusal(e) for e in (link, management, delivery, auth, refused, unknown_host, dns_down)
    ] == [
        "not-found",
        "not-found",
        None,  # a delivery refused with amqp:not-found is passing trouble, not a missing entity
        None,
        "refused",
        "unresolved",
        "unresolved",
    ]
    # A name the resolver says does not exist fails at once; one it could not answer for is
    # worth the SDK's retries.
    assert [no_such_name(e) for e in (unknown_host, dns_down, refused)] == [True, False, False]
    connection = config(consumerGroup="spark").connection
    named = connection.refused(link, "spark")
    assert named is not None and named.option == "consumerGroup"
    assert str(named).startswith("pyeventhub: consumer group 'spark' does not exist in hub 'h'")
    hub = connection.refused(management)
    assert hub is not None and hub.option == "eventHubName" and "SECRETKEY42" not in str(hub)
    assert connection.refused(ValueError("no")) is None
