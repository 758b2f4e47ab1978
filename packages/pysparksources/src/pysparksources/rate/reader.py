"""pyrate's readers, in the order the engine calls them.

Driver: getDefaultReadLimit -> initialOffset -> latestOffset(start, limit) -> reportLatestOffset
-> partitions(start, end) -> commit(end). Executors: read(slice), which needs nothing but the
slice itself. Spark 4.0 and 4.1 call ``latestOffset()`` alone: ``EngineCalls`` supplies the
start and limit there (``_core/engine_calls.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader, InputPartition

from pysparksources._core.compat import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    ReadMinRows,
    SupportsTriggerAvailableNow,
)
from pysparksources._core.datasource import read_planned
from pysparksources._core.engine_calls import EngineCalls
from pysparksources.errors import UnsupportedError
from pysparksources.rate import NAME
from pysparksources.rate._generate import generate
from pysparksources.rate.config import RateConfig
from pysparksources.rate.offsets import RateOffset
from pysparksources.rate.planning import Planner, RateSlice, make_planner

__all__ = ["RateBatchReader", "RateStreamReader"]

Offset = dict[str, Any]  # as Spark passes and takes offsets: rate/offsets.py's, encoded


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class RateStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):  # type: ignore[misc]
    """Micro-batch reader with admission control and Trigger.AvailableNow."""

    def __init__(
        self, config: RateConfig, schema: Any = None, *, clock: Callable[[], int] = wall_clock_ms
    ) -> None:
        self._config = config
        self._planner: Planner[Any] = make_planner(config)
        self._clock = clock
        self._initial: Offset | None = None
        self._last_start: RateOffset | None = None
        self._available_now = False
        self._frozen_target: RateOffset | None = None
        self._engine = EngineCalls()

    def getDefaultReadLimit(self) -> ReadLimit:
        if self._config.max_rows_per_trigger is None:
            return ReadAllAvailable()
        return ReadMaxRows(self._config.max_rows_per_trigger)

    def initialOffset(self) -> Offset:
        # Spark asks more than once while planning the first batch: the answer must not move.
        if self._initial is None:
            initial: RateOffset = self._planner.initial(self._clock())
            self._initial = initial.to_dict()
        return self._initial

    def prepareForTriggerAvailableNow(self) -> None:
        self._available_now = True
        self._frozen_target = None

    def _available(self, start: RateOffset) -> RateOffset:
        if not self._available_now:
            available: RateOffset = self._planner.available(start, self._clock())
            return available
        if self._frozen_target is None:
            # Spark calls prepare before it knows the start offset: freeze at the first call.
            self._frozen_target = self._planner.available_now_target(start, self._clock())
        return self._frozen_target

    def latestOffset(self, start: Offset | None = None, limit: ReadLimit | None = None) -> Offset:
        start, limit = self._engine.arguments(
            start, limit, self.initialOffset, self.getDefaultReadLimit
        )
        begin: RateOffset = self._planner.check(start)
        self._last_start = begin
        end = self._available(begin)
        rows = self._planner.rows_between(begin, end)
        if rows <= 0:
            return (begin if rows < 0 else end).to_dict()
        if isinstance(limit, ReadMaxRows):
            capped: RateOffset = self._planner.advance(begin, end, limit.max_rows)
            self._engine.capped(capped != end)
            return capped.to_dict()
        if isinstance(limit, ReadMinRows) and rows < limit.min_rows:
            return begin.to_dict()
        if isinstance(limit, (ReadAllAvailable, ReadMinRows)):
            return end.to_dict()
        raise UnsupportedError(
            NAME, f"read limit {limit!r}: pyrate counts rows, not files or bytes"
        )

    def reportLatestOffset(self) -> Offset | None:
        if self._last_start is None:
            return None
        return self._available(self._last_start).to_dict()

    def partitions(self, start: Offset, end: Offset) -> list[InputPartition]:
        self._engine.planned(end)
        return list(self._planner.slices(self._planner.check(start), self._planner.check(end)))

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_planned(partition, RateSlice, generate)

    def commit(self, end: Offset) -> None:
        """Nothing to release: generated rows need no acknowledgement."""

    def stop(self) -> None:
        self._engine.warn_if_cut_short(NAME, "maxRowsPerTrigger")


class RateBatchReader(DataSourceReader):  # type: ignore[misc]
    """``spark.read.format("pyrate")``: the first ``totalRows`` rows of the stream."""

    def __init__(
        self, config: RateConfig, schema: Any = None, *, clock: Callable[[], int] = wall_clock_ms
    ) -> None:
        planner = make_planner(config)
        start = planner.initial(clock())
        self._slices = planner.slices(start, planner.end_of_stream(start))

    def partitions(self) -> list[InputPartition]:
        return list(self._slices)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_planned(partition, RateSlice, generate)
