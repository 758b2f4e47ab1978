"""Hubs that grow: partitions added to a live hub, as Event Hubs Premium and Dedicated allow,
seen through the real azure-eventhub SDK."""

from __future__ import annotations

import json
import signal
import subprocess
import sysconfig
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from azure.eventhub import EventData

from pysparksources_emulator import EventHubsEmulator
from pysparksources_emulator.testing import bodies, consumer, producer, receive, send, send_batch

pytestmark = pytest.mark.emulator

COMMAND = str(Path(sysconfig.get_path("scripts")) / "pysparksources-emulator")


def _hub_properties(conn: str) -> dict[str, Any]:
    with consumer(conn) as client:
        props: dict[str, Any] = client.get_eventhub_properties()
        props["partitions"] = {
            pid: client.get_partition_properties(pid) for pid in props["partition_ids"]
        }
        return props


def test_added_partitions_start_empty_and_old_ones_keep_their_events(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    with producer(conn) as client:
        send_batch(client, ["a0", "a1", "a2"], partition_id="0")
        send_batch(client, ["b0"], partition_id="1")

    assert eventhubs_emulator.add_partitions("test", 4) == 4

    props = _hub_properties(conn)
    assert props["partition_ids"] == ["0", "1", "2", "3"]
    parts = props["partitions"]
    assert [parts[p]["last_enqueued_sequence_number"] for p in "0123"] == [2, 0, -1, -1]
    assert [parts[p]["is_empty"] for p in "0123"] == [False, False, True, True]
    # Old partitions keep events and sequence numbers; new ones number from 0.
    with producer(conn) as client:  # a new one: a producer reads the partition ids once
        send_batch(client, ["a3"], partition_id="0")
        send_batch(client, ["c0", "c1"], partition_id="3")
    old = eventhubs_emulator.partition_info("test", 0)
    assert (old["begin_sequence_number"], old["last_sequence_number"]) == (0, 3)
    new = receive(conn, "3", "-1", 2)
    assert bodies(new) == ["c0", "c1"] and [e.sequence_number for e in new] == [0, 1]
    assert eventhubs_emulator.partition_info("test", 2)["last_sequence_number"] == -1


def test_partition_count_only_grows(eventhubs_emulator: EventHubsEmulator) -> None:
    with pytest.raises(ValueError, match="can only grow"):
        eventhubs_emulator.add_partitions("test", 1)
    with pytest.raises(ValueError, match="up to 1024"):
        eventhubs_emulator.add_partitions("test", 1025)
    assert eventhubs_emulator.add_partitions("test", 2) == 2  # the same count: nothing changes


def test_keyed_and_round_robin_sends_spread_over_the_new_count(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    eventhubs_emulator.add_partitions("test", 6)
    with producer(conn) as client:
        for i in range(60):
            batch = client.create_batch(partition_key=f"key-{i}")
            batch.add(EventData(f"k{i}"))
            client.send_batch(batch)
        for i in range(12):
            client.send_batch([EventData(f"r{i}")])
    counts = Counter(
        {p: eventhubs_emulator.partition_info("test", p)["retained"] for p in range(6)}
    )
    assert sum(counts.values()) == 72
    assert counts[4] > 0 and counts[5] > 0, counts  # the new partitions get events too


def test_grown_hub_keeps_its_partitions_after_a_restart(
    eventhubs_emulator_factory: Any, tmp_path: Path
) -> None:
    emulator = eventhubs_emulator_factory(hubs={"durable": 2}, data_dir=tmp_path)
    emulator.add_partitions("durable", 3)
    send(emulator.connection_string("durable"), ["kept"], partition_id="2")
    emulator.stop()
    again = eventhubs_emulator_factory(hubs={"durable": 2}, data_dir=tmp_path)
    conn = again.connection_string("durable")
    with consumer(conn) as client:
        assert client.get_partition_ids() == ["0", "1", "2"]
    assert bodies(receive(conn, "2", "-1", 1)) == ["kept"]


def test_cli_grows_hubs_on_sighup(tmp_path: Path) -> None:
    def config(count: int) -> str:
        entity = {"Name": "grows", "PartitionCount": count, "ConsumerGroups": []}
        spaces = [{"Type": "EventHub", "Name": "ns", "Entities": [entity]}]
        return json.dumps({"UserConfig": {"NamespaceConfig": spaces}})

    path = tmp_path / "Config.json"
    path.write_text(config(2))
    proc = subprocess.Popen(
        [COMMAND, "--port", "0", "--config", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = ""
        while not line.startswith("Endpoint="):
            line = proc.stdout.readline().strip()
            assert line or proc.poll() is None, "the emulator exited early"
        conn = line
        path.write_text(config(4))
        proc.send_signal(signal.SIGHUP)
        assert proc.stdout.readline().strip() == "hub grows: now 4 partitions"
        with consumer(conn) as client:
            assert client.get_partition_ids() == ["0", "1", "2", "3"]
        path.write_text(config(3))  # shrinking is refused; the hub keeps serving
        proc.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        send(conn, ["after"], partition_id="3")
        assert bodies(receive(conn, "3", "-1", 1)) == ["after"]
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
