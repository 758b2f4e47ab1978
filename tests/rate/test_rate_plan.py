"""pyrate's planning and generation driven like the engine drives them, without a JVM."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from pysparksources._core.compat import (
    ReadAllAvailable,
    ReadMaxFiles,
    ReadMaxRows,
    ReadMinRows,
)
from pysparksources._core.option_table import Use
from pysparksources.errors import UnsupportedError
from pysparksources.rate._generate import RATE_ARROW_SCHEMA, generate
from pysparksources.rate._timeline import java_round, second_of_value, value_at_second
from pysparksources.rate.config import RateConfig
from pysparksources.rate.options import parse_options
from pysparksources.rate.reader import RateBatchReader, RateStreamReader


def stream_config(raw: dict[str, str]) -> RateConfig:
    """pyrate's config for a readStream with these options."""
    return parse_options(raw, Use.STREAM_READ)


class FakeClock:
    """A settable wall clock in epoch milliseconds."""

    def __init__(self, now_ms: int) -> None:
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms


def rows_of(reader: RateStreamReader, start: dict, end: dict) -> list[tuple[int, int, int]]:
    """(partition, value, timestamp micros) for every row of the batch start -> end."""
    rows = []
    for index, part in enumerate(reader.partitions(start, end)):
        for batch in reader.read(part):
            assert batch.schema == RATE_ARROW_SCHEMA
            ts = batch.column("timestamp").cast(pa.int64()).to_pylist()
            rows += [
                (index, v, t) for v, t in zip(batch.column("value").to_pylist(), ts, strict=True)
            ]
    return rows


def test_value_at_second_matches_sparks_ramp_up_example() -> None:
    # Spark's own comment: rampUpTime 4s, rowsPerSecond 10 -> 0 2 6 12 20 30 40.
    assert [value_at_second(s, 10, 4) for s in range(7)] == [0, 2, 6, 12, 20, 30, 40]
    assert [value_at_second(s, 7, 0) for s in range(4)] == [0, 7, 14, 21]
    # rowsPerSecond smaller than the ramp: integer division makes the ramp emit nothing.
    assert [value_at_second(s, 3, 5) for s in range(8)] == [0, 0, 0, 0, 0, 0, 3, 6]


def test_second_of_value_is_the_last_second_not_past_the_value() -> None:
    assert second_of_value(25, 0, 6, 10, 4) == 4
    assert second_of_value(30, 0, 6, 10, 4) == 5
    assert second_of_value(0, 0, 5, 3, 5) == 5


@pytest.mark.parametrize(
    ("x", "expected"), [(0.5, 1), (1.5, 2), (2.5, 3), (2.4999, 2), (-0.5, 0), (7.0, 7)]
)
def test_java_round_rounds_ties_up_like_math_round(x: float, expected: int) -> None:
    assert java_round(x) == expected


def test_time_mode_batch_matches_sparks_formula() -> None:
    clock = FakeClock(1_000_000)
    reader = RateStreamReader(
        stream_config({"rowsPerSecond": "7", "numPartitions": "3"}), clock=clock
    )
    start = reader.initialOffset()
    assert start == {"createdMs": 1_000_000, "second": 0, "value": 0}
    clock.now_ms += 2_999  # two whole seconds elapsed
    end = reader.latestOffset(start, ReadAllAvailable())
    assert end == {"createdMs": 1_000_000, "second": 2, "value": 14}
    rows = rows_of(reader, start, end)
    assert sorted(v for _, v, _ in rows) == list(range(14))
    for partition, value, micros in rows:
        assert value % 3 == partition  # Spark's striping: rangeStart + p + k * numPartitions
        assert micros == (1_000_000 + java_round(value * 2000 / 14)) * 1000


