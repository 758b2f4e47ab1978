"""Scala-connector checkpoint migration tests: recorded Spark 3.5 checkpoints, the generator."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "ehsource"))

from pysparksources.testing.eventhubs.pytest_plugin import (
    eventhubs_emulator,
    eventhubs_emulator_factory,
)

__all__ = ["eventhubs_emulator", "eventhubs_emulator_factory"]
