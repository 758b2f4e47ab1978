"""freeze_imports: the per-task collection PySpark's worker runs walks only new objects."""

from __future__ import annotations

import json
import subprocess
import sys

# Runs in a child so the test process's own collector is left alone.
CHILD = """
import gc, json, sys
import pyarrow
from pysparksources._core.worker_gc import freeze_imports

figures = {"tracked_before": len(gc.get_objects())}
freeze_imports()
figures["tracked_after"] = len(gc.get_objects())
figures["frozen"] = gc.get_freeze_count()
task_garbage = [[i] for i in range(1000)]
freeze_imports()  # no module imported since: nothing more is frozen
figures["frozen_again"] = gc.get_freeze_count()
import colorsys  # a module imported by a task
freeze_imports()
figures["frozen_after_import"] = gc.get_freeze_count()
print(json.dumps(figures))
"""


def test_imports_are_frozen_once_and_again_only_after_new_imports() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, check=True
    ).stdout
    figures = json.loads(out.splitlines()[-1])
    assert figures["tracked_before"] > 10_000, figures  # pyarrow, numpy and the package
    assert figures["tracked_after"] < 1_000, figures
    assert figures["frozen"] >= figures["tracked_before"] - figures["tracked_after"], figures
    assert figures["frozen_again"] == figures["frozen"], figures
    assert figures["frozen_after_import"] > figures["frozen"], figures
