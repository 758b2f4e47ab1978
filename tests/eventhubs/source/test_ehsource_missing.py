"""What does not exist fails the query at its start, naming it and what to do: a consumer group
the hub does not have (stream and spark.read), a hub, a namespace where nothing listens or
whose host name does not resolve; and a receiver refused in a task fails that task at once.

Every query sets receiverTimeout far above operationTimeout: an unknown consumer group used to
wait receiverTimeout (60 s by default) and then fail blaming missing events, or, with nothing
to read, never fail at all; here that fails the tests by their messages (or at the stream
helper's timeout), never by a clock assertion.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import pytest

from pysparksources._core.option_table import Use
from pysparksources.errors import OptionError
from pysparksources.eventhubs._metadata import HubMetadata
from pysparksources.eventhubs.options import parse_options
from pysparksources_emulator import EventHubsEmulator, Fault
from support.eventhubs import send
from support.pyeventhub import batch_read, reader, run_to_parquet

# receiverTimeout far above operationTimeout (see the module docstring).
PATIENT = {"receiverTimeout": "3m", "operationTimeout": "15s"}
KEY = "S3cretKeyValue0123456789abcdef="


def _failure(run: Any) -> str:
    with pytest.raises(Exception) as caught:  # classic and Connect raise different types
        run()
    return str(caught.value)


def test_an_unknown_consumer_group_fails_the_stream_at_start(
    session: Any, eventhubs_emulator: EventHubsEmulator, tmp_path: Path
) -> None:
    # An empty hub read from @latest plans no task at all: only the driver's check at the
    # start can tell that the group does not exist.
    conn = eventhubs_emulator.connection_string("test")
    stream = reader(session, conn, consumerGroup="spark", **PATIENT)
    message = _failure(lambda: run_to_parquet(stream, tmp_path))
    assert "OptionError: pyeventhub: consumer group 'spark' does not exist in hub 'test'" in (
        message
    )
    assert "option 'consumerGroup'" in message and "--consumer-group spark" in message


@pytest.mark.slow
def test_on_a_hub_without_events_the_group_check_holds_no_stream_and_a_later_call_fails(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    # No event proves a group exists: the check only listens for a refusal, in the background,
    # and the next driver call after it (Spark polls latestOffset) fails. A group that exists
    # is never refused: waiting for the check ends within its few seconds, without an error.
    conn = eventhubs_emulator.connection_string("test")

    def metadata(group: str) -> HubMetadata:
        raw = {"connectionString": conn, "consumerGroup": group, **PATIENT}
        return HubMetadata(parse_options(raw, Use.STREAM_READ))

    missing, known = metadata("spark"), metadata("cg1")
    try:
        assert all(info.empty for info in missing.partitions(fresh=True).values())
        deadline = time.monotonic() + 30
        with pytest.raises(OptionError) as refused:
            while time.monotonic() < deadline:
                missing.partitions()
                time.sleep(0.05)
        assert "consumer group 'spark' does not exist in hub 'test'" in str(refused.value)
        known.partitions(fresh=True)
        started = time.monotonic()
        known.settle_group_check()
        assert time.monotonic() - started < 10
        assert sorted(known.partitions()) == ["0", "1"]
    finally:
        missing.close()
        known.close()


def test_an_unknown_consumer_group_fails_a_batch_read_and_a_known_one_reads(
    spark: Any, eventhubs_emulator: EventHubsEmulator
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    send(conn, ["a", "b"], partition_id="1")
    message = _failure(lambda: batch_read(spark, conn, consumerGroup="Spark-Jobs", **PATIENT))
    assert "consumer group 'Spark-Jobs' does not exist in hub 'test'" in message
    # Group names match case-insensitively, as on Event Hubs (the fixture's hub has cg1).
    assert [r.body for r in batch_read(spark, conn, consumerGroup="CG1", **PATIENT)] == [
        b"a",
        b"b",
    ]


def test_a_receiver_refused_in_a_task_fails_it_at_once_naming_the_group(
    spark: Any, eventhubs_emulator_factory: Any
) -> None:
    # The driver's check reads the last event of partition 0, which this hub accepts; the
    # tasks' receivers of partition 1 are detached with amqp:not-found right after they
    # attach, as the service does when a consumer group is deleted under a running query. The
    # SDK re-attaches them without a word; the silent receiver checks its group, which is
    # refused twice (a new receiver confirms the first), and the task fails naming the group,
    # with no receiverTimeout wait.
    emulator = eventhubs_emulator_factory({"gone": 2})
    conn = emulator.connection_string("gone")
    send(conn, ["w"], partition_id="0")
    send(conn, ["x", "y"], partition_id="1")
    emulator.add_fault(Fault("detach", "amqp:not-found", link="receiver", partition=1, times=None))
    message = _failure(lambda: batch_read(spark, conn, consumerGroup="cg1", **PATIENT))
    assert "consumer group 'cg1' does not exist in hub 'gone'" in message
    assert "receiverTimeout" not in message


def test_one_not_found_is_passing_trouble_and_the_read_goes_on(
    spark: Any, eventhubs_emulator_factory: Any
) -> None:
    # The service sends amqp:not-found for passing trouble too: only a second refusal, of a
    # new receiver, means the group does not exist.
    emulator = eventhubs_emulator_factory({"blip": 2})
    conn = emulator.connection_string("blip")
    send(conn, ["x", "y"], partition_id="1")
    fault = emulator.add_fault(
        Fault("detach", "amqp:not-found", link="receiver", partition=1, times=1)
    )
    assert [r.body for r in batch_read(spark, conn, **PATIENT)] == [b"x", b"y"]
    assert fault.fired == 1


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("case", ["unknown hub", "nothing listening", "unresolvable"])
def test_a_missing_hub_or_namespace_fails_the_stream_at_start_naming_it(
    spark: Any, eventhubs_emulator: EventHubsEmulator, tmp_path: Path, case: str
) -> None:
    if case == "unknown hub":
        options = {"connectionString": eventhubs_emulator.connection_string("nohub")}
        named = "event hub 'nohub' does not exist in namespace 127.0.0.1:"
        fix = "check option 'eventHubName' (or the connection string's EntityPath)"
    elif case == "nothing listening":
        port = _free_port()
        options = {
            "connectionString": f"Endpoint=sb://127.0.0.1:{port};SharedAccessKeyName=k;"
            f"SharedAccessKey={KEY};EntityPath=test;UseDevelopmentEmulator=true"
        }
        named = f"nothing accepts connections at namespace 127.0.0.1:{port} (connection refused)"
        fix = "option 'connectionString' (its Endpoint)"
    else:  # .invalid never resolves (RFC 6761): offline or not, the resolver says so at once
        options = {
            "fullyQualifiedNamespace": "no-such-namespace.invalid",
            "eventHubName": "test",
            "sharedAccessKeyName": "k",
            "sharedAccessKey": KEY,
        }
        named = "namespace no-such-namespace.invalid does not resolve"
        fix = "check the namespace in option 'fullyQualifiedNamespace'"
    conn = options.pop("connectionString", None)
    frame = spark.readStream.format("pyeventhub")
    if conn is not None:
        frame = frame.option("connectionString", conn)
    for name, value in {**options, **PATIENT}.items():
        frame = frame.option(name, value)
    message = _failure(lambda: run_to_parquet(frame.load(), tmp_path))
    assert "OptionError: pyeventhub: " in message
    assert named in message and fix in message
    assert KEY not in message
