"""A stand-in for Spark's Python workers on one machine: a process that reads the partition
ranges it is handed through pyeventhub's receiver cache and keeps its receivers parked between
them, as a reused worker does (used by test_ehsource_parked_links.py)."""

from __future__ import annotations

import multiprocessing
from typing import Any

__all__ = ["worker"]


def worker(options: dict[str, str], ranges: Any, results: Any) -> None:
    """Read each ``(partition, start, until)`` from ``ranges`` until None; report
    ``(events, error)`` for each."""
    from pysparksources._core.option_table import Use
    from pysparksources.eventhubs.options import parse_options
    from pysparksources.eventhubs.planning import EventHubPartition
    from pysparksources.eventhubs.reader import read_partition

    config = parse_options(options, Use.STREAM_READ)
    while (item := ranges.get()) is not None:
        partition, start, until = item
        try:
            part = EventHubPartition(config, partition, start, until, 0)
            results.put((sum(batch.num_rows for batch in read_partition(part)), None))
        except Exception as error:  # the test reports it
            results.put((0, f"{type(error).__name__}: {error}"))


def context() -> Any:
    return multiprocessing.get_context("spawn")