def test_time_mode_limit_splits_without_changing_values() -> None:
    clock = FakeClock(0)
    config = stream_config({"rowsPerSecond": "10", "rampUpTime": "4s", "numPartitions": "2"})
    reader = RateStreamReader(config, clock=clock)
    start = reader.initialOffset()
    clock.now_ms = 6_500
    full_end = reader.latestOffset(start, ReadAllAvailable())
    assert full_end["value"] == 40 and full_end["second"] == 6
    values, offset, batches = [], start, 0
    while offset != full_end:
        nxt = reader.latestOffset(offset, ReadMaxRows(9))
        assert 0 < nxt["value"] - offset["value"] <= 9
        values += [v for _, v, _ in rows_of(reader, offset, nxt)]
        offset, batches = nxt, batches + 1
    assert batches == 5
    assert sorted(values) == list(range(40))


def test_replayed_batch_is_identical() -> None:
    clock = FakeClock(123_456)
    config = stream_config({"rowsPerSecond": "1000", "numPartitions": "2"})
    first = RateStreamReader(config, clock=clock)
    start = first.initialOffset()
    clock.now_ms += 5_000
    end = first.latestOffset(start, ReadMaxRows(1234))
    # A new reader (a restarted query) planning from the checkpointed offsets.
    again = RateStreamReader(config, clock=FakeClock(999_999_999))
    assert rows_of(first, start, end) == rows_of(again, json.loads(json.dumps(start)), end)


def test_offsets_serialize_with_sorted_keys() -> None:
    reader = RateStreamReader(stream_config({"rowsPerBatch": "5"}), clock=FakeClock(0))
    offset = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    assert json.dumps(offset) == '{"offset": 5, "timestamp": 1000}'


def test_batch_mode_rows_match_rate_micro_batch() -> None:
    options = {"rowsPerBatch": "10", "numPartitions": "3", "startTimestamp": "5000"}
    reader = RateStreamReader(stream_config(options | {"advanceMillisPerBatch": "250"}))
    offset = reader.initialOffset()
    assert offset == {"offset": 0, "timestamp": 5000}
    for batch in range(3):
        end = reader.latestOffset(offset, reader.getDefaultReadLimit())
        assert end == {"offset": 10 * (batch + 1), "timestamp": 5000 + 250 * (batch + 1)}
        rows = rows_of(reader, offset, end)
        assert sorted(v for _, v, _ in rows) == list(range(10 * batch, 10 * batch + 10))
        assert {t for _, _, t in rows} == {(5000 + 250 * batch) * 1000}
        assert all((v - 10 * batch) % 3 == p for p, v, _ in rows)
        offset = end


