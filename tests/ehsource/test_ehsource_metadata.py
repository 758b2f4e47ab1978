"""Driver-side partition metadata against the emulator, without Spark."""

from __future__ import annotations

import time

import pytest
from ehsource_helpers import send

from pysparksources.eventhubs.metadata import HubMetadata, PartitionInfo
from pysparksources.eventhubs.source_options import parse_source_options
from pysparksources.testing.eventhubs.emulator import EventHubsEmulator
from pysparksources.testing.eventhubs.faults import Fault


def _metadata(conn: str, **options: str) -> HubMetadata:
    return HubMetadata(parse_source_options({"connectionString": conn, **options}, True))


def test_properties_of_every_partition_are_read_and_cached(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    send(conn, ["a", "b", "c"], partition_id="1")
    meta = _metadata(conn, partitionInfoCacheInterval="60s")
    try:
        infos = meta.partitions(fresh=True)
        assert infos["1"] == PartitionInfo(beginning=0, latest=3, empty=False)
        assert all(info.empty for pid, info in infos.items() if pid != "1")
        send(conn, ["d"], partition_id="1")
        assert meta.partitions()["1"].latest == 3  # cached: polling costs no call
        assert meta.partitions(fresh=True)["1"].latest == 4
    finally:
        meta.close()


def test_a_management_reply_slower_than_operation_timeout_fails_naming_it(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    eventhubs_emulator.add_fault(Fault("delay", link="management", delay=6.0, times=None))
    meta = _metadata(conn, operationTimeout="1s")
    started = time.monotonic()
    try:
        with pytest.raises(TimeoutError, match=r"operationTimeout \(1s\)"):
            meta.partitions(fresh=True)
    finally:
        meta.close()
    assert time.monotonic() - started < 5.0
