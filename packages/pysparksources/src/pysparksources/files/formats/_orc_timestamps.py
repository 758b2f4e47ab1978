"""ORC TIMESTAMP values converted as Spark's ORC reader reads them, whatever the zones involved.

ORC stores a TIMESTAMP value as seconds since 2015-01-01 00:00:00 in the writer's zone (the
writing JVM's default zone for Spark and Hive, recorded in each stripe's footer) plus
nanoseconds. ORC's Java reader, which Spark uses, adds that base back and then keeps the wall
time: a value written in one zone reads as the same wall time in the default zone of the JVM
that reads it (the instant itself when the two zones have the same rules); it also moves
negative values with a fraction of 1 ms or more one second earlier (a correction matching its
writer's truncation of seconds). Spark then keeps the local date-time of the
``java.sql.Timestamp`` it gets, taken in Java's legacy zones (which know no rule before 1900),
in ``java.time``'s zones (see :func:`_legacy_to_modern`). Spark's session time zone plays no
part, nor does the Python process's ``TZ``.

pyarrow reads the stored seconds (see ``_orc_tail``); each stripe's values are converted
here with that stripe's writer zone and the zone of the JVM Spark's executor runs in
(:func:`jvm_default_zone`).

Zone rules come from the machine's tz database (as everywhere in pyfile), Java's from its own:
they can differ before 1970 (Java's merges Europe/Amsterdam with Europe/Brussels, for one).
Java's legacy zones also differ from the tz database for Morocco's zones (before 1900, and
after 2037 around Ramadan), which only matters when those are the writer's or reader's zone.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pyarrow as pa

from pysparksources.errors import MalformedRecordError
from pysparksources.files import NAME
from pysparksources.files.formats._orc_tail import LIST, MAP, STRUCT, TIMESTAMP, OrcTail, read_tail
from pysparksources.files.values.zones import (
    check_zone,
    instants_from_wall_times,
    jvm_default_zone,
    offsets_seconds,
)

__all__ = ["OrcTimestamps"]

_BASE_UTC = 1_420_070_400  # 2015-01-01T00:00:00Z: the origin of the seconds ORC stores
_NS_MILLIS_LIMIT = 2**63 // 1_000_000 - 1  # the largest millisecond count nanoseconds hold
_LEGACY_START_US = -2_208_988_800_000_000  # 1900-01-01T00:00:00Z, where Java's legacy zones start


class OrcTimestamps:
    """One ORC file's TIMESTAMP columns: the file for pyarrow, and the conversion per stripe."""

    def __init__(self, tail: OrcTail) -> None:
        self._tail, self._types = tail, tail.types
        self.source = tail.source
        self._has_timestamp = [False] * len(self._types)
        for index in reversed(range(len(self._types))):  # children have the larger ids
            kind, subtypes, _ = self._types[index]
            below = any(self._has_timestamp[s] for s in subtypes if s < len(self._types))
            self._has_timestamp[index] = kind == TIMESTAMP or below
        self._reader_zone = _java_zone(jvm_default_zone())
        self._writer_zone = self._reader_zone  # Java's choice for a stripe naming no zone

    @classmethod
    def open(cls, f: Any, schema: pa.Schema) -> OrcTimestamps | None:
        """The file's timestamps, or None when it has none (pyarrow's ``schema`` shows none)."""
        if not any(_has_timestamp(field.type) for field in schema):
            return None
        found = cls(read_tail(f))
        # A root that is not a struct (no columns by name) is left to pyarrow as it is.
        return found if found._types[0].kind == STRUCT and found._has_timestamp[0] else None

    def as_spark_reads(self, stripe: pa.RecordBatch, index: int) -> pa.RecordBatch:
        """Stripe ``index``'s batch (read from :attr:`source`) with Spark's timestamp values."""
        zone = self._stripe_writer_zone(index)
        _, subtypes, names = self._types[0]
        ids = dict(zip(names, subtypes, strict=False))
        columns = [
            self._convert(column, ids[field.name], zone) if field.name in ids else column
            for field, column in zip(stripe.schema, stripe.columns, strict=True)
        ]
        fields = [f.with_type(c.type) for f, c in zip(stripe.schema, columns, strict=True)]
        return pa.RecordBatch.from_arrays(
            columns, schema=pa.schema(fields, metadata=stripe.schema.metadata)
        )

    def _stripe_writer_zone(self, index: int) -> str:
        """The zone stripe ``index``'s footer names; none named: the previous stripe's."""
        named = self._tail.stripe_zone(index)
        if named is not None:
            self._writer_zone = _java_zone(named)
        return self._writer_zone

    def _convert(self, column: pa.Array, type_id: int, writer_zone: str) -> pa.Array:
        if not self._has_timestamp[type_id]:
            return column
        kind, subtypes, _ = self._types[type_id]
        if kind == TIMESTAMP:
            return _java_read(column, writer_zone, self._reader_zone)
        if column.offset:
            column = pa.concat_arrays([column])
        mask = column.is_null() if column.null_count else None
        dtype = column.type
        if kind == STRUCT:
            children = [
                self._convert(child, sub, writer_zone)
                for child, sub in zip(column.flatten(), subtypes, strict=True)
            ]
            fields = [f.with_type(c.type) for f, c in zip(dtype, children, strict=True)]
            return pa.StructArray.from_arrays(children, fields=fields, mask=mask)
        if kind == MAP:
            keys = self._convert(column.keys, subtypes[0], writer_zone)
            items = self._convert(column.items, subtypes[1], writer_zone)
            new_type = pa.map_(
                dtype.key_field.with_type(keys.type), dtype.item_field.with_type(items.type)
            )
            return pa.MapArray.from_arrays(column.offsets, keys, items, type=new_type, mask=mask)
        if kind == LIST:
            values = self._convert(column.values, subtypes[0], writer_zone)
            new_type = pa.list_(dtype.value_field.with_type(values.type))
            return pa.ListArray.from_arrays(column.offsets, values, type=new_type, mask=mask)
        return column


