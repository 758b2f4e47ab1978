"""pyrate's offsets: one per mode, and its lag (rows due but not read yet).

Time mode (``rowsPerSecond``) writes ``{"createdMs", "second", "value"}``: the stream's
creation time (Spark keeps it in a checkpoint Python sources never see), the second reached and
the row position. Batch mode (``rowsPerBatch``) writes Spark's ``rate-micro-batch`` offset,
``{"offset", "timestamp"}``. Either way an offset alone determines every row of the batch that
ends at it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pysparksources._core.lag import CountLag, OffsetKind
from pysparksources._core.offsets import SourceOffset, canonical_offset, checked_ints, loaded
from pysparksources.errors import OffsetError
from pysparksources.rate import NAME

__all__ = ["KIND", "BatchOffset", "RateOffset", "TimeOffset", "lag"]


@dataclass(frozen=True)
class TimeOffset(SourceOffset):
    """Time mode: ``value`` rows exist by second ``second`` of a stream made at ``created_ms``."""

    created_ms: int
    second: int
    value: int

    KEYS: ClassVar[tuple[str, ...]] = ("createdMs", "second", "value")

    @property
    def rows(self) -> int:
        return self.value

    def to_dict(self) -> dict[str, Any]:
        return canonical_offset(
            {"createdMs": self.created_ms, "second": self.second, "value": self.value}
        )

    @classmethod
    def from_json(cls, value: Any) -> TimeOffset:
        ints = checked_ints(
            NAME, loaded(NAME, value), cls.KEYS, "an offset of time mode (rowsPerSecond)"
        )
        return cls(ints["createdMs"], ints["second"], ints["value"])


@dataclass(frozen=True)
class BatchOffset(SourceOffset):
    """Batch mode: ``offset`` rows, the last logical batch's rows stamped ``timestamp``."""

    offset: int
    timestamp: int

    KEYS: ClassVar[tuple[str, ...]] = ("offset", "timestamp")

    @property
    def rows(self) -> int:
        return self.offset

    def to_dict(self) -> dict[str, Any]:
        return canonical_offset({"offset": self.offset, "timestamp": self.timestamp})

    @classmethod
    def from_json(cls, value: Any) -> BatchOffset:
        ints = checked_ints(
            NAME, loaded(NAME, value), cls.KEYS, "an offset of batch mode (rowsPerBatch)"
        )
        return cls(ints["offset"], ints["timestamp"])


RateOffset = TimeOffset | BatchOffset  # the one a stream writes depends on its mode


def lag(end: Any, latest: Any) -> CountLag | None:
    """Rows available by the clock (``latest``) but not read (``end``); None if not pyrate's."""
    for kind in (TimeOffset, BatchOffset):
        try:
            stop, newest = kind.from_json(end), kind.from_json(latest)
        except OffsetError:
            continue
        return CountLag(NAME, "rows", max(0, newest.rows - stop.rows))
    return None


KIND = OffsetKind(NAME, (TimeOffset, BatchOffset), lag)
