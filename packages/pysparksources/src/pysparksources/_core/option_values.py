"""Spark's grammar for option values: durations, sizes, integers and booleans.

A duration (``10s``, ``500ms``, ``PT10S``) or a size (``128m``) means the same in every source
because every source parses it here.
"""

from __future__ import annotations

import re

__all__ = [
    "FALSE_WORDS",
    "INTEGER",
    "LONG_MAX",
    "MAX_DIGITS",
    "NUMBER",
    "TRUE_WORDS",
    "describe_bounds",
    "parse_duration_seconds",
    "parse_size",
]

LONG_MAX = 2**63 - 1
_MAX_DURATION_S = LONG_MAX // 1000  # Spark keeps durations as milliseconds in a long

# Spark's time strings (JavaUtils.timeStringAs) plus a few spelled-out units; a bare number
# is seconds. ASCII digits only: Python's int() would also take "1_0" and Arabic digits.
_DURATION = re.compile(r"\s*([0-9]+)\s*([a-z]*)\s*", re.IGNORECASE | re.ASCII)
_UNIT_SECONDS = {
    "": 1.0,
    "us": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "m": 60.0,
    "min": 60.0,
    "mins": 60.0,
    "h": 3600.0,
    "d": 86400.0,
}
# java.time.Duration.parse, which the Scala connector used: PnDTnHnMn.nS, each part optional.
_ISO = re.compile(
    r"\s*([-+]?)P(?:([-+]?[0-9]+)D)?"
    r"(?:T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+(?:[.,][0-9]{0,9})?)S)?)?\s*",
    re.IGNORECASE | re.ASCII,
)
# Spark's byte strings (JavaUtils.byteStringAs): 1048576, 512k, 512kb, 128m, 1g, 2t, 1p.
_SIZE = re.compile(r"\s*([0-9]+)\s*([kmgtp]?)(?:b)?\s*", re.IGNORECASE | re.ASCII)
_SIZE_SHIFT = {"": 0, "k": 10, "m": 20, "g": 30, "t": 40, "p": 50}
INTEGER = re.compile(r"\s*[-+]?[0-9]+\s*", re.ASCII)
NUMBER = re.compile(r"\s*[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\s*", re.ASCII)
MAX_DIGITS = 30  # longer numbers cannot be in range, and int() refuses > 4300 digits
TRUE_WORDS = {"true", "1", "yes"}
FALSE_WORDS = {"false", "0", "no"}


def parse_duration_seconds(text: str, iso: bool = False, bare_unit: str = "s") -> float:
    """A Spark-style duration (``10s``, ``500ms``, ``2m``; a bare number is in ``bare_unit``:
    seconds, or ``ms`` where Spark reads the option with ``timeStringAsMs``).

    With ``iso`` also ISO-8601 (``PT60S``, ``PT1M30S``, ``P1D``), as the Scala Event Hubs
    connector accepted. Raises ``ValueError`` for anything else, and for durations longer than
    Spark can hold (2^63 - 1 ms).
    """
    match = _DURATION.fullmatch(text)
    if match is not None:
        number, unit = match.groups()
        factor = _UNIT_SECONDS.get(unit.lower() or bare_unit)
        if factor is None or len(number.lstrip("0")) > MAX_DIGITS:
            raise ValueError(text)
        value = int(number) * factor
    elif iso:
        value = _iso_duration(text)
    else:
        raise ValueError(text)
    if not 0 <= value <= _MAX_DURATION_S:
        raise ValueError(text)
    return value


def _iso_duration(text: str) -> float:
    match = _ISO.fullmatch(text)
    if match is None or not any(match.groups()[1:]):
        raise ValueError(text)
    sign, days, hours, minutes, seconds = match.groups()
    if any(len((p or "").lstrip("+-0")) > MAX_DIGITS for p in (days, hours, minutes, seconds)):
        raise ValueError(text)
    total = (
        int(days or 0) * 86400
        + int(hours or 0) * 3600
        + int(minutes or 0) * 60
        + float((seconds or "0").replace(",", "."))
    )
    return -total if sign == "-" else total


def parse_size(text: str) -> int:
    """A byte count: ``1048576``, ``512k``, ``512kb``, ``128m``, ``1g``, ``2t``, ``1p``.

    Raises ``ValueError`` for anything else and for sizes above 2^63 - 1.
    """
    match = _SIZE.fullmatch(text)
    if match is None or len(match.group(1).lstrip("0")) > MAX_DIGITS:
        raise ValueError(text)
    value = int(match.group(1)) << _SIZE_SHIFT[match.group(2).lower()]
    if value > LONG_MAX:
        raise ValueError(text)
    return value


def describe_bounds(minimum: int | None, maximum: int) -> str:
    if minimum is None:
        return f"<= {maximum}"
    if maximum == LONG_MAX:
        return f">= {minimum}"
    return f"between {minimum} and {maximum}"
