"""Deterministic offsets, and the type every source's offsets share.

Spark serializes a Python source's offset with ``json.dumps(dict)`` and compares offsets as
JSON strings, so two equal dicts with a different key order look like new data (an
AvailableNow query may then never end). Every offset a source returns passes through
:func:`canonical`, which rebuilds it with sorted keys at every level.

Each source declares its offsets once, in its ``offsets.py``: frozen :class:`SourceOffset`
values whose ``to_dict`` is what the reader hands Spark, ``to_json`` the exact text Spark
stores, and ``from_json`` the one decoder (the reader's, for what Spark hands back, and the
lag listener's, for the offsets in a progress). The bytes of an offset never change between
releases: a checkpoint compares them.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from typing import Any, TypeVar

from pysparksources.errors import OffsetError

__all__ = ["SourceOffset", "canonical", "canonical_offset", "checked_ints", "dumps", "loaded"]

T = TypeVar("T", bound="SourceOffset")

# Spark keeps each batch's offsets in this file; the Python source is never told the folder.
CHECKPOINT_FILE = "<checkpointLocation>/offsets/<batchId>"
_LONG = 2**63 - 1


def offset_error(source: str, offset: Any, problem: str) -> OffsetError:
    """The error for an edited or foreign offset, naming the checkpoint file it came from."""
    try:
        shown = json.dumps(offset, default=str)
    except (RecursionError, ValueError):  # JSON that PySpark could parse, nested deeper still
        shown = "(nested too deeply to show)"
    if len(shown) > 200:
        shown = shown[:200] + "..."
    return OffsetError(
        source,
        f"the offset {shown} that Spark read back from the query's checkpoint "
        f"({CHECKPOINT_FILE}) {problem}; it was edited, or written by another source or "
        "other options: restore it, or start from a new checkpointLocation",
    )


def checked_ints(
    source: str, offset: Any, keys: tuple[str, ...], what: str, minimum: int = 0
) -> dict[str, int]:
    """``offset`` as exactly ``keys`` -> integers in minimum..2^63-1, or an :class:`OffsetError`."""
    if not isinstance(offset, dict) or set(offset) != set(keys):
        raise offset_error(source, offset, f"is not {what} (expected keys {', '.join(keys)})")
    values = {}
    for key in keys:
        value = offset[key]
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= _LONG:
            raise offset_error(source, offset, f"has {key}={value!r}, not an integer >= {minimum}")
        values[key] = value
    return values


def canonical(value: Any) -> Any:
    """Return ``value`` with every dict rebuilt in sorted key order (lists keep their order)."""
    if isinstance(value, dict):
        return {str(k): canonical(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    return value


def canonical_offset(offset: dict[str, Any]) -> dict[str, Any]:
    """:func:`canonical` for a top-level offset dict, typed as one."""
    result: dict[str, Any] = canonical(offset)
    return result


def dumps(value: Any) -> str:
    """The JSON text Spark will store for ``value`` once it is canonical."""
    return json.dumps(canonical(value))


def loaded(source: str, value: Any) -> Any:
    """An offset as Spark hands it over: a dict to a reader, JSON text in a progress over
    Spark Connect (read here; text that is not JSON is an :class:`OffsetError`)."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        raise offset_error(source, value, "is not JSON") from None


class SourceOffset(ABC):
    """One source's offset as a value, encoded and decoded in one place (see the module)."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """What the reader returns to Spark: canonical (keys sorted at every level)."""

    def to_json(self) -> str:
        """The exact text Spark stores in the checkpoint and compares."""
        return json.dumps(self.to_dict())

    @classmethod
    @abstractmethod
    def from_json(cls: type[T], value: Any) -> T:
        """The offset ``value`` holds (a dict, or JSON text); an :class:`OffsetError` naming
        the checkpoint file when it is not one of these."""
