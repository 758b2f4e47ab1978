"""Which time zone zone-less text timestamps are read in, and reading them there like Java.

Spark reads a csv/json timestamp without an offset in the reader's ``timeZone`` option, else
in the session time zone, whose default is the driver JVM's zone. PySpark passes neither to a
Python data source, so a task finds the zone itself:

1. ``spark.sql.session.timeZone`` among the task's local properties: Spark copies every session
   setting the user made into them (SQLExecution.withSQLConfPropagated), Connect included;
2. unset, Spark's default is the JVM's zone: ``-Duser.timezone=`` in the driver's Java options
   (also a local property), or in ``JAVA_TOOL_OPTIONS`` / ``JDK_JAVA_OPTIONS``;
3. else the zone the JVM took from the machine, read the same way Java reads it on Linux (the
   ``TZ`` variable, ``/etc/timezone``, the ``/etc/localtime`` link), which the Python worker
   inherits from the JVM that started it.

Local wall times are turned into instants the way ``java.time`` does (``ZonedDateTime.of``): a
time repeated when clocks go back takes the earlier offset, a time skipped when they go forward
is moved forward by the length of the gap.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from pysparksources.errors import ArgumentError
from pysparksources.files import NAME

__all__ = [
    "check_zone",
    "instants_from_wall_times",
    "jvm_default_zone",
    "offsets_seconds",
    "session_time_zone",
    "system_zone",
]

SESSION_ZONE_KEY = "spark.sql.session.timeZone"
_USER_TIMEZONE = re.compile(r"-Duser\.timezone=(\S+)")
_OFFSET = re.compile(r"^(?:UTC|GMT|UT)?([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?$")
_UTC_NAMES = frozenset(("UTC", "Etc/UTC", "Z", "GMT", "Etc/GMT", "UCT", "Etc/UCT", "Zulu"))


def check_zone(name: str) -> str | None:
    """The zone in the form Arrow takes (an IANA name or ``+hh:mm``); None if not a zone."""
    text = name.strip()
    if text in _UTC_NAMES or text.upper() == "UTC":
        return "UTC"
    match = _OFFSET.match(text)
    if match is not None:
        sign, hours, minutes, seconds = match.groups()
        if int(hours) > 18 or int(minutes or 0) > 59 or seconds not in (None, "00"):
            return None
        return f"{sign}{int(hours):02d}:{minutes or '00'}"
    from zoneinfo import ZoneInfo

    try:
        ZoneInfo(text)
    except (ValueError, OSError, KeyError):
        return None
    return text


def _from_java_options(options: str | None) -> str | None:
    match = _USER_TIMEZONE.search(options or "")
    return match.group(1).strip("'\"") if match else None


def system_zone() -> str:
    """The machine's zone as a Linux JVM finds it (TZ, /etc/timezone, /etc/localtime)."""
    tz = os.environ.get("TZ", "").strip().lstrip(":")
    if tz:
        return tz.split("zoneinfo/", 1)[-1]
    try:
        name = Path("/etc/timezone").read_text().strip()
        if name:
            return name
    except OSError:
        pass
    try:
        target = os.readlink("/etc/localtime")
    except OSError:
        return "UTC"
    return target.split("zoneinfo/", 1)[-1] if "zoneinfo/" in target else "UTC"


def session_time_zone() -> str:
    """The session time zone of the Spark job running this task (see the module docstring)."""
    from pyspark import TaskContext

    context = TaskContext.get()
    driver_options = None
    if context is not None:
        zone = context.getLocalProperty(SESSION_ZONE_KEY)
        if zone:
            return str(zone)
        driver_options = context.getLocalProperty("spark.driver.extraJavaOptions")
    for options in (
        driver_options,
        os.environ.get("JDK_JAVA_OPTIONS"),
        os.environ.get("JAVA_TOOL_OPTIONS"),
    ):
        zone = _from_java_options(options)
        if zone:
            return zone
    return system_zone()


def jvm_default_zone() -> str:
    """The default zone of the JVM running this task's Spark executor (not the session zone).

    Some of Spark's readers (ORC's) use the JVM's zone whatever the session's is. In local mode
    the executor is the driver's JVM; otherwise ``-Duser.timezone=`` in the executors' Java
    options, else the machine's zone, which the Python worker inherits with the environment.
    """
    from pyspark import TaskContext

    context = TaskContext.get()
    options = None
    if context is not None:
        master = str(context.getLocalProperty("spark.master") or "local")
        local = master == "local" or master.startswith("local[")  # not local-cluster[...]
        side = "driver" if local else "executor"
        options = context.getLocalProperty(f"spark.{side}.extraJavaOptions")
    for found in (options, os.environ.get("JDK_JAVA_OPTIONS"), os.environ.get("JAVA_TOOL_OPTIONS")):
        zone = _from_java_options(found)
        if zone:
            return zone
    return system_zone()


