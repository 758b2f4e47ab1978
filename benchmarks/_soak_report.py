"""The soak's time series and the judgement whether each one grows without bound.

A series is judged on its two halves: the Theil-Sen slopes of the first and the second half.
``flat`` when the second half's slope, carried over the whole run, adds no more than the
tolerance (10 % of the series' median plus an absolute allowance); ``levelling`` when it is at
most half the first half's slope (growth is slowing down: caches warming, the JVM heap
settling); ``GROWS`` otherwise. Series that grow by design (output files, events held by the
emulator without retention) are shown but not judged.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Series", "slope", "table", "verdict"]


@dataclass
class Series:
    """One figure sampled over the run; ``allowance`` is the absolute noise tolerated."""

    name: str
    allowance: float
    by_design: str = ""
    points: list[tuple[float, float]] = field(default_factory=list)

    def add(self, seconds: float, value: float) -> None:
        self.points.append((seconds, value))

    @property
    def values(self) -> list[float]:
        return [value for _, value in self.points]

    def summary(self) -> dict[str, Any]:
        values = self.values
        return {
            "start": values[0] if values else None,
            "end": values[-1] if values else None,
            "max": max(values) if values else None,
            "verdict": self.by_design or verdict(self.points, self.allowance),
            "samples": [[round(t), round(v, 1)] for t, v in self.points],
        }


def slope(points: list[tuple[float, float]]) -> float:
    """Theil-Sen slope (units per second): the median of the slopes between every two points.

    Robust to the few samples a disruption throws off (an executor replaced by a fresh
    process reads low, a batch caught mid-write high), which would tilt a least-squares fit.
    """
    slopes = [
        (v2 - v1) / (t2 - t1)
        for i, (t1, v1) in enumerate(points)
        for t2, v2 in points[i + 1 :]
        if t2 != t1
    ]
    return statistics.median(slopes) if slopes else 0.0


def verdict(points: list[tuple[float, float]], allowance: float) -> str:
    if len(points) < 4:
        return "too few samples"
    middle = (points[0][0] + points[-1][0]) / 2
    first = [p for p in points if p[0] <= middle]
    second = [p for p in points if p[0] >= middle]
    duration = points[-1][0] - points[0][0]
    late = slope(second)
    tolerance = 0.1 * statistics.median(v for _, v in points) + allowance
    if late * duration <= tolerance:
        return "flat"
    if late <= 0.5 * slope(first):
        return "levelling"
    return "GROWS"


def _shown(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 or value == int(value) else f"{value:.1f}"


def table(series: list[Series]) -> str:
    width = max(len(s.name) for s in series)
    lines = [f"{'series':<{width}} {'start':>10} {'end':>10} {'max':>10}  verdict"]
    for item in series:
        s = item.summary()
        lines.append(
            f"{item.name:<{width}} {_shown(s['start']):>10} {_shown(s['end']):>10} "
            f"{_shown(s['max']):>10}  {s['verdict']}"
        )
    return "\n".join(lines)