def test_batch_mode_limit_keeps_each_row_in_its_logical_batch() -> None:
    reader = RateStreamReader(stream_config({"rowsPerBatch": "10", "maxRowsPerTrigger": "4"}))
    assert reader.getDefaultReadLimit() == ReadMaxRows(4)
    offset, sizes, stamps = reader.initialOffset(), [], {}
    while offset["offset"] < 20:
        end = reader.latestOffset(offset, reader.getDefaultReadLimit())
        sizes.append(end["offset"] - offset["offset"])
        stamps |= {v: t for _, v, t in rows_of(reader, offset, end)}
        offset = end
    assert sizes == [4, 4, 2, 4, 4, 2]
    assert all(t == (v // 10) * 1_000_000 for v, t in stamps.items())


def test_available_now_reads_under_the_limit_then_stops() -> None:
    options = {"rowsPerBatch": "100", "totalRows": "250", "maxRowsPerTrigger": "60"}
    reader = RateStreamReader(stream_config(options))
    reader.prepareForTriggerAvailableNow()
    offset, sizes = reader.initialOffset(), []
    while True:
        end = reader.latestOffset(offset, ReadMaxRows(60))
        if end == offset:
            break
        sizes.append(end["offset"] - offset["offset"])
        offset = end
    assert sizes == [60, 60, 60, 60, 10]
    assert reader.reportLatestOffset() == {"offset": 250, "timestamp": 2000}


def test_available_now_in_time_mode_freezes_the_target() -> None:
    clock = FakeClock(0)
    reader = RateStreamReader(stream_config({"rowsPerSecond": "5"}), clock=clock)
    reader.prepareForTriggerAvailableNow()
    start = reader.initialOffset()
    clock.now_ms = 3_000
    first = reader.latestOffset(start, ReadMaxRows(10))
    clock.now_ms = 60_000  # rows that appear later are not part of this run
    second = reader.latestOffset(first, ReadMaxRows(10))
    assert (first["value"], second["value"]) == (10, 15)
    assert reader.latestOffset(second, ReadMaxRows(10)) == second


def test_available_now_in_time_mode_delivers_a_finite_stream_whole() -> None:
    """A new time-mode query has no rows due yet; with totalRows it reads them all anyway."""
    clock = FakeClock(1_000_000)
    options = {"rowsPerSecond": "10", "totalRows": "25", "maxRowsPerTrigger": "10"}
    reader = RateStreamReader(stream_config(options), clock=clock)
    reader.prepareForTriggerAvailableNow()
    start = offset = reader.initialOffset()
    sizes = []
    while (end := reader.latestOffset(offset, ReadMaxRows(10))) != offset:
        sizes.append(end["value"] - offset["value"])
        offset = end
    assert sizes == [10, 10, 5]
    assert offset == {"createdMs": 1_000_000, "second": 2, "value": 25}
    rows = rows_of(reader, start, offset)
    # Batches cut at whole seconds: Spark's rate timestamps, creation + value * 100 ms.
    assert sorted((v, t) for _, v, t in rows) == [
        (v, (1_000_000 + v * 100) * 1000) for v in range(25)
    ]
    assert reader.reportLatestOffset() == offset


def test_total_rows_ends_the_stream() -> None:
    clock = FakeClock(0)
    reader = RateStreamReader(
        stream_config({"rowsPerSecond": "10", "totalRows": "25"}), clock=clock
    )
    start = reader.initialOffset()
    clock.now_ms = 100_000
    end = reader.latestOffset(start, ReadAllAvailable())
    assert end["value"] == 25
    assert reader.latestOffset(end, ReadAllAvailable()) == end
    assert sorted(v for _, v, _ in rows_of(reader, start, end)) == list(range(25))


def test_read_min_rows_waits_for_enough_rows() -> None:
    clock = FakeClock(0)
    reader = RateStreamReader(stream_config({"rowsPerSecond": "10"}), clock=clock)
    start = reader.initialOffset()
    clock.now_ms = 1_000
    assert reader.latestOffset(start, ReadMinRows(15)) == start
    clock.now_ms = 2_000
    assert reader.latestOffset(start, ReadMinRows(15))["value"] == 20


def test_file_limits_are_refused() -> None:
    reader = RateStreamReader(stream_config({"rowsPerBatch": "5"}))
    with pytest.raises(UnsupportedError, match="pyrate: read limit ReadMaxFiles"):
        reader.latestOffset(reader.initialOffset(), ReadMaxFiles(3))


def test_checkpoint_from_the_other_mode_is_a_clear_error() -> None:
    reader = RateStreamReader(stream_config({"rowsPerBatch": "5"}))
    with pytest.raises(ValueError, match=r"is not an offset of batch mode .*other options"):
        reader.latestOffset({"createdMs": 0, "second": 1, "value": 3}, ReadAllAvailable())


def test_batch_reader_covers_total_rows_in_every_partition() -> None:
    options = {"rowsPerBatch": "4", "totalRows": "10", "numPartitions": "3"}
    reader = RateBatchReader(parse_options(options, Use.BATCH_READ))
    parts = reader.partitions()
    assert len(parts) == 3
    rows = [
        (v, t)
        for part in parts
        for batch in reader.read(part)
        for v, t in zip(
            batch.column("value").to_pylist(),
            batch.column("timestamp").cast(pa.int64()).to_pylist(),
            strict=True,
        )
    ]
    assert sorted(rows) == [(v, (v // 4) * 1_000_000) for v in range(10)]


def test_generation_chunks_large_slices() -> None:
    reader = RateStreamReader(stream_config({"rowsPerBatch": "1000", "numPartitions": "1"}))
    part = reader.partitions({"offset": 0, "timestamp": 0}, {"offset": 1000, "timestamp": 1000})[0]
    batches = list(generate(part, chunk_rows=300))
    assert [b.num_rows for b in batches] == [300, 300, 300, 100]
    assert pa.Table.from_batches(batches).column("value").to_pylist() == list(range(1000))
