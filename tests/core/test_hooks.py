"""``_core.hooks``: the points where tests pause the product or hand it a stand-in.

What the pauses prove (a task SIGKILLed mid schema change, mid notification batch) is in the
crash tests that use them (tests/files/source/test_schema_evolution.py); here, the point
itself: inert by default, one action at a time, put back after a block, and every point the
product declares documented; and that tests and benchmarks set no other module global of the
product than the few listed, each with its reason.
"""

from __future__ import annotations

import ast
import importlib.util

import pytest

from pysparksources._core.hooks import HookPoint, points
from pysparksources.files.source.notifications.discovery import OPEN_QUEUE
from pysparksources.files.source.notifications.queues import open_queue
from support.paths import ROOT, TESTS


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


# The product's module globals that tests and benchmarks still set, each with why it is not a
# pause or a stand-in (those go through a HookPoint, above). A new line here needs such a reason.
SET_GLOBALS = {
    ("pysparksources.eventhubs._task_stats", "_warned"): "re-arms a warn-once flag",
    ("pysparksources.eventhubs._private_folder", "_warned"): "re-arms a warn-once flag",
    ("pysparksources.eventhubs.avro.schema_registry", "RETRY"): "no retries: a fast failure",
    ("pysparksources.files.formats._sample_text", "BLOCK_BYTES"): "small blocks, small files",
    ("pysparksources.files.formats._sample_text", "RECORD_LIMIT"): "a small sample",
    ("pysparksources.files.source.file_index", "list_files"): "counts listings, then lists",
    ("pysparksources.files.source.notifications.discovery", "LEFT_HIDDEN_S"): "a short wait",
}


def _product_modules(tree: ast.Module) -> dict[str, str]:
    """Local name -> product module, for the modules a test file imports as modules."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("pysparksources.") and alias.asname:
                    found[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pysparksources"):
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                if importlib.util.find_spec(node.module or "") and _is_module(name):
                    found[alias.asname or alias.name] = name
    return found


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def _set_attribute(node: ast.AST) -> tuple[str, str] | None:
    """(name, attribute) of ``monkeypatch.setattr(name, "attribute", ...)`` or
    ``name.attribute = ...``; None for anything else."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        args = node.args
        if node.func.attr == "setattr" and len(args) >= 2 and isinstance(args[0], ast.Name):
            return (args[0].id, str(args[1].value)) if isinstance(args[1], ast.Constant) else None
    if isinstance(node, (ast.Assign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for each in targets:
            if isinstance(each, ast.Attribute) and isinstance(each.value, ast.Name):
                return each.value.id, each.attr
    return None


def test_tests_and_benchmarks_set_no_other_product_global() -> None:
    seen = set()
    for path in [*TESTS.rglob("*.py"), *(ROOT / "benchmarks").rglob("*.py")]:
        tree = ast.parse(path.read_text(), str(path))
        modules = _product_modules(tree)
        for node in ast.walk(tree):
            target = _set_attribute(node)
            if target is not None and target[0] in modules:
                found = (modules[target[0]], target[1])
                assert found in SET_GLOBALS, f"{path.relative_to(ROOT)}:{node.lineno} sets {found}"
                seen.add(found)
    assert seen == set(SET_GLOBALS), "a line of SET_GLOBALS no test needs any more"