def _has_timestamp(dtype: pa.DataType) -> bool:
    if pa.types.is_timestamp(dtype):
        return True
    return any(_has_timestamp(dtype.field(i).type) for i in range(dtype.num_fields))


def _java_read(column: pa.Array, writer_zone: str, reader_zone: str) -> pa.Array:
    """Instants pyarrow read from a TIMESTAMP column declared as one with a local time zone,
    as Spark gets them from ORC's Java reader (naive nanoseconds, as pyarrow gives TIMESTAMP
    columns)."""
    values = column.view(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    seconds, nanos = np.divmod(values.astype(np.int64), 1_000_000_000)
    fraction_ms = nanos > 999_999
    # ORC's C++ reader moved negative seconds with such a fraction one second earlier: undo it,
    # then count from the writer's origin instead of UTC's.
    seconds = seconds + ((seconds < 0) & fraction_ms) + (_base_seconds(writer_zone) - _BASE_UTC)
    millis = seconds * 1000 + nanos // 1_000_000
    millis -= 1000 * ((millis < 0) & fraction_ms)  # ORC's Java reader's correction
    if writer_zone != reader_zone:  # the same wall time in the reader's zone
        writer = _offsets_ms(millis, writer_zone)
        reader = _offsets_ms(millis + writer - _offsets_ms(millis, reader_zone), reader_zone)
        millis = millis + writer - reader
    valid = ~column.is_null().to_numpy(zero_copy_only=False)
    if np.any(valid & ((millis > _NS_MILLIS_LIMIT) | (millis < -_NS_MILLIS_LIMIT))):
        raise MalformedRecordError(NAME, "a timestamp is out of range for nanosecond resolution")
    micros = millis * 1000 + nanos // 1000 % 1000
    old = valid & (micros < _LEGACY_START_US)
    if np.any(old):
        micros[old] = _legacy_to_modern(micros[old], reader_zone)
    result = micros * 1000 + nanos % 1000
    mask = None if column.null_count == 0 else ~valid
    return pa.array(result, pa.timestamp("ns"), mask=mask)


@functools.lru_cache(maxsize=64)
def _base_seconds(zone: str) -> int:
    """2015-01-01 00:00:00 in ``zone`` as epoch seconds (ORC's origin in the writer's zone)."""
    wall = pa.array([_BASE_UTC * 1_000_000], pa.timestamp("us"))
    return int(instants_from_wall_times(wall, zone)[0].value) // 1_000_000


def _java_zone(name: str) -> str:
    """A zone id as Java's ``TimeZone.getTimeZone`` takes it (an unknown id is GMT)."""
    return check_zone(name) or "UTC"


def _offsets_ms(millis: np.ndarray, zone: str) -> np.ndarray:
    """The zone's UTC offsets as ``java.util.TimeZone`` has them (see _legacy_to_modern)."""
    instants = pa.array(millis, pa.timestamp("ms"))
    seconds: np.ndarray = offsets_seconds(instants, zone).to_numpy(zero_copy_only=False)
    offsets = seconds.astype(np.int64) * 1000
    offsets[millis < _LEGACY_START_US // 1000] = _last_standard_offset_us(zone) // 1000
    return offsets


def _tzinfo(zone: str) -> Any:
    """A zone as :func:`check_zone` names it (an IANA name or ``+hh:mm``), for ``datetime``."""
    import datetime as dt
    from zoneinfo import ZoneInfo

    if zone[0] in "+-":
        sign = -1 if zone[0] == "-" else 1
        return dt.timezone(sign * dt.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    return ZoneInfo(zone)


@functools.lru_cache(maxsize=64)
def _last_standard_offset_us(zone: str) -> int:
    """The zone's standard UTC offset in its latest rules (a winter's, either hemisphere)."""
    import datetime as dt

    tz = _tzinfo(zone)
    days = (dt.datetime(2100, 1, 15, tzinfo=tz), dt.datetime(2100, 7, 15, tzinfo=tz))
    return min(int((d.utcoffset() or dt.timedelta(0)).total_seconds()) for d in days) * 1_000_000


def _legacy_to_modern(micros: np.ndarray, zone: str) -> np.ndarray:
    """Spark's rebase of a ``java.sql.Timestamp`` before 1900 from Java's legacy time zones.

    Spark reads an ORC timestamp as a ``java.sql.Timestamp`` and keeps its local date-time in
    the JVM's zone (RebaseDateTime.rebaseJulianToGregorianMicros). Java's legacy zones
    (``java.util.TimeZone``) know no rule before 1900 and use the zone's latest standard
    offset there, where ``java.time`` has the local mean time of the tz database: the local
    time taken with the first is read with the second (the later offset where clocks went
    back, moved forward by the gap where they skipped).
    """
    import datetime as dt

    tz = _tzinfo(zone)
    epoch = dt.datetime(1970, 1, 1)
    legacy = _last_standard_offset_us(zone)
    out = np.empty_like(micros)
    for i, value in enumerate((micros + legacy).tolist()):
        local = epoch + dt.timedelta(microseconds=value)
        offsets = (local.replace(tzinfo=tz, fold=f).utcoffset() for f in (0, 1))
        offset = min(o or dt.timedelta(0) for o in offsets)
        out[i] = value - offset // dt.timedelta(microseconds=1)
    return out