# Arrow's zone rules stop at the last transition the tz files list (2037); later DST comes
# only from the files' POSIX footer, which Python's zoneinfo applies and Arrow does not.
_LATE_US = 2_145_916_800_000_000  # 2038-01-01T00:00:00 as epoch microseconds


def _python_zone(zone: str) -> Any:
    import datetime as dt
    from zoneinfo import ZoneInfo

    if zone.startswith(("+", "-")):
        sign = -1 if zone[0] == "-" else 1
        hours, minutes = int(zone[1:3]), int(zone[4:6])
        return dt.timezone(sign * dt.timedelta(hours=hours, minutes=minutes))
    return ZoneInfo(zone)


def _late(values: pa.Array) -> pa.Array:
    return pc.fill_null(pc.greater_equal(values.view(pa.int64()), _LATE_US), False)


def _python_instants(walls_us: list[int | None], zone: str) -> list[int | None]:
    """Wall times (fold=0: the earlier offset in an overlap, the one before a gap, as Java)."""
    import datetime as dt

    tz = _python_zone(zone)
    epoch = dt.datetime(1970, 1, 1)
    out: list[int | None] = []
    for wall in walls_us:
        if wall is None:
            out.append(None)
            continue
        local = (epoch + dt.timedelta(microseconds=wall)).replace(tzinfo=tz)
        offset = local.utcoffset() or dt.timedelta(0)
        out.append(wall - (offset // dt.timedelta(microseconds=1)))
    return out


def offsets_seconds(instants: pa.Array, zone: str) -> pa.Array:
    """The zone's UTC offset (seconds) at each UTC instant, null where the instant is null."""
    arrow_zone = check_zone(zone) or zone
    utc = pc.cast(instants, pa.timestamp("us", tz="UTC"))
    local = pc.local_timestamp(utc.cast(pa.timestamp("us", tz=arrow_zone)))
    offsets = pc.divide(pc.subtract(local.view(pa.int64()), utc.view(pa.int64())), 1_000_000)
    late = _late(utc)
    if not pc.any(late).as_py():
        return offsets
    import datetime as dt

    tz = _python_zone(arrow_zone)
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    fixed = []
    for micros, offset, is_late in zip(
        utc.view(pa.int64()).to_pylist(), offsets.to_pylist(), late.to_pylist(), strict=True
    ):
        if is_late and micros is not None:
            moment = (epoch + dt.timedelta(microseconds=micros)).astimezone(tz)
            offset = int((moment.utcoffset() or dt.timedelta(0)).total_seconds())
        fixed.append(offset)
    return pa.array(fixed, pa.int64())


def instants_from_wall_times(wall: pa.Array, zone: str) -> pa.Array:
    """Naive ``timestamp[us]`` wall times in ``zone`` as ``timestamp[us, tz=UTC]`` instants."""
    arrow_zone = check_zone(zone)
    if arrow_zone is None:
        raise ArgumentError(NAME, f"unknown time zone {zone!r}")
    utc = pa.timestamp("us", tz="UTC")
    if arrow_zone == "UTC" or arrow_zone in ("+00:00", "-00:00"):
        return wall.cast(utc)
    # Overlaps: the earlier instant (Java's earlier offset). Gaps: Arrow gives the transition.
    late = _late(wall)
    if pc.any(late).as_py():
        early = _arrow_instants(pc.if_else(late, pa.scalar(None, wall.type), wall), arrow_zone)
        walls = pc.if_else(late, wall, pa.scalar(None, wall.type)).view(pa.int64()).to_pylist()
        python = pa.array(_python_instants(walls, arrow_zone), pa.int64()).view(utc)
        return pc.if_else(late, python, early)
    return _arrow_instants(wall, arrow_zone)


def _arrow_instants(wall: pa.Array, arrow_zone: str) -> pa.Array:
    utc = pa.timestamp("us", tz="UTC")
    result = pc.assume_timezone(wall, arrow_zone, ambiguous="earliest", nonexistent="latest")
    in_gap = pc.fill_null(pc.not_equal(pc.local_timestamp(result), wall), False)
    if not pc.any(in_gap).as_py():
        return result.cast(utc)
    # Java moves a skipped wall time forward by the gap: the offset in force before the gap.
    before = pc.subtract(result.view(pa.int64()), 1)
    before_local = pc.local_timestamp(before.view(pa.timestamp("us", tz=arrow_zone)))
    offset = pc.subtract(before_local.view(pa.int64()), before)
    shifted = pc.subtract(wall.view(pa.int64()), offset).view(utc)
    return pc.if_else(in_gap, shifted, result.cast(utc))
