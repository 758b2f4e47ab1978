"""Reference sources and sinks that bound what any Python source or sink can reach.

``pybench_cached`` yields already-built RecordBatches (built once per Python worker and reused,
cut into ``chunkRows``-row batches, 0 = one batch per task), so its throughput is the cost of
the engine's Arrow hop and task round trip alone: the ceiling for every Python source at that
batch shape. ``pybench_tuples`` yields Python tuples, as most peer libraries do. Both produce
the rate schema and rate-micro-batch's values. ``pybench_discard`` consumes its Arrow batches
and writes nothing: the cap for any Python sink. pyfile's own ceiling is in ``_file_ceiling``.
``pybench_clock`` is the latency floor of a Python source: rows "arrive" at ``rowsPerSecond``
from the query's first ``initialOffset`` on, each stamped ``enqueuedTime`` with its arrival, and
``latestOffset`` knows of each one the moment it arrives, at no cost.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceStreamArrowWriter,
    DataSourceStreamReader,
    InputPartition,
    WriterCommitMessage,
)

from pysparksources._core.option_table import Integer, OptionTable, Use
from pysparksources._core.options import Options

__all__ = ["CachedBatchDataSource", "ClockDataSource", "DiscardDataSource", "TupleDataSource"]

_BATCHES: dict[tuple[int, int], list[Any]] = {}
_ROWS = Integer(name="rowsPerBatch", doc="rows per batch", default="1000000", minimum=1)
_PARTITIONS = Integer(name="numPartitions", doc="partitions per batch", default="2", minimum=1)
_CHUNK = Integer(
    name="chunkRows", doc="rows per RecordBatch (0: one)", default="1048576", minimum=0
)
_OPTIONS = OptionTable("pybench", (_ROWS, _PARTITIONS, _CHUNK))
_RATE = Integer(name="rowsPerSecond", doc="arrivals per second", default="1000", minimum=1)
_TOTAL = Integer(name="totalRows", doc="arrivals in all", default="1000", minimum=1)
_CLOCK_OPTIONS = OptionTable("pybench_clock", (_RATE, _TOTAL, _PARTITIONS))


@dataclass(frozen=True)
class _Slice(InputPartition):  # type: ignore[misc]
    first: int
    end: int
    step: int


class _CountingReader(DataSourceStreamReader):  # type: ignore[misc]
    """Offsets ``{"offset": n}``; every batch adds ``rowsPerBatch`` rows."""

    def __init__(self, options: dict[str, str]) -> None:
        opts = Options(_OPTIONS, options, Use.STREAM_READ)
        self.rows = opts.value(_ROWS)
        self.partitions_count = opts.value(_PARTITIONS)
        self.chunk_rows = opts.value(_CHUNK)

    def initialOffset(self) -> dict[str, int]:
        return {"offset": 0}

    def latestOffset(self, start: dict[str, int], limit: Any) -> dict[str, int]:
        return {"offset": start["offset"] + self.rows}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> list[InputPartition]:
        n = self.partitions_count
        return [_Slice(start["offset"] + p, end["offset"], n) for p in range(n)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        raise NotImplementedError


class _CachedReader(_CountingReader):
    def read(self, partition: InputPartition) -> Iterator[Any]:
        import numpy as np

        from pysparksources._core.arrow import timestamp_us_array
        from pysparksources.rate._generate import RATE_ARROW_SCHEMA

        assert isinstance(partition, _Slice)
        size = len(range(partition.first, partition.end, partition.step))
        key = (size, self.chunk_rows)
        if key not in _BATCHES:
            values = np.arange(size, dtype=np.int64)
            whole = pa.RecordBatch.from_arrays(
                [timestamp_us_array(np.zeros(size, dtype=np.int64)), pa.array(values)],
                schema=RATE_ARROW_SCHEMA,
            )
            step = self.chunk_rows or max(size, 1)  # an empty slice yields one empty batch
            _BATCHES[key] = [whole.slice(i, step) for i in range(0, size, step)]
        yield from _BATCHES[key]


class _TupleReader(_CountingReader):
    def read(self, partition: InputPartition) -> Iterator[Any]:
        assert isinstance(partition, _Slice)
        stamp = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
        for value in range(partition.first, partition.end, partition.step):
            yield (stamp, value)


class CachedBatchDataSource(DataSource):  # type: ignore[misc]
    @classmethod
    def name(cls) -> str:
        return "pybench_cached"

    def schema(self) -> str:
        return "timestamp TIMESTAMP, value BIGINT"

    def streamReader(self, schema: Any) -> _CountingReader:
        return _CachedReader(dict(self.options))


class TupleDataSource(CachedBatchDataSource):
    @classmethod
    def name(cls) -> str:
        return "pybench_tuples"

    def streamReader(self, schema: Any) -> _CountingReader:
        return _TupleReader(dict(self.options))


@dataclass(frozen=True)
class _Arrivals(InputPartition):  # type: ignore[misc]
    origin_ms: int
    first: int
    end: int
    step: int
    rate: int


class _ClockReader(DataSourceStreamReader):  # type: ignore[misc]
    """Offsets ``{"arrived": n, "origin": ms}``: row i arrives at origin + i / rowsPerSecond."""

    def __init__(self, options: dict[str, str]) -> None:
        opts = Options(_CLOCK_OPTIONS, options, Use.STREAM_READ)
        self.rate = opts.value(_RATE)
        self.total = opts.value(_TOTAL)
        self.partitions_count = opts.value(_PARTITIONS)
        self.origin_ms: int | None = None

    def initialOffset(self) -> dict[str, int]:
        # Spark asks twice while starting: the same origin both times.
        if self.origin_ms is None:
            self.origin_ms = int(time.time() * 1000)
        return {"arrived": 0, "origin": self.origin_ms}

    def latestOffset(self, start: dict[str, int], limit: Any) -> dict[str, int]:
        elapsed_ms = time.time() * 1000 - start["origin"]
        arrived = min(self.total, max(0, int(elapsed_ms * self.rate // 1000)))
        return {"arrived": max(arrived, start["arrived"]), "origin": start["origin"]}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> list[InputPartition]:
        n = self.partitions_count
        first, until, origin = start["arrived"], end["arrived"], start["origin"]
        return [_Arrivals(origin, first + p, until, n, self.rate) for p in range(n)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        import numpy as np

        from pysparksources._core.arrow import timestamp_us_array

        assert isinstance(partition, _Arrivals)
        rows = np.arange(partition.first, partition.end, partition.step, dtype=np.int64)
        micros = partition.origin_ms * 1000 + rows * 1_000_000 // partition.rate
        yield pa.RecordBatch.from_arrays([timestamp_us_array(micros)], names=["enqueuedTime"])


class ClockDataSource(DataSource):  # type: ignore[misc]
    """The latency floor: see the module docstring."""

    @classmethod
    def name(cls) -> str:
        return "pybench_clock"

    def schema(self) -> str:
        return "enqueuedTime TIMESTAMP"

    def streamReader(self, schema: Any) -> _ClockReader:
        return _ClockReader(dict(self.options))


@dataclass
class _Rows(WriterCommitMessage):  # type: ignore[misc]
    rows: int


class _DiscardWriter(DataSourceStreamArrowWriter):  # type: ignore[misc]
    def write(self, iterator: Iterator[pa.RecordBatch]) -> _Rows:
        return _Rows(sum(batch.num_rows for batch in iterator))

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        return None


class DiscardDataSource(DataSource):  # type: ignore[misc]
    """A Python sink that reads every Arrow batch and keeps nothing."""

    @classmethod
    def name(cls) -> str:
        return "pybench_discard"

    def streamWriter(self, schema: Any, overwrite: bool) -> _DiscardWriter:
        return _DiscardWriter()
