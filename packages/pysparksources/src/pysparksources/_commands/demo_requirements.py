"""What ``pysparksources demo`` needs beyond the package's own dependencies, checked before it
imports any of it: PySpark, the Event Hubs SDK and the Event Hubs emulator (the
``pysparksources-emulator`` distribution), which the ``demo`` extra installs.

This module imports none of them, so the check gives its one line where they are missing.
"""

from __future__ import annotations

import importlib.util

from pysparksources._core.install_hint import pip_install
from pysparksources.errors import PySparkSourcesError

__all__ = ["DEMO", "REQUIREMENTS", "check_requirements"]

DEMO = "pysparksources demo"  # starts every message the demo raises

# module -> the distribution that provides it
REQUIREMENTS = {
    "pyspark": "pyspark",
    "azure.eventhub": "azure-eventhub",
    "pysparksources_emulator": "pysparksources-emulator",
}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # its parent package is missing too (azure)
        return False


def check_requirements() -> None:
    """Fail at once, before Spark starts, naming what the demo needs and this environment lacks
    and the one command that installs it."""
    missing = [dist for module, dist in REQUIREMENTS.items() if not _installed(module)]
    if not missing:
        return
    if missing == ["pysparksources-emulator"]:
        fix = pip_install("pysparksources-emulator")
    else:
        fix = pip_install(extra="demo")
    raise PySparkSourcesError(DEMO, f"needs {', '.join(missing)}, not installed here: {fix}")
