"""The Event Hubs checkpoint store, both ways, against Azurite with the official package.

Spark -> store: a query writes each committed batch's positions where EventProcessorClient
keeps them, and an EventProcessorClient started on that store reads on from there, no event
twice, none skipped, partitions the query read nothing from included. Store -> Spark: a query
with startingPosition=checkpointStore takes the consumer group over from an
EventProcessorClient, no gap, no duplicate, resuming where the processor would (after the
offset), with every blob it reads checked. A SIGKILL never leaves the store ahead of Spark's
commit log.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from azure.eventhub import EventHubConsumerClient
from azure.eventhub.extensions.checkpointstoreblob import BlobCheckpointStore
from azure.storage.blob import BlobServiceClient

from pysparksources_emulator import EmulatorConfig, EventHubsEmulator, HubConfig
from support import crash_drivers
from support.azurite import Azurite
from support.eventhubs import send
from support.pyeventhub import batch_read, reader
from support.streams import run_available_now

pytestmark = [pytest.mark.spark, pytest.mark.slow]
HUB = "stored"
GROUP = "$Default"


@pytest.fixture
def hub(eventhubs_emulator_factory: Any) -> EventHubsEmulator:
    emulator: EventHubsEmulator = eventhubs_emulator_factory(hubs={HUB: 2})
    return emulator


@pytest.fixture
def container(azurite: Azurite) -> Iterator[str]:
    """A new container of the session's Azurite, deleted after the test."""
    name = f"ckpt-{uuid.uuid4().hex[:12]}"
    service = BlobServiceClient.from_connection_string(azurite.connection_string)
    service.create_container(name)
    yield name
    service.delete_container(name)
    service.close()


def _store_options(azurite: Azurite, container: str) -> dict[str, str]:
    return {
        "checkpointStore.container": container,
        "checkpointStore.connectionString": azurite.connection_string,
    }


def _official_store(azurite: Azurite, container: str) -> BlobCheckpointStore:
    return BlobCheckpointStore.from_connection_string(azurite.connection_string, container)


def _checkpoints(azurite: Azurite, container: str, emulator: EventHubsEmulator) -> dict[str, Any]:
    """What the official store reads for the group: partition -> (sequence number, offset)."""
    with _official_store(azurite, container) as store:
        found = store.list_checkpoints(f"{emulator.host}:{emulator.port}", HUB, GROUP)
    return {c["partition_id"]: (c["sequence_number"], c["offset"]) for c in found}


def _send_numbered(conn: str, first: int, count: int) -> dict[tuple[str, int], str]:
    """``count`` events per partition, bodies p<pid>-<n> from ``first``; their keys."""
    sent = {}
    for pid in ("0", "1"):
        bodies = [f"p{pid}-{n}" for n in range(first, first + count)]
        send(conn, bodies, partition_id=pid)
        sent.update({(pid, first + i): body for i, body in enumerate(bodies)})
    return sent


