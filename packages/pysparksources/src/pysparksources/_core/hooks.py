"""Named points where a test may stop the product or hand it a stand-in; inert by default.

Crash tests stop a task at an exact step (a schema change half recorded, ...) and SIGKILL its
process there; a benchmark hands notification discovery a queue double instead of SQS. Such a
point is a :class:`HookPoint`, declared in the module that calls it, typed by what it passes
and returns::

    SCHEMA_CHANGE_STEP: HookPoint[[Step], None] = HookPoint(
        "pyfile.schema_change_step", "each step of a schema change", _nothing
    )
    ...
    SCHEMA_CHANGE_STEP("before_version")  # runs the default unless a test installed an action

A test acts there only through the point: ``with POINT.installed(action): ...`` for a block,
or ``POINT.install(action)`` for the rest of the process (Spark's Python workers are processes
of their own, so a pausing source installs its action in the worker that reads: see
tests/support/evolution_hooks.py). :func:`points` lists every point declared so far.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, ParamSpec, TypeVar

__all__ = ["HookPoint", "points"]

P = ParamSpec("P")
R = TypeVar("R")

_POINTS: dict[str, HookPoint[..., Any]] = {}


class HookPoint(Generic[P, R]):
    """One place the product calls, running ``default`` unless an action is installed."""

    def __init__(self, name: str, doc: str, default: Callable[P, R]) -> None:
        self.name = name
        self.doc = doc
        self.default = default
        self._action: Callable[P, R] | None = None
        _POINTS[name] = self

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        action = self.default if self._action is None else self._action
        return action(*args, **kwargs)

    def install(self, action: Callable[P, R]) -> None:
        """Run ``action`` at this point instead of the default, for the rest of the process."""
        self._action = action

    def remove(self) -> None:
        """Back to the default."""
        self._action = None

    @contextmanager
    def installed(self, action: Callable[P, R]) -> Iterator[None]:
        """Run ``action`` at this point inside the block (what was installed before after)."""
        previous = self._action
        self._action = action
        try:
            yield
        finally:
            self._action = previous

    def __repr__(self) -> str:
        state = "default" if self._action is None else "installed"
        return f"HookPoint({self.name!r}, {state})"


def points() -> dict[str, HookPoint[..., Any]]:
    """Every point declared by the modules imported so far, by name."""
    return dict(_POINTS)
