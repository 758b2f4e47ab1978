"""Lag as the sources' offsets state it, for the lag listener (``pysparksources.monitoring``).

A source's ``offsets.py`` turns a progress's ``endOffset`` and ``latestOffset`` into one of
these; the listener adds what needs its own history (seconds behind) and renders them. An
:class:`OffsetKind` is how a source's offsets are known to the listener: the listener keeps
one per source and asks each in turn whether a progress's offsets are its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pysparksources._core.offsets import SourceOffset

__all__ = ["CountLag", "Lag", "OffsetKind", "PartitionPositions", "PartitionedLag"]


@dataclass(frozen=True)
class CountLag:
    """``behind`` units (``rows``, ``files``) available but not read yet."""

    source: str
    unit: str
    behind: int


@dataclass(frozen=True)
class PartitionPositions:
    """One partition: the first position not read (``end``), the position after the newest
    available (``latest``), and when the newest was enqueued (None: unknown, or empty)."""

    end: int
    latest: int
    newest: datetime | None


@dataclass(frozen=True)
class PartitionedLag:
    """A partitioned stream's positions; ``labels`` name it in the listener's entry (``hub``)."""

    source: str
    unit: str
    labels: Mapping[str, str]
    partitions: Mapping[str, PartitionPositions]


Lag = CountLag | PartitionedLag


@dataclass(frozen=True)
class OffsetKind:
    """One source's offsets: every type it writes, and its lag from a progress's offsets.

    ``lag(end, latest)`` takes ``endOffset`` and ``latestOffset`` as the progress holds them
    (dicts, or JSON text over Spark Connect) and returns None when they are not this
    source's, or when they state no lag (pyfile listing a folder).
    """

    source: str
    offsets: tuple[type[SourceOffset], ...]
    lag: Callable[[Any, Any], Lag | None]
