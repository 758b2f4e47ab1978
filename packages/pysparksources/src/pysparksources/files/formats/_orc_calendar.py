"""Dates Spark wrote to ORC, moved from Spark's hybrid calendar to the proleptic Gregorian one.

Spark stores ORC dates the way Hive did: day numbers of the hybrid Julian/Gregorian calendar
(Julian before 1582-10-15), and converts them back when it reads. pyarrow reads the raw day
numbers, so every date before 1582-10-15 would come out shifted by days (by two at 0001-01-01).
Files written by ORC's Java writer (Spark, Hive) are converted here, as Spark's reader does.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["julian_to_gregorian"]

_GREGORIAN_START = -141427  # 1582-10-15, the first Gregorian day, as days since 1970-01-01
_UNIX_JDN = 2_440_588  # Julian day number of 1970-01-01


def _julian_days_to_proleptic(days: np.ndarray) -> np.ndarray:
    """Hybrid-calendar day numbers (Julian dates) -> proleptic Gregorian day numbers."""
    c = days + _UNIX_JDN + 32_082
    d = (4 * c + 3) // 1461
    e = c - (1461 * d) // 4
    m = (5 * e + 2) // 153
    day = e - (153 * m + 2) // 5 + 1
    month = m + 3 - 12 * (m // 10)
    year = d - 4800 + m // 10
    # days_from_civil, proleptic Gregorian
    year = year - (month <= 2)
    era = np.floor_divide(year, 400)
    yoe = year - era * 400
    doy = (153 * (month + np.where(month > 2, -3, 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    result: np.ndarray = era * 146_097 + doe - 719_468
    return result


def _dates(column: pa.Array) -> pa.Array:
    days = column.view(pa.int32())
    if not len(days) or pc.min(days).as_py() is None or pc.min(days).as_py() >= _GREGORIAN_START:
        return column
    values = days.fill_null(0).to_numpy().astype(np.int64)
    old = values < _GREGORIAN_START
    values[old] = _julian_days_to_proleptic(values[old])
    mask = column.is_null().to_numpy(zero_copy_only=False) if column.null_count else None
    return pa.array(values.astype(np.int32), pa.int32(), mask=mask).view(pa.date32())


def julian_to_gregorian(column: pa.Array) -> pa.Array:
    """``column`` with every date (at any depth) converted; other values untouched."""
    dtype = column.type
    if pa.types.is_date32(dtype):
        return _dates(column)
    if not pa.types.is_nested(dtype):
        return column
    if column.offset:
        column = pa.concat_arrays([column])
    mask = column.is_null() if column.null_count else None
    if pa.types.is_struct(dtype):
        children = [julian_to_gregorian(child) for child in column.flatten()]
        return pa.StructArray.from_arrays(children, fields=list(dtype), mask=mask)
    if pa.types.is_map(dtype):
        keys, items = julian_to_gregorian(column.keys), julian_to_gregorian(column.items)
        return pa.MapArray.from_arrays(column.offsets, keys, items, type=dtype, mask=mask)
    values = julian_to_gregorian(column.values)
    return pa.ListArray.from_arrays(column.offsets, values, type=dtype, mask=mask)
