"""A read task's ranges read at once (``_task_ranges.read_ranges``), with plain generators
standing in for one range's read: every batch arrives, the first error ends the task, and
every range's read is closed however the task ends (that is what closes or parks receivers)."""

from __future__ import annotations

import threading
import time
from collections.abc import Generator

import pyarrow as pa
import pytest

from pysparksources._core.option_table import Use
from pysparksources.eventhubs._task_ranges import read_ranges
from pysparksources.eventhubs.options import parse_options
from pysparksources.eventhubs.planning import EventHubPartition

CONN = "Endpoint=sb://127.0.0.1:5672;SharedAccessKeyName=k;SharedAccessKey=SECRETKEY42;EntityPath=h"
CONFIG = parse_options({"connectionString": CONN}, Use.STREAM_READ)


def _ranges(count: int) -> tuple[EventHubPartition, ...]:
    return tuple(EventHubPartition(CONFIG, str(p), 0, 10, 0) for p in range(count))


class _Reads:
    """One generator per range: ``batches`` record batches of the range's partition id, a
    pause between them, optionally an error after ``fail_after``; records how each ended."""

    def __init__(self, batches: int, pause: float = 0.0, fail: str | None = None) -> None:
        self.batches, self.pause, self.fail = batches, pause, fail
        self.ended: dict[str, str] = {}
        self.threads: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, part: EventHubPartition) -> Generator[pa.RecordBatch, None, None]:
        how = "closed"
        try:
            self.threads.add(threading.current_thread().name)
            for i in range(self.batches):
                if self.fail == part.partition_id and i == 1:
                    how = "failed"
                    raise RuntimeError(f"range {part.partition_id} broke")
                yield pa.record_batch({"partition": [part.partition_id], "i": [i]})
                time.sleep(self.pause)
            how = "done"
        finally:
            with self._lock:
                self.ended[part.partition_id] = how


def _wait_for(condition: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.01)


def test_every_batch_of_every_range_arrives_once() -> None:
    reads = _Reads(batches=5, pause=0.001)
    got = [
        (b.column("partition")[0].as_py(), b.column("i")[0].as_py())
        for b in read_ranges(_ranges(4), reads)
    ]
    assert sorted(got) == [(str(p), i) for p in range(4) for i in range(5)]
    assert reads.ended == {str(p): "done" for p in range(4)}
    assert len(reads.threads) == 4  # a thread each: the ranges are read at the same time


def test_one_range_is_read_in_the_tasks_own_thread() -> None:
    reads = _Reads(batches=3)
    assert sum(b.num_rows for b in read_ranges(_ranges(1), reads)) == 3
    assert reads.threads == {threading.current_thread().name}


def test_the_first_error_ends_the_task_and_the_other_ranges_are_closed() -> None:
    reads = _Reads(batches=1000, pause=0.005, fail="2")
    with pytest.raises(RuntimeError, match="range 2 broke"):
        for _ in read_ranges(_ranges(4), reads):
            pass
    _wait_for(lambda: len(reads.ended) == 4)
    assert reads.ended == {"0": "closed", "1": "closed", "2": "failed", "3": "closed"}


def test_a_task_that_stops_early_closes_every_range() -> None:
    reads = _Reads(batches=1000, pause=0.001)
    batches = read_ranges(_ranges(3), reads)
    for _ in range(5):
        next(batches)
    batches.close()  # Spark stops taking rows (a limit, a cancelled task)
    _wait_for(lambda: len(reads.ended) == 3)
    assert reads.ended == {str(p): "closed" for p in range(3)}
