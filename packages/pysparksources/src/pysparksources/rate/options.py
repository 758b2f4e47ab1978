"""pyrate's option parser: the raw options of one use in, a :class:`RateConfig` out.

Only the driver imports this module (through the data source); readers get the config.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pysparksources._core.option_table import Use
from pysparksources._core.options import Options
from pysparksources.errors import OptionError
from pysparksources.rate import NAME
from pysparksources.rate._option_table import (
    BATCH_ONLY,
    NUM_PARTITIONS,
    RAMP_UP_TIME,
    ROWS_PER_BATCH,
    ROWS_PER_SECOND,
    TABLE,
    TIME_ONLY,
    TOTAL_ROWS,
)
from pysparksources.rate._timeline import max_second
from pysparksources.rate.config import RATE_SCHEMA, RateConfig

__all__ = ["parse_options", "read_schema"]


def parse_options(raw: Mapping[str, str], use: Use, schema: Any = None) -> RateConfig:
    """Validate pyrate's options for ``use``; raise :class:`OptionError` on the first bad one.

    The options that name a field of :class:`RateConfig` (``config_field``) are copied there by
    ``opts.fill``; this function checks the modes and computes the other fields.
    """
    opts = Options(TABLE, raw, use)
    batch_mode = opts.get(ROWS_PER_BATCH) is not None
    for option in TIME_ONLY if batch_mode else BATCH_ONLY:
        if opts.has(option):
            mode = "without rowsPerBatch (time mode)" if batch_mode else "with rowsPerBatch"
            raise opts.error(option, f"this option applies only {mode}")
    rows_per_second = opts.value(ROWS_PER_SECOND)
    ramp_up = int(opts.value(RAMP_UP_TIME))
    if ramp_up > max_second(rows_per_second):
        raise opts.error(
            RAMP_UP_TIME,
            f"at most {max_second(rows_per_second)}s with rowsPerSecond={rows_per_second} "
            "(larger values overflow a 64-bit row count)",
        )
    if use == Use.BATCH_READ and opts.get(TOTAL_ROWS) is None:
        raise OptionError.required(
            NAME,
            TOTAL_ROWS.name,
            "batch reads (spark.read) need an integer >= 1 saying how many rows to produce",
        )
    return opts.fill(
        RateConfig,
        num_partitions=opts.get(NUM_PARTITIONS) or os.cpu_count() or 1,
        ramp_up_seconds=ramp_up,
    )


def read_schema(config: RateConfig) -> str:
    """The schema of every pyrate read: Spark's rate schema."""
    return RATE_SCHEMA
