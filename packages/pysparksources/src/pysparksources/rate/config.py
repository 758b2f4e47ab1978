"""What pyrate's planner and tasks know of the options: one frozen, picklable value."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RATE_SCHEMA", "RateConfig"]

RATE_SCHEMA = "timestamp TIMESTAMP, value BIGINT"


@dataclass(frozen=True)
class RateConfig:
    """Everything pyrate needs to plan and generate rows; built by ``options.parse_options``."""

    num_partitions: int
    rows_per_second: int
    ramp_up_seconds: int
    rows_per_batch: int | None
    start_timestamp_ms: int
    advance_ms: int
    max_rows_per_trigger: int | None
    total_rows: int | None

    @property
    def batch_mode(self) -> bool:
        return self.rows_per_batch is not None
