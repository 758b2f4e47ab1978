"""Warnings that a stream of bad input cannot turn into a flood of log lines.

A queue can hold thousands of messages of one wrong kind; each is counted where users can see
it (the source's progress), and the log gets the first one at once and then at most one line a
minute per kind, saying how many it left out.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

__all__ = ["INTERVAL_S", "ThrottledLog"]

INTERVAL_S = 60.0


class ThrottledLog:
    def __init__(
        self,
        logger: logging.Logger,
        interval_s: float = INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logger = logger
        self._interval_s = interval_s
        self._clock = clock
        self._last: dict[str, float] = {}
        self._left_out: dict[str, int] = {}

    def warning(self, kind: str, text: str, *args: object) -> bool:
        """Log ``text % args`` unless a line of ``kind`` went out less than the interval ago;
        returns whether it was logged."""
        now = self._clock()
        last = self._last.get(kind)
        if last is not None and now - last < self._interval_s:
            self._left_out[kind] = self._left_out.get(kind, 0) + 1
            return False
        self._last[kind] = now
        left_out = self._left_out.pop(kind, 0)
        if left_out and last is not None:
            text += " (and %d more like it in the last %.0f s, not logged)"
            args = (*args, left_out, now - last)
        self._logger.warning(text, *args)
        return True
