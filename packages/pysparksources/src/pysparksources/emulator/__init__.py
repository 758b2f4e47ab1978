"""Deprecated: the Event Hubs emulator is its own distribution, ``pysparksources-emulator``.

``from pysparksources.emulator import EventHubsEmulator`` keeps working (with a
DeprecationWarning) where that distribution is installed; import ``pysparksources_emulator``
instead.
"""

from __future__ import annotations

import warnings

try:
    from pysparksources_emulator import (
        EmulatorConfig,
        EventHubsEmulator,
        Fault,
        HubConfig,
        partition_for_key,
    )
except ImportError as error:  # pragma: no cover - depends on what is installed
    raise ImportError(
        "the Event Hubs emulator moved to its own distribution: "
        "pip install pysparksources-emulator, then import pysparksources_emulator"
    ) from error

__all__ = ["EmulatorConfig", "EventHubsEmulator", "Fault", "HubConfig", "partition_for_key"]

warnings.warn(
    "pysparksources.emulator is deprecated: import pysparksources_emulator "
    "(pip install pysparksources-emulator)",
    DeprecationWarning,
    stacklevel=2,
)
