"""The start and the read limit of each ``latestOffset`` call, on every Spark line.

Spark 4.2 and later pass both: ``latestOffset(start, limit)``. Spark 4.0 and 4.1 call
``latestOffset()`` with neither and limit nothing themselves, so a reader keeps them
(measured with pyspark 4.0.5 and 4.1.4):

- **the start** is the end of the last batch Spark planned. Each trigger calls
  ``latestOffset()``, then ``commit(previous end)``, then ``partitions(previous end, new
  end)``. A restarted query first calls ``partitions(latest, latest)`` with the newest offset
  of its write-ahead log (``AcceptsLatestSeenOffset``), then plans again a batch that did not
  finish. A new query calls ``latestOffset()`` before anything else: its start is the initial
  offset. Spark's logs stay the truth: a restart learns its start from them, so nothing is
  read twice or skipped.
- **the limit** is the reader's own default read limit, so each admission option caps each
  batch as the engine would on 4.2.

Under ``Trigger.AvailableNow`` those lines call ``latestOffset()`` once and run one batch to
its answer, then stop: capped by an admission option, that batch is all the run reads.
:meth:`EngineCalls.warn_if_cut_short` has the reader's ``stop()`` say so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from pysparksources._core.compat import ReadAllAvailable, ReadLimit

__all__ = ["EngineCalls"]

log = logging.getLogger(__name__)
Offset = dict[str, Any]


class EngineCalls:
    """What one stream reader learns of the engine's calls; lives in the driver's process."""

    def __init__(self) -> None:
        self._planned_end: Offset | None = None
        self._limit: ReadLimit | None = None
        self._own_calls = 0  # latestOffset() calls without engine arguments (4.0, 4.1)
        self._last_capped = False

    def arguments(
        self,
        start: Offset | None,
        limit: ReadLimit | None,
        initial: Callable[[], Offset],
        default_limit: Callable[[], ReadLimit],
    ) -> tuple[Offset, ReadLimit]:
        """The start and limit of this call: the engine's, or the reader's own."""
        if start is not None:
            return start, limit if limit is not None else ReadAllAvailable()
        self._own_calls += 1
        if self._limit is None:
            self._limit = default_limit()
        return (self._planned_end if self._planned_end is not None else initial()), self._limit

    def planned(self, end: Offset) -> None:
        """Spark planned (or, restarting, named) a batch ending at ``end``."""
        self._planned_end = end

    def capped(self, cut: bool) -> None:
        """Whether the end just returned stops short of what is available (a limit applied)."""
        self._last_capped = cut

    def warn_if_cut_short(self, source: str, options: str) -> None:
        """At ``stop()``: a run of one capped batch was, on 4.0/4.1, likely AvailableNow's."""
        if self._own_calls == 1 and self._last_capped:
            log.warning(
                "%s: this run read one batch, cut short by %s, and left the rest: under "
                "Trigger.AvailableNow Spark 4.0 and 4.1 run a single batch for Python sources "
                "(4.2+ runs as many as the limit needs). Run the query again to read on, or "
                "leave out the limit for AvailableNow runs.",
                source,
                options,
            )