class Processor:
    """An EventProcessorClient (the SDK's EventHubConsumerClient with a checkpoint store)
    that checkpoints every event it gets, as a production consumer would."""

    def __init__(
        self,
        conn: str,
        store: BlobCheckpointStore,
        stop_after: int | None,
        starting_position: str | None = "-1",
    ) -> None:
        self.events: dict[tuple[str, int], str] = {}
        self.offsets: dict[tuple[str, int], str] = {}
        self._stop_after = stop_after
        self._starting_position = starting_position
        self._enough = threading.Event()
        self._client = EventHubConsumerClient.from_connection_string(
            conn,
            consumer_group=GROUP,
            checkpoint_store=store,
            load_balancing_interval=1,
            load_balancing_strategy="greedy",
        )
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        # Without a checkpoint a processor starts at starting_position: "-1" here, the start
        # of the stream; None leaves the SDK's default, "@latest" (only events sent later).
        start = (
            {}
            if self._starting_position is None
            else {"starting_position": self._starting_position}
        )
        self._client.receive(on_event=self._on_event, **start)

    def _on_event(self, context: Any, event: Any) -> None:
        if event is None or self._enough.is_set():
            return
        key = (context.partition_id, event.sequence_number)
        self.events[key] = event.body_as_str()
        self.offsets[key] = str(event.offset)
        context.update_checkpoint(event)
        if self._stop_after is not None and len(self.events) >= self._stop_after:
            self._enough.set()

    def wait(self, count: int, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while len(self.events) < count and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(self.events) >= count, f"the processor got {len(self.events)} of {count}"

    def close(self) -> None:
        self._client.close()  # gives its partitions up (ownerid "")
        self._thread.join(30)


def test_committed_positions_reach_the_store_and_a_processor_reads_on_from_them(
    spark: Any, hub: EventHubsEmulator, azurite: Azurite, container: str, tmp_path: Path
) -> None:
    conn = hub.connection_string(HUB)
    first = _send_numbered(conn, 0, 25)
    frame = reader(
        spark,
        conn,
        startingPosition="start",
        maxEventsPerTrigger=20,  # three batches: commit() and the next trigger both write
        **_store_options(azurite, container),
    )
    selected = frame.selectExpr("partition", "sequenceNumber", "CAST(body AS STRING) AS body")
    run_available_now(selected, tmp_path / "out", tmp_path / "ck")
    rows = spark.read.parquet(str(tmp_path / "out")).collect()
    assert {(r.partition, r.sequenceNumber): r.body for r in rows} == first

    # The official store reads the last event each partition delivered: the one at 24.
    stored = _checkpoints(azurite, container, hub)
    assert {pid: seq for pid, (seq, _) in stored.items()} == {"0": 24, "1": 24}

    later = _send_numbered(conn, 25, 5)
    processor = Processor(conn, _official_store(azurite, container), stop_after=None)
    try:
        processor.wait(len(later))
        time.sleep(1)  # anything more (an event Spark had read) would arrive by now
    finally:
        processor.close()
    assert processor.events == later, "the processor re-read or skipped events Spark committed"
    # The offsets written were the events' own: the processor resumed after them (exclusive).
    for pid, (seq, offset) in stored.items():
        assert int(offset) < int(processor.offsets[(pid, seq + 1)])


def test_a_query_takes_a_consumer_group_over_from_a_processor(
    session: Any, hub: EventHubsEmulator, azurite: Azurite, container: str, tmp_path: Path
) -> None:
    conn = hub.connection_string(HUB)
    sent = _send_numbered(conn, 0, 10)
    processor = Processor(conn, _official_store(azurite, container), stop_after=12)
    try:
        processor.wait(12)
    finally:
        processor.close()
    sent.update(_send_numbered(conn, 10, 4))
    frame = reader(
        session, conn, startingPosition="checkpointStore", **_store_options(azurite, container)
    )
    selected = frame.selectExpr("partition", "sequenceNumber", "CAST(body AS STRING) AS body")
    run_available_now(selected, tmp_path / "out", tmp_path / "ck")
    rows = session.read.parquet(str(tmp_path / "out")).collect()
    by_spark = {(r.partition, r.sequenceNumber): r.body for r in rows}
    assert not set(by_spark) & set(processor.events), "read by both the processor and Spark"
    assert {**processor.events, **by_spark} == sent, "events lost in the takeover"
    # And the query moved the group's checkpoints on to its own end.
    stored = _checkpoints(azurite, container, hub)
    assert {pid: seq for pid, (seq, _) in stored.items()} == {"0": 13, "1": 13}

    # session.read from the store starts at the same place, where the query left the group.
    send(conn, ["p0-14"], partition_id="0")
    batch = batch_read(
        session, conn, startingPosition="checkpointStore", **_store_options(azurite, container)
    )
    assert [(r.partition, r.sequenceNumber, r.body.decode()) for r in batch] == [("0", 14, "p0-14")]


def test_a_live_processor_stops_the_query_at_start(
    spark: Any, hub: EventHubsEmulator, azurite: Azurite, container: str, tmp_path: Path
) -> None:
    conn = hub.connection_string(HUB)
    _send_numbered(conn, 0, 2)
    processor = Processor(conn, _official_store(azurite, container), stop_after=None)
    try:
        processor.wait(4)
        frame = reader(spark, conn, startingPosition="start", **_store_options(azurite, container))
        with pytest.raises(Exception) as caught:
            run_available_now(frame, tmp_path / "out", tmp_path / "ck", timeout=120)
        message = str(caught.value)
        assert "EventProcessorClient" in message and "still claims partition(s) 0" in message
        assert "checkpointStore.update=false" in message
        assert azurite.account_key not in message
    finally:
        processor.close()
    # Closed, the processor gave its partitions up: the same query starts now.
    run_available_now(frame, tmp_path / "out2", tmp_path / "ck2")


def test_a_store_that_is_not_there_fails_the_query_naming_it(
    session: Any, hub: EventHubsEmulator, azurite: Azurite, tmp_path: Path
) -> None:
    conn = hub.connection_string(HUB)
    _send_numbered(conn, 0, 1)
    frame = reader(
        session,
        conn,
        startingPosition="checkpointStore",
        **_store_options(azurite, "nosuchcontainer"),
    )
    with pytest.raises(Exception) as caught:
        run_available_now(frame, tmp_path / "out", tmp_path / "ck", timeout=120)
    message = str(caught.value)
    assert "checkpoint store container 'nosuchcontainer'" in message
    assert "does not exist" in message
    assert azurite.account_key not in message
    wrong_key = azurite.connection_string.replace(azurite.account_key, "d3Jvbmc=" * 11)
    frame = reader(
        session,
        conn,
        startingPosition="checkpointStore",
        **{
            "checkpointStore.container": "nosuchcontainer",
            "checkpointStore.connectionString": wrong_key,
        },
    )
    with pytest.raises(Exception) as caught:
        run_available_now(frame, tmp_path / "out2", tmp_path / "ck2", timeout=120)
    message = str(caught.value)
    assert "option 'checkpointStore.connectionString'" in message and "refused" in message
    assert "d3Jvbmc=" not in message


def _committed_ends(checkpoint: Path) -> dict[str, int]:
    """The end positions of the last batch in Spark's commit log (0 per partition if none)."""
    commits = [int(p.name) for p in (checkpoint / "commits").glob("[0-9]*")]
    if not commits:
        return {"0": 0, "1": 0}
    line = (checkpoint / "offsets" / str(max(commits))).read_text().splitlines()[-1]
    ends: dict[str, int] = json.loads(line)[HUB]
    return ends


def test_a_kill_never_leaves_the_store_ahead_of_sparks_commit_log(
    spark: Any, hub: EventHubsEmulator, azurite: Azurite, container: str, tmp_path: Path
) -> None:
    conn = hub.connection_string(HUB)
    sent = _send_numbered(conn, 0, 150)
    out, ck = tmp_path / "out", tmp_path / "ck"
    env = {"EH_CONN": conn, "STORE_CONN": azurite.connection_string, "STORE_CONTAINER": container}

    def stored_next() -> dict[str, int]:
        return {pid: seq + 1 for pid, (seq, _) in _checkpoints(azurite, container, hub).items()}

    for batches in (1, 3):  # kill once a batch is committed, then again further on
        proc = crash_drivers.start("pyeventhub", out, ck, 30, env=env)
        crash_drivers.kill_when(
            proc,
            lambda n=batches: len(list((ck / "commits").glob("[0-9]*"))) >= n,  # type: ignore[misc]
            f"{batches} batches committed",
        )
        committed, stored = _committed_ends(ck), stored_next()
        print(f"killed: commit log at {committed}, store at {stored}")
        for pid, position in stored.items():
            assert position <= committed[pid], f"store ahead of Spark: {stored} > {committed}"
    crash_drivers.restart_here(spark, "pyeventhub", out, ck, 30, env=env)
    rows = spark.read.parquet(str(out)).collect()
    got = [((r.partition, r.sequenceNumber), r.body) for r in rows]
    assert len(got) == len(sent) and dict(got) == sent, "events lost or duplicated"
    assert stored_next() == {"0": 150, "1": 150} == _committed_ends(ck)


@pytest.fixture
def four_partitions(eventhubs_emulator_factory: Any) -> str:
    """A hub of at least 4 partitions: the emulator's, or the real one the environment names
    as integration/eventhubs reads it (PYSPARKSOURCES_EVENTHUBS_CONNECTION_STRING, hub
    PYSPARKSOURCES_EVENTHUBS_HUB): the test tells its events by a marker, so the hub may hold
    others. Its connection string, with EntityPath."""
    real = os.environ.get("PYSPARKSOURCES_EVENTHUBS_CONNECTION_STRING")
    if not real:
        emulator: EventHubsEmulator = eventhubs_emulator_factory(hubs={"handover": 4})
        return emulator.connection_string("handover")
    if "entitypath=" not in real.lower():
        hub = os.environ.get("PYSPARKSOURCES_EVENTHUBS_HUB", "eh1")
        real = f"{real.rstrip(';')};EntityPath={hub}"
    with EventHubConsumerClient.from_connection_string(real, consumer_group=GROUP) as client:
        if len(client.get_partition_ids()) < 4:
            pytest.skip("the handover test needs a hub of 4 partitions or more")
    return real


def _stored(azurite: Azurite, container: str, conn: str) -> dict[str, tuple[int, str]]:
    """What the official store reads for the hub ``conn`` names: partition -> (sequence
    number, offset)."""
    fields = dict(part.split("=", 1) for part in conn.split(";") if "=" in part)
    namespace = urlparse(fields["Endpoint"]).netloc  # the host (and port) the SDK connects to
    with _official_store(azurite, container) as store:
        found = store.list_checkpoints(namespace, fields["EntityPath"], GROUP)
    return {c["partition_id"]: (c["sequence_number"], c["offset"]) for c in found}


def test_a_handover_to_a_processor_and_back_loses_nothing(
    spark: Any, four_partitions: str, azurite: Azurite, container: str, tmp_path: Path
) -> None:
    conn, marker = four_partitions, uuid.uuid4().hex[:10]
    sent: dict[str, str] = {}  # body -> partition, for the events the query is to read

    def send_phase(phase: str, counts: dict[str, int]) -> set[tuple[str, str]]:
        phased = {}
        for pid, count in counts.items():
            bodies = [f"{marker}-{phase}-p{pid}-{i}" for i in range(count)]
            send(conn, bodies, partition_id=pid)
            phased.update({body: pid for body in bodies})
        sent.update(phased)
        return {(pid, body) for body, pid in phased.items()}

    def marked(rows: list[Any]) -> list[tuple[str, str]]:
        return [(r.partition, r.body) for r in rows if r.body.startswith(marker)]

    send_phase("before", {"0": 3})  # the query starts at the end: not its to read
    sent.clear()
    options = _store_options(azurite, container)
    columns = ("partition", "sequenceNumber", "offset", "CAST(body AS STRING) AS body")
    spark_turn = reader(spark, conn, startingPosition="end", **options).selectExpr(*columns)
    run_available_now(spark_turn, tmp_path / "out", tmp_path / "ck")  # nothing new yet
    # Every partition has a checkpoint now, those the query has read nothing from too.
    assert sorted(_stored(azurite, container, conn)) == ["0", "1", "2", "3"]
    send_phase("spark", {"0": 2, "1": 2})
    run_available_now(spark_turn, tmp_path / "out", tmp_path / "ck")

    # Partition 2 was empty all through Spark's turn, partition 1 gets nothing in the
    # processor's. The processor starts where EventHubConsumerClient.receive() starts by
    # default: after each checkpoint, or at "@latest" where it finds none.
    for_processor = send_phase("processor", {"0": 2, "2": 2})
    processor = Processor(conn, _official_store(azurite, container), None, starting_position=None)
    try:
        deadline = time.monotonic() + 60
        while len(marked_events := _marked(processor, marker)) < 4 and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1)  # anything more (an event Spark had read) would arrive by now
    finally:
        processor.close()
    assert sorted(_marked(processor, marker)) == sorted(for_processor), marked_events

    # Back to Spark; partition 3 has received nothing until now.
    send_phase("back", {"0": 1, "1": 1, "2": 1, "3": 1})
    back = reader(spark, conn, startingPosition="checkpointStore", **options)
    run_available_now(back.selectExpr(*columns), tmp_path / "out2", tmp_path / "ck2")
    first = spark.read.parquet(str(tmp_path / "out")).collect()
    second = spark.read.parquet(str(tmp_path / "out2")).collect()
    everyone = marked(first) + _marked(processor, marker) + marked(second)
    assert len(everyone) == len(set(everyone)), "events read twice"
    assert set(everyone) == {(pid, body) for body, pid in sent.items()}, "events lost"
    # The checkpoints left are the last events Spark read: sequence number and offset of one
    # event, as a processor's own.
    last = {r.partition: (r.sequenceNumber, r.offset) for r in sorted(second, key=_seq)}
    assert _stored(azurite, container, conn) == {
        pid: (seq, off) for pid, (seq, off) in last.items()
    }


