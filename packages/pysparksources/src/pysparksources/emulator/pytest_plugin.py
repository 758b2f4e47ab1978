"""Deprecated: pysparksources-emulator[pytest] registers the emulator's fixtures by itself.

``pytest_plugins = ["pysparksources.emulator.pytest_plugin"]`` keeps working (with a
DeprecationWarning); with that distribution installed the fixtures need no line at all.
"""

from __future__ import annotations

import warnings

from pysparksources_emulator.pytest_plugin import eventhubs_emulator, eventhubs_emulator_factory

__all__ = ["eventhubs_emulator", "eventhubs_emulator_factory"]

warnings.warn(
    "pysparksources.emulator.pytest_plugin is deprecated: install pysparksources-emulator[pytest], "
    "whose plugin pytest loads by itself",
    DeprecationWarning,
    stacklevel=2,
)
