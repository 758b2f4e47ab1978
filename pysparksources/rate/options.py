"""pyrate's options, validated when the query is defined (``load()``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from pysparksources._options import Options
from pysparksources.rate._timeline import max_second

__all__ = ["OPTIONS", "RateConfig", "parse_rate_options"]

SOURCE = "pyrate"
INT_MAX = 2**31 - 1

# name -> (default shown in the README, meaning). The README table is checked against this.
OPTIONS: dict[str, tuple[str, str]] = {
    "rowsPerSecond": ("1", "time mode: rows generated per second (like Spark's rate)"),
    "rampUpTime": ("0s", "time mode: seconds to ramp up to rowsPerSecond (whole seconds)"),
    "rowsPerBatch": ("unset", "switches to batch mode (like rate-micro-batch): rows per batch"),
    "startTimestamp": ("0", "batch mode: timestamp (epoch ms) of the first batch"),
    "advanceMillisPerBatch": ("1000", "batch mode: ms the timestamp advances per batch"),
    "numPartitions": ("driver CPU count", "partitions per batch; value v goes to v mod n"),
    "maxRowsPerTrigger": ("unset", "admission control: at most this many rows per micro-batch"),
    "totalRows": ("unset", "finite stream: stop producing after this many rows"),
}
_TIME_ONLY = ("rowsPerSecond", "rampUpTime")
_BATCH_ONLY = ("startTimestamp", "advanceMillisPerBatch")


@dataclass(frozen=True)
class RateConfig:
    """Everything pyrate needs to plan and generate rows; picklable and immutable."""

    num_partitions: int
    rows_per_second: int = 1
    ramp_up_seconds: int = 0
    rows_per_batch: int | None = None
    start_timestamp_ms: int = 0
    advance_ms: int = 1000
    max_rows_per_trigger: int | None = None
    total_rows: int | None = None

    @property
    def batch_mode(self) -> bool:
        return self.rows_per_batch is not None


def parse_rate_options(raw: Mapping[str, str]) -> RateConfig:
    """Validate pyrate's options; raise :class:`OptionError` on the first bad one."""
    opts = Options(SOURCE, raw, OPTIONS)
    rows_per_batch = opts.integer("rowsPerBatch", minimum=1)
    mode_only = _BATCH_ONLY if rows_per_batch is None else _TIME_ONLY
    for name in mode_only:
        if opts.has(name):
            needed = (
                "only with rowsPerBatch (batch mode)"
                if rows_per_batch is None
                else ("only without rowsPerBatch (time mode)")
            )
            raise opts.error(name, f"this option applies {needed}")
    rows_per_second = opts.integer("rowsPerSecond", 1, minimum=1)
    ramp_up = int(opts.duration_seconds("rampUpTime", 0))
    if ramp_up > max_second(rows_per_second):
        raise opts.error(
            "rampUpTime",
            f"at most {max_second(rows_per_second)}s with rowsPerSecond={rows_per_second} "
            "(larger values overflow a 64-bit row count)",
        )
    num_partitions = opts.integer("numPartitions", os.cpu_count() or 1, minimum=1, maximum=INT_MAX)
    start_ts = opts.integer("startTimestamp", 0, minimum=0)
    advance = opts.integer("advanceMillisPerBatch", 1000, minimum=0, maximum=INT_MAX)
    return RateConfig(
        num_partitions=num_partitions,
        rows_per_second=rows_per_second,
        ramp_up_seconds=ramp_up,
        rows_per_batch=rows_per_batch,
        start_timestamp_ms=start_ts,
        advance_ms=advance,
        max_rows_per_trigger=opts.integer("maxRowsPerTrigger", minimum=1),
        total_rows=opts.integer("totalRows", minimum=1),
    )
