"""The arithmetic of Spark's rate sources, shared by planning and reading.

Spark's ``rate`` source emits ``valueAtSecond(s)`` rows by second ``s`` of the stream, ramping
up linearly during ``rampUpTime``; rows of a batch get timestamps interpolated over the whole
seconds the batch spans. These functions reproduce that arithmetic exactly (Java ``long``
integer division and ``Math.round`` ties-up) so pyrate emits the same values and timestamps.
"""

from __future__ import annotations

import math

__all__ = ["java_round", "max_second", "second_of_value", "value_at_second"]

LONG_MAX = 2**63 - 1


def value_at_second(seconds: int, rows_per_second: int, ramp_up_seconds: int) -> int:
    """Number of rows Spark's ``rate`` source has emitted after ``seconds`` seconds."""
    speed_delta = rows_per_second // (ramp_up_seconds + 1)
    if seconds <= ramp_up_seconds:
        # Same evaluation order as Spark, so intermediate products match its Long arithmetic.
        if seconds % 2 == 1:
            return (seconds + 1) // 2 * speed_delta * seconds
        return seconds // 2 * speed_delta * (seconds + 1)
    ramp_part = value_at_second(ramp_up_seconds, rows_per_second, ramp_up_seconds)
    return ramp_part + (seconds - ramp_up_seconds) * rows_per_second


def max_second(rows_per_second: int) -> int:
    """The last second whose value fits in a Java long (Spark's overflow guard)."""
    return LONG_MAX // rows_per_second


def second_of_value(
    value: int, low: int, high: int, rows_per_second: int, ramp_up_seconds: int
) -> int:
    """Largest second ``s`` in ``[low, high]`` with ``value_at_second(s) <= value``.

    ``value_at_second`` is non-decreasing, so a binary search finds it; ``low`` must satisfy
    the condition.
    """
    while low < high:
        mid = (low + high + 1) // 2
        if value_at_second(mid, rows_per_second, ramp_up_seconds) <= value:
            low = mid
        else:
            high = mid - 1
    return low


def java_round(x: float) -> int:
    """Java's ``Math.round(double)``: nearest long, ties towards positive infinity."""
    floor = math.floor(x)
    return int(floor) + (1 if x - floor >= 0.5 else 0)
