"""pyrate's options: the one declaration the parser, the defaults and the docs come from.

Every option declared here is in :data:`TABLE`, in this order (the docs' order); an option
whose value :class:`~pysparksources.rate.config.RateConfig` holds as parsed names its field
(``config_field``) and the parser copies it there.
"""

from __future__ import annotations

from pysparksources._core.option_table import Duration, Integer, OptionTable, Use
from pysparksources.rate import NAME

INT_MAX = 2**31 - 1

ROWS_PER_SECOND = Integer(
    name="rowsPerSecond",
    doc="Time mode: rows generated per second, like Spark's rate.",
    default="1",
    minimum=1,
    uses=Use.READ,
    config_field="RateConfig.rows_per_second",
)
RAMP_UP_TIME = Duration(
    name="rampUpTime",
    doc=(
        "Time mode: how long the rate ramps up to rowsPerSecond (10s, 2m, ...); whole "
        "seconds, like Spark."
    ),
    default="0s",
    uses=Use.READ,
)
ROWS_PER_BATCH = Integer(
    name="rowsPerBatch",
    doc="Switches to batch mode, like Spark's rate-micro-batch: rows per logical batch.",
    minimum=1,
    uses=Use.READ,
    config_field="RateConfig.rows_per_batch",
)
START_TIMESTAMP = Integer(
    name="startTimestamp",
    doc="Batch mode: timestamp (epoch ms) of the first batch.",
    default="0",
    minimum=0,
    uses=Use.READ,
    config_field="RateConfig.start_timestamp_ms",
)
ADVANCE_MILLIS_PER_BATCH = Integer(
    name="advanceMillisPerBatch",
    doc="Batch mode: milliseconds the timestamp advances per batch.",
    default="1000",
    minimum=0,
    maximum=INT_MAX,
    uses=Use.READ,
    config_field="RateConfig.advance_ms",
)
NUM_PARTITIONS = Integer(
    name="numPartitions",
    doc=(
        "Partitions per batch; value v goes to partition v mod n. Spark's rate defaults to the "
        "default parallelism, which Python sources cannot read: set it on clusters."
    ),
    shown_default="driver CPU count",
    minimum=1,
    maximum=INT_MAX,
    uses=Use.READ,
)
MAX_ROWS_PER_TRIGGER = Integer(
    name="maxRowsPerTrigger",
    doc="Admission control: at most this many rows per micro-batch (ReadMaxRows).",
    minimum=1,
    uses=Use.STREAM_READ,
    config_field="RateConfig.max_rows_per_trigger",
)
TOTAL_ROWS = Integer(
    name="totalRows",
    doc="Makes the stream finite: no rows beyond this count. Required for spark.read.",
    minimum=1,
    uses=Use.READ,
    config_field="RateConfig.total_rows",
)

# Each mode's own options: given in the other mode they are an error, not silently ignored.
TIME_ONLY = (ROWS_PER_SECOND, RAMP_UP_TIME)
BATCH_ONLY = (START_TIMESTAMP, ADVANCE_MILLIS_PER_BATCH)

TABLE = OptionTable.declared(NAME, globals())
