"""One partition out, the other flowing: real Spark, the real SDK, the emulator over sockets.

The emulator refuses every attach of partition 1's receivers, detaches them mid-read, or keeps
them attached and delivers nothing (``stall``). Shorter than receiverTimeout, the outage is
ridden out and every event arrives once; longer, the query fails with one line naming the
partition, the consumer group and the reason, and a restart on its checkpoint once the
partition is served again reads every event exactly once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pysparksources._core.option_table import Use
from pysparksources.errors import ServiceTimeoutError
from pysparksources.eventhubs._outages import MAX_PAUSE_S, OutageBudget
from pysparksources.eventhubs.options import parse_options
from pysparksources_emulator import EventHubsEmulator, Fault
from support.errors import python_error_lines
from support.eventhubs import send
from support.pyeventhub import read_back, reader, run_to_parquet, seqs
from support.variants import CLASSIC_ONLY

SPARK = (pytest.mark.slow, CLASSIC_ONLY)  # each query costs seconds: the slow tier, classic

KEY = "outage-test-key-not-to-be-shown"
EVENTS = 200  # per partition
# Short outages last OUTAGE_S from their first refusal, detach or held delivery, well inside
# SHORT_PATIENCE; long ones outlast LONG_PATIENCE, which keeps the failing run short.
OUTAGE_S = 2.0
SHORT_PATIENCE = {"receiverTimeout": "10s", "consumerGroup": "cg1"}
LONG_PATIENCE = {"receiverTimeout": "3s", "consumerGroup": "cg1"}


def _faults(duration: float | None) -> dict[str, Fault]:
    """Partition 1's outages: every attach refused, links dropped once 50 events went through
    (every new link too), links attached but never delivered to."""
    where: dict[str, Any] = {"link": "receiver", "partition": 1, "duration": duration}
    return {
        "refused attach": Fault("detach", "com.microsoft:server-busy", times=None, **where),
        "detach mid-read": Fault(
            "detach", "amqp:link:detach-forced", after_events=50, times=None, **where
        ),
        "stall": Fault("stall", **where),
    }


@pytest.fixture
def emulator(eventhubs_emulator_factory: Any) -> EventHubsEmulator:
    emulator: EventHubsEmulator = eventhubs_emulator_factory(
        keys={"RootManageSharedAccessKey": KEY}
    )
    return emulator


def _fill(conn: str, first: int, count: int) -> None:
    for pid in ("0", "1"):
        send(conn, [f"p{pid}-{i}" for i in range(first, first + count)], partition_id=pid)


def _every_event_once(rows: list[Any], count: int) -> None:
    assert seqs(rows) == [(pid, i) for pid in ("0", "1") for i in range(count)]
    assert [r.body for r in rows] == [
        f"p{pid}-{i}".encode() for pid in ("0", "1") for i in range(count)
    ]


@pytest.mark.parametrize("kind", ["refused attach", "detach mid-read", "stall"])
@SPARK[0]
@SPARK[1]
def test_a_short_outage_of_one_partition_is_ridden_out_exactly_once(
    session: Any, emulator: EventHubsEmulator, tmp_path: Path, kind: str
) -> None:
    conn = emulator.connection_string("test")
    _fill(conn, 0, EVENTS)
    fault = emulator.add_fault(_faults(OUTAGE_S)[kind])
    run_to_parquet(reader(session, conn, startingPosition="start", **SHORT_PATIENCE), tmp_path)
    _every_event_once(read_back(session, tmp_path), EVENTS)
    assert fault.fired >= 1
    if kind != "stall":  # a new link was refused or dropped too: the task retried
        assert fault.fired >= 2


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        pytest.param("refused attach", "its receiver link failed", id="refused attach"),
        pytest.param(
            "stall",
            "its receiver link stayed attached but the service delivered nothing",
            id="stall",
        ),
    ],
)
@SPARK[0]
@SPARK[1]
def test_a_long_outage_fails_naming_partition_and_reason_and_a_restart_reads_exactly_once(
    session: Any, emulator: EventHubsEmulator, tmp_path: Path, kind: str, reason: str
) -> None:
    conn = emulator.connection_string("test")
    _fill(conn, 0, 50)
    stream = reader(session, conn, startingPosition="start", **LONG_PATIENCE)
    run_to_parquet(stream, tmp_path)  # a checkpoint at 50 events per partition
    fault = _faults(None)[kind]
    if kind == "refused attach":  # another condition than the short test's
        fault.condition = "amqp:resource-limit-exceeded"
    emulator.add_fault(fault)
    _fill(conn, 50, 50)
    with pytest.raises(Exception) as caught:
        run_to_parquet(stream, tmp_path)
    message = str(caught.value)
    last = python_error_lines(message)[-1]
    where = f"partition 1 of sb://{emulator.host}:{emulator.port}/test (consumer group 'cg1')"
    assert last.startswith(f"pysparksources.errors.ServiceTimeoutError: pyeventhub: {where} ")
    assert "delivered no event within receiverTimeout (3s)" in last
    assert "while reading sequence numbers 50..99" in last
    assert reason in last
    if kind == "refused attach":
        assert "last with amqp:resource-limit-exceeded (" in last
    assert KEY not in message and "SharedAccessKey" not in message
    emulator.clear_faults()
    run_to_parquet(stream, tmp_path)  # the restart, on the same checkpoint
    _every_event_once(read_back(session, tmp_path), 100)


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_budget_is_time_since_the_last_event_and_pauses_double() -> None:
    conn = "Endpoint=sb://ns.example:5671;SharedAccessKeyName=k;SharedAccessKey=" + KEY
    config = parse_options(
        {"connectionString": conn, "eventHubName": "orders", "receiverTimeout": "30s"},
        Use.STREAM_READ,
    )
    clock = _Clock()
    budget = OutageBudget(config, "3", clock)
    busy = ConnectionError("busy")
    pauses = []
    for _ in range(5):
        pauses.append(budget.retry(busy, 7, 20))
        clock.now += 1 + pauses[-1]  # a refused attach takes about a second
    assert pauses == [0.2, 0.4, 0.8, 1.6, 3.2]
    budget.progressed()  # an event: the outage is over, the budget and the pauses start again
    assert budget.until() == clock.now + 30 and budget.retry(busy, 9, 20) == 0.2
    clock.now += 29.9
    with pytest.raises(ServiceTimeoutError) as caught:
        budget.retry(busy, 9, 20)
    text = str(caught.value)
    assert text.startswith(
        "pyeventhub: partition 3 of sb://ns.example:5671/orders (consumer group '$Default') "
        "delivered no event within receiverTimeout (30s) while reading sequence numbers 9..19: "
        "its receiver link failed 2 times in a row, last with ConnectionError; "
    )
    assert KEY not in text and "\n" not in text
    assert max(pauses) <= MAX_PAUSE_S
