"""``_core.hooks``: the points where tests pause the product or hand it a stand-in.

What the pauses prove (a task SIGKILLed mid schema change, mid notification batch) is in the
crash tests that use them (tests/files/source/test_schema_evolution.py); here, the point
itself: inert by default, one action at a time, put back after a block, and every point the
product declares documented.
"""

from __future__ import annotations

import pytest

from pysparksources._core.hooks import HookPoint, points
from pysparksources.files.source.notifications.discovery import OPEN_QUEUE
from pysparksources.files.source.notifications.queues import open_queue


def test_a_point_runs_its_default_until_an_action_is_installed() -> None:
    calls: list[str] = []
    point: HookPoint[[int], int] = HookPoint("test.double", "doubles", lambda n: 2 * n)
    assert point(4) == 8
    with point.installed(lambda n: calls.append(f"in {n}") or -n):
        assert point(4) == -4
        with point.installed(lambda n: 0):  # nested: the inner action, then the outer again
            assert point(4) == 0
        assert point(5) == -5
    assert point(4) == 8 and calls == ["in 4", "in 5"]
    point.install(lambda n: n + 1)  # a worker's pausing reader: for the rest of the process
    assert point(4) == 5 and "installed" in repr(point)
    point.remove()
    assert point(4) == 8 and "default" in repr(point)


def test_an_action_that_raises_leaves_the_point_as_it_was() -> None:
    point: HookPoint[[], str] = HookPoint("test.raises", "raises", lambda: "default")

    def failing() -> str:
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"), point.installed(failing):
        point()
    assert point() == "default"


def test_the_products_points_are_declared_documented_and_inert() -> None:
    from pysparksources.files.schema.evolution import SCHEMA_CHANGE_STEP

    declared = points()
    assert declared["pyfile.schema_change_step"] is SCHEMA_CHANGE_STEP
    assert declared["pyfile.open_notification_queue"] is OPEN_QUEUE
    for name, point in declared.items():
        if name.startswith("pyfile."):
            assert point.doc and "default" in repr(point), name
    assert SCHEMA_CHANGE_STEP("before_version") is None  # nothing happens by default
    assert OPEN_QUEUE.default is open_queue
