"""One read task reading the ranges of several partitions at the same time.

Each range is read by :func:`reader.read_partition` on a thread of its own, with its own
receiver from the cache, as one SDK process reads its partitions (a ``receive_batch`` thread
each): the threads share the worker's one core through the GIL, so the task decodes as fast as
one range would, while the fixed costs of a task (Spark's hand-off to a Python worker, a
receiver look-up per partition that overlaps with the others) are paid once for the group.

Record batches reach the task's thread through a queue of at most two per range, so memory
stays bounded while the slowest range catches up. The first error of any range ends the task
with that error (Spark retries the whole task: every range is read again from its start, which
the batch's offsets fix, so a retry is exactly once as a one-range task is). The other ranges
stop at their next batch and close their receivers instead of parking them.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Generator, Iterator
from typing import Any

import pyarrow as pa

from pysparksources.eventhubs.planning import EventHubPartition

__all__ = ["read_ranges"]

_DONE = object()  # a range read to its end
_OFFER_WAIT_S = 0.1  # how often a thread with a batch to hand over looks for the task's end
_JOIN_S = 0.5  # how long a finished or failed task waits for its ranges' threads, in all


def read_ranges(
    ranges: tuple[EventHubPartition, ...],
    read_one: Callable[[EventHubPartition], Generator[pa.RecordBatch, None, None]],
) -> Iterator[pa.RecordBatch]:
    """The record batches of every range, in the order they are ready."""
    if len(ranges) == 1:
        yield from read_one(ranges[0])
        return
    ready: queue.Queue[Any] = queue.Queue(maxsize=2 * len(ranges))
    ended = threading.Event()  # the task stopped taking batches (done, failed or cancelled)

    def offer(item: Any) -> bool:
        while not ended.is_set():
            try:
                ready.put(item, timeout=_OFFER_WAIT_S)
                return True
            except queue.Full:
                continue
        return False

    def run(part: EventHubPartition) -> None:
        batches = read_one(part)
        try:
            for batch in batches:
                if not offer(batch):
                    return  # the finally closes the generator: its receiver is closed
            offer(_DONE)
        except BaseException as error:  # handed to the task's thread, raised there
            offer(error)
        finally:
            batches.close()

    threads = [
        threading.Thread(
            target=run, args=(part,), daemon=True, name=f"eh-range-{part.partition_id}"
        )
        for part in ranges
    ]
    for thread in threads:
        thread.start()
    try:
        left = len(threads)
        while left:
            item = ready.get()
            if item is _DONE:
                left -= 1
            elif isinstance(item, BaseException):
                raise item
            else:
                yield item
    finally:
        ended.set()
        # A range still waiting for the service ends when its wait does; its thread is a
        # daemon and closes its receiver then. The others have ended or end at their next
        # batch: one short wait for all of them, not one per thread.
        deadline = time.monotonic() + _JOIN_S
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
