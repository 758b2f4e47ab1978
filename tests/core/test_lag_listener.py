"""pysparksources.monitoring.LagListener on real queries (classic and Connect) and its rules."""

from __future__ import annotations

import json
import logging
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from pysparksources.eventhubs.offsets import HubOffset
from pysparksources.monitoring import LagListener, _History, partition_lag
from pysparksources_emulator import EventHubsEmulator
from support.eventhubs import send
from support.pyeventhub import reader
from support.streams import checkpoint_offsets, data_batches, progress, to_parquet, wait_for_rows

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_seconds_behind_are_bounded_by_what_the_listener_has_seen() -> None:
    history = _History()
    history.add(10, at(0))  # newest event 9 enqueued at 0 s
    # Caught up: no lag at all.
    assert partition_lag(10, 10, at(0), history)["secondsBehind"] == 0.0
    history.add(30, at(4))  # events 10..29 arrived; 29 at 4 s
    history.add(50, at(9))
    lag = partition_lag(25, 50, at(9), history)
    # Event 25 came after 0 s (the hub held only up to 9 then) and by 4 s (29 was there).
    assert lag == {
        "eventsBehind": 25,
        "secondsBehind": 5.0,
        "secondsBehindMax": 9.0,
        "newestEnqueuedTime": at(9).isoformat(),
    }
    history.prune(25)
    assert history.latest == [10, 30, 50]  # the sample below 25 stays: it bounds 25
    history.prune(30)
    assert history.latest == [30, 50]


def test_seconds_behind_unknown_when_attached_behind() -> None:
    history = _History()
    history.add(1000, at(60))
    lag = partition_lag(10, 1000, at(60), history)
    assert lag["eventsBehind"] == 990 and lag["secondsBehind"] is None


class Recording(LagListener):
    """Keeps every entry, not only the latest, so the test can check each one."""

    def __init__(self) -> None:
        super().__init__()
        self.entries: list[dict[str, Any]] = []

    def record(self, progress: dict[str, Any]) -> dict[str, Any] | None:
        entry = super().record(progress)
        if entry is not None:
            self.entries.append(entry)
        return entry


@pytest.mark.slow
def test_lag_of_a_running_query_matches_its_progress_and_the_events_read(
    session: Any,
    eventhubs_emulator: EventHubsEmulator,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    listener = Recording()
    session.streams.addListener(listener)
    caplog.set_level(logging.INFO, logger="pysparksources.monitoring")
    out, checkpoint = tmp_path / "out", tmp_path / "cp"
    df = reader(session, conn, startingPosition="start", maxEventsPerTrigger=30)
    query = to_parquet(df, out, checkpoint, processingTime="300 milliseconds")
    try:
        # A few events first, so the listener has seen the hub before the burst: that sample
        # bounds when the burst's events arrived (without one, secondsBehind is unknown).
        send(conn, [f"seed-a{i}" for i in range(5)], partition_id="0")
        send(conn, [f"seed-b{i}" for i in range(5)], partition_id="1")
        wait_for_rows(query, 10, 120, "the query did not read the 10 seed events")
        # Each send alone exceeds the 30-event limit, so the query falls behind however slowly
        # the sends go on a loaded machine, and works the backlog off over several batches.
        send(conn, [f"a-{i}" for i in range(45)], partition_id="0")
        send(conn, [f"b-{i}" for i in range(35)], partition_id="1")
        wait_for_rows(query, 90, 120, "the query did not read the 90 events")
        deadline = time.monotonic() + 30  # listener events arrive asynchronously
        while len(listener.entries) < len(data_batches(query)) and time.monotonic() < deadline:
            time.sleep(0.2)
        with pytest.raises(TimeoutError, match=f"queries {query.id}; stop them"):
            listener.detach(session, query, timeout=0.2)  # still running
    finally:
        query.stop()
        listener.detach(session, query)

    by_batch = {p["batchId"]: p for p in progress(query)}
    rows = session.read.parquet(str(out)).collect()
    enqueued = {(r.partition, r.sequenceNumber): r.enqueuedTime for r in rows}
    assert len(enqueued) == 90
    lagging = 0
    for entry in listener.entries:
        (source,) = entry["sources"]
        assert source["format"] == "pyeventhub" and source["hub"] == "test"
        reported = by_batch[entry["batchId"]]["sources"][0]
        end, latest = reported["endOffset"]["test"], reported["latestOffset"]["test"]
        for pid, lag in source["partitions"].items():
            assert lag["eventsBehind"] == latest[pid] - end[pid]
            if lag["eventsBehind"] == 0 or lag["secondsBehind"] is None:
                continue
            lagging += 1
            newest = datetime.fromisoformat(lag["newestEnqueuedTime"])
            first_unread = enqueued[(pid, end[pid])]
            if first_unread.tzinfo is None:  # PySpark returns local naive datetimes
                first_unread = first_unread.astimezone(timezone.utc)
            truth = (newest - first_unread).total_seconds()
            assert lag["secondsBehind"] - 0.002 <= truth <= lag["secondsBehindMax"] + 0.002
    assert lagging > 0, listener.entries  # the limit made the query fall behind at least once
    assert listener.lag()[str(query.id)]["batchId"] == listener.entries[-1]["batchId"]
    assert json.loads(listener.lag_json()) == listener.lag()
    # The enqueued times are reported in the progress only, never in the checkpoint.
    assert LAST in json.dumps(by_batch[max(by_batch)]["sources"][0]["latestOffset"])
    for offsets in (checkpoint / "offsets").glob("[0-9]*"):
        assert LAST not in offsets.read_text()
    # What Spark stored decodes to the typed offset and encodes back to the same bytes.
    stored = checkpoint_offsets(checkpoint)
    assert stored and [HubOffset.from_json(line).to_json() for line in stored] == stored
    assert any("events behind" in r.getMessage() for r in caplog.records)


LAST = "@lastEnqueuedTime"
