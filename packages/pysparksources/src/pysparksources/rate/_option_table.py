"""pyrate's options: the one declaration the parser, the defaults and the docs come from."""

from __future__ import annotations

from pysparksources._core.option_table import Duration, Integer, OptionTable, Use
from pysparksources.rate import NAME

__all__ = [
    "ADVANCE_MILLIS_PER_BATCH",
    "BATCH_ONLY",
    "MAX_ROWS_PER_TRIGGER",
    "NUM_PARTITIONS",
    "RAMP_UP_TIME",
    "ROWS_PER_BATCH",
    "ROWS_PER_SECOND",
    "START_TIMESTAMP",
    "TABLE",
    "TIME_ONLY",
    "TOTAL_ROWS",
]

INT_MAX = 2**31 - 1

ROWS_PER_SECOND = Integer(
    name="rowsPerSecond",
    doc="Time mode: rows generated per second, like Spark's rate.",
    default="1",
    minimum=1,
    uses=Use.READ,
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
)
START_TIMESTAMP = Integer(
    name="startTimestamp",
    doc="Batch mode: timestamp (epoch ms) of the first batch.",
    default="0",
    minimum=0,
    uses=Use.READ,
)
ADVANCE_MILLIS_PER_BATCH = Integer(
    name="advanceMillisPerBatch",
    doc="Batch mode: milliseconds the timestamp advances per batch.",
    default="1000",
    minimum=0,
    maximum=INT_MAX,
    uses=Use.READ,
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
)
TOTAL_ROWS = Integer(
    name="totalRows",
    doc="Makes the stream finite: no rows beyond this count. Required for spark.read.",
    minimum=1,
    uses=Use.READ,
)

TABLE = OptionTable(
    NAME,
    (
        ROWS_PER_SECOND,
        RAMP_UP_TIME,
        ROWS_PER_BATCH,
        START_TIMESTAMP,
        ADVANCE_MILLIS_PER_BATCH,
        NUM_PARTITIONS,
        MAX_ROWS_PER_TRIGGER,
        TOTAL_ROWS,
    ),
)
# Each mode's own options: given in the other mode they are an error, not silently ignored.
TIME_ONLY = (ROWS_PER_SECOND, RAMP_UP_TIME)
BATCH_ONLY = (START_TIMESTAMP, ADVANCE_MILLIS_PER_BATCH)
