"""Offsets and batch planning for pyrate's two modes.

Time mode mirrors Spark's ``rate`` source; its offset (:class:`TimeOffset`) also carries the
stream's creation time and the row position, so a batch cut short by admission control can end
inside a second. Batch mode mirrors ``rate-micro-batch`` and keeps Spark's offset
(:class:`BatchOffset`). Either way an offset alone determines every row of the batch that ends
at it: a replayed batch is identical. The planners work on typed offsets; the reader converts
at Spark's boundary.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pyspark.sql.datasource import InputPartition

from pysparksources.errors import LimitExceededError, OptionError
from pysparksources.rate import NAME
from pysparksources.rate._timeline import max_second, second_of_value, value_at_second
from pysparksources.rate.config import RateConfig
from pysparksources.rate.offsets import BatchOffset, TimeOffset

__all__ = ["BatchModePlanner", "Planner", "RateSlice", "TimeModePlanner", "make_planner"]

Offset = TypeVar("Offset", TimeOffset, BatchOffset)


@dataclass(frozen=True)
class RateSlice(InputPartition):  # type: ignore[misc]
    """One task's share of a batch: values ``first, first + step, ...`` below ``end``.

    Timestamps follow one of Spark's two rules: ``linear`` interpolation over the seconds a
    time-mode batch spans, or ``stepped`` (one timestamp per logical batch of
    ``rows_per_batch`` rows, advancing by ``advance_ms``).
    """

    first: int
    end: int
    step: int
    rule: str
    base_ms: int
    range_start: int
    ms_per_value: float = 0.0
    rows_per_batch: int = 1
    advance_ms: int = 0


class Planner(ABC, Generic[Offset]):
    """Turns offsets into end offsets and slices; pure, so it is unit-tested without a JVM."""

    def __init__(self, config: RateConfig) -> None:
        self.config = config

    @abstractmethod
    def initial(self, now_ms: int) -> Offset: ...

    @abstractmethod
    def available(self, start: Offset, now_ms: int) -> Offset:
        """The furthest offset whose rows exist at ``now_ms`` (totalRows respected)."""

    def available_now_target(self, start: Offset, now_ms: int) -> Offset:
        """Where Trigger.AvailableNow stops: what is available at its start."""
        return self.available(start, now_ms)

    @abstractmethod
    def end_of_stream(self, start: Offset) -> Offset:
        """The offset after the last of ``totalRows`` rows (finite streams and batch reads)."""

    @abstractmethod
    def rows_between(self, start: Offset, end: Offset) -> int: ...

    @abstractmethod
    def advance(self, start: Offset, end: Offset, max_rows: int) -> Offset:
        """An offset between ``start`` and ``end`` at most ``max_rows`` rows after ``start``."""

    @abstractmethod
    def slices(self, start: Offset, end: Offset) -> list[RateSlice]: ...

    @abstractmethod
    def check(self, offset: Any) -> Offset:
        """The offset Spark handed back (from a checkpoint), decoded for this mode."""

    def _total_rows(self) -> int:
        if self.config.total_rows is None:
            raise OptionError.required(NAME, "totalRows", "batch reads need a finite stream")
        return self.config.total_rows


class TimeModePlanner(Planner[TimeOffset]):
    """Spark ``rate`` semantics: ``valueAtSecond`` rows by each whole second of the stream."""

    def _value(self, second: int) -> int:
        return value_at_second(second, self.config.rows_per_second, self.config.ramp_up_seconds)

    def initial(self, now_ms: int) -> TimeOffset:
        return TimeOffset(now_ms, 0, 0)

    def check(self, offset: Any) -> TimeOffset:
        return TimeOffset.from_json(offset)

    def available(self, start: TimeOffset, now_ms: int) -> TimeOffset:
        created = start.created_ms
        elapsed = max(0, (now_ms - created) // 1000)
        limit_second = max_second(self.config.rows_per_second)
        if elapsed > limit_second:
            raise LimitExceededError(
                NAME,
                f"the row count overflows a 64-bit long after {limit_second} seconds "
                f"at rowsPerSecond={self.config.rows_per_second}",
            )
        target = max(elapsed, start.second)
        value = self._value(target)
        total = self.config.total_rows
        if total is not None and value > total:
            value = max(total, start.value)
            target = self._second_of(value, start.second, target)
        return TimeOffset(created, target, value)

    def end_of_stream(self, start: TimeOffset) -> TimeOffset:
        total = self._total_rows()
        high = max_second(self.config.rows_per_second)
        return TimeOffset(start.created_ms, self._second_of(total, 0, high), total)

    def available_now_target(self, start: TimeOffset, now_ms: int) -> TimeOffset:
        # A finite stream is available whole, as batch mode and spark.read make it: rows not
        # yet due keep the timestamps of the seconds they belong to. An endless stream stops
        # at what is due now.
        if self.config.total_rows is None or start.value >= self.config.total_rows:
            return self.available(start, now_ms)
        return self.end_of_stream(start)

    def _second_of(self, value: int, low: int, high: int) -> int:
        cfg = self.config
        return second_of_value(value, low, high, cfg.rows_per_second, cfg.ramp_up_seconds)

    def rows_between(self, start: TimeOffset, end: TimeOffset) -> int:
        return end.value - start.value

    def advance(self, start: TimeOffset, end: TimeOffset, max_rows: int) -> TimeOffset:
        if self.rows_between(start, end) <= max_rows:
            return end
        value = start.value + max_rows
        second = self._second_of(value, start.second, end.second)
        return TimeOffset(start.created_ms, second, value)

    def slices(self, start: TimeOffset, end: TimeOffset) -> list[RateSlice]:
        first, stop = start.value, end.value
        if stop <= first:
            return []
        # The batch's rows are spread over the whole seconds it touches, as Spark spreads a
        # batch's rows over [startSeconds, endSeconds).
        window_start = start.second
        end_second = end.second
        window_end = end_second if stop == self._value(end_second) else end_second + 1
        range_start = self._value(window_start)
        range_end = self._value(window_end)
        ms_per_value = float((window_end - window_start) * 1000) / (range_end - range_start)
        base_ms = start.created_ms + window_start * 1000
        n = self.config.num_partitions
        return [
            RateSlice(first + p, stop, n, "linear", base_ms, range_start, ms_per_value)
            for p in range(n)
        ]


class BatchModePlanner(Planner[BatchOffset]):
    """Spark ``rate-micro-batch`` semantics: ``rowsPerBatch`` rows per logical batch."""

    @property
    def _rows_per_batch(self) -> int:
        assert self.config.rows_per_batch is not None
        return self.config.rows_per_batch

    def _offset(self, start: BatchOffset, value: int) -> BatchOffset:
        rpb = self._rows_per_batch
        batches = value // rpb - start.offset // rpb
        return BatchOffset(value, start.timestamp + batches * self.config.advance_ms)

    def initial(self, now_ms: int) -> BatchOffset:
        return BatchOffset(0, self.config.start_timestamp_ms)

    def check(self, offset: Any) -> BatchOffset:
        return BatchOffset.from_json(offset)

    def available(self, start: BatchOffset, now_ms: int) -> BatchOffset:
        # One logical batch per trigger, as rate-micro-batch: a micro-batch never mixes two.
        position = start.offset
        boundary = (position // self._rows_per_batch + 1) * self._rows_per_batch
        if self.config.total_rows is not None:
            boundary = max(position, min(boundary, self.config.total_rows))
        return self._offset(start, boundary)

    def end_of_stream(self, start: BatchOffset) -> BatchOffset:
        return self._offset(start, self._total_rows())

    def available_now_target(self, start: BatchOffset, now_ms: int) -> BatchOffset:
        # rate-micro-batch makes one logical batch available per trigger; a finite stream
        # makes all of its remaining rows available.
        if self.config.total_rows is None:
            return self.available(start, now_ms)
        return self._offset(start, max(start.offset, self._total_rows()))

    def rows_between(self, start: BatchOffset, end: BatchOffset) -> int:
        return end.offset - start.offset

    def advance(self, start: BatchOffset, end: BatchOffset, max_rows: int) -> BatchOffset:
        if self.rows_between(start, end) <= max_rows:
            return end
        return self._offset(start, start.offset + max_rows)

    def slices(self, start: BatchOffset, end: BatchOffset) -> list[RateSlice]:
        first, stop = start.offset, end.offset
        if stop <= first:
            return []
        rpb = self._rows_per_batch
        aligned = first // rpb * rpb
        n = self.config.num_partitions
        base = start.timestamp
        advance = self.config.advance_ms
        return [
            RateSlice(first + p, stop, n, "stepped", base, aligned, 0.0, rpb, advance)
            for p in range(n)
        ]


def make_planner(config: RateConfig) -> Planner[Any]:
    return BatchModePlanner(config) if config.batch_mode else TimeModePlanner(config)