def _seq(row: Any) -> int:
    return int(row.sequenceNumber)


def _marked(processor: Processor, marker: str) -> list[tuple[str, str]]:
    return [
        (pid, body) for (pid, _), body in list(processor.events.items()) if body.startswith(marker)
    ]


def test_the_store_is_read_back_as_a_processor_resumes_and_checked(
    spark: Any, eventhubs_emulator_factory: Any, azurite: Azurite, container: str
) -> None:
    shift = [0.0]
    emulator: EventHubsEmulator = eventhubs_emulator_factory(
        config=EmulatorConfig(
            hubs=[HubConfig(HUB, 2, retention_seconds=60)],
            clock=lambda: time.time() + shift[0],
            retention_check_interval=3600,
        )
    )
    conn = emulator.connection_string(HUB)
    send(conn, [f"a{n}" for n in range(5)], partition_id="0")
    send(conn, [f"b{n}" for n in range(5)], partition_id="1")
    offsets = {(r.partition, r.sequenceNumber): r.offset for r in batch_read(spark, conn)}
    shift[0] = 600.0  # a0..a4 and b0..b4 expire
    send(conn, [f"a{n}" for n in range(5, 10)], partition_id="0")
    send(conn, ["b5", "b6"], partition_id="1")
    assert emulator.apply_retention() > 0
    offsets.update({(r.partition, r.sequenceNumber): r.offset for r in batch_read(spark, conn)})
    names = {"fully_qualified_namespace": f"{emulator.host}:{emulator.port}", "eventhub_name": HUB}
    with _official_store(azurite, container) as store:
        # Offset and sequence number disagree (a tool that reset the offset only): a
        # processor resumes after the offset, so does the query.
        store.update_checkpoint(
            {
                **names,
                "consumer_group": GROUP,
                "partition_id": "0",
                "sequence_number": 8,
                "offset": offsets[("0", 6)],
            }
        )
        # A processor's checkpoint at b1, whose next events b2..b4 have expired since: a
        # processor skips them without a word; the query says so (failOnDataLoss).
        store.update_checkpoint(
            {
                **names,
                "consumer_group": GROUP,
                "partition_id": "1",
                "sequence_number": 1,
                "offset": offsets[("1", 1)],
            }
        )
    options = {"startingPosition": "checkpointStore", **_store_options(azurite, container)}
    with pytest.raises(Exception) as caught:
        batch_read(spark, conn, **options)
    assert "partition 1" in str(caught.value) and "2..4" in str(caught.value)
    rows = batch_read(spark, conn, failOnDataLoss="false", **options)
    assert [(r.partition, r.sequenceNumber) for r in rows] == [
        ("0", 7),
        ("0", 8),
        ("0", 9),
        ("1", 5),
        ("1", 6),
    ]

    # A blob whose metadata is not a checkpoint fails the read, naming it.
    blob = f"{emulator.host}:{emulator.port}/{HUB}/{GROUP}/checkpoint/0".lower()
    with BlobServiceClient.from_connection_string(azurite.connection_string) as service:
        service.get_blob_client(container, blob).set_blob_metadata(
            {"offset": offsets[("0", 6)], "sequencenumber": "eight"}
        )
    with pytest.raises(Exception) as caught:
        batch_read(spark, conn, **options)
    message = str(caught.value)
    store = f"checkpoint store container '{container}'"
    assert f"CheckpointError: pyeventhub: blob '{blob}' in the {store}" in message
    assert "'sequencenumber' 'eight', not -1 or a decimal number" in message
    assert azurite.account_key not in message
