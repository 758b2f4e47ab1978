"""Emulator tests: fixtures from the package's pytest plugin plus SDK helpers."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from pysparksources.emulator.pytest_plugin import (
    eventhubs_emulator,
    eventhubs_emulator_factory,
)

__all__ = ["eventhubs_emulator", "eventhubs_emulator_factory"]
