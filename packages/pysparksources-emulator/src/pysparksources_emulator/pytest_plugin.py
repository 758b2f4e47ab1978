"""Pytest fixtures that run the emulator on 127.0.0.1 (port 0) and always stop it.

``pip install "pysparksources-emulator[pytest]"`` is all it takes: pytest loads this module by
itself through the distribution's ``pytest11`` entry point, so no conftest.py names it (and
none should: pytest refuses a plugin registered twice under two names).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from pysparksources_emulator._config import EmulatorConfig, HubConfig
from pysparksources_emulator._emulator import EventHubsEmulator

__all__ = ["eventhubs_emulator", "eventhubs_emulator_factory"]

EmulatorFactory = Callable[..., EventHubsEmulator]


@pytest.fixture
def eventhubs_emulator_factory() -> Iterator[EmulatorFactory]:
    """Start emulators on demand: ``factory(hubs={"h": 2}, keys=..., data_dir=...)``.

    Every emulator it started is stopped at teardown, even if the test failed.
    """
    started: list[EventHubsEmulator] = []

    def start(
        hubs: dict[str, int] | list[HubConfig] | None = None,
        config: EmulatorConfig | None = None,
        **kwargs: Any,
    ) -> EventHubsEmulator:
        if config is None:
            hub_list = (
                [HubConfig(n, c, ["cg1"]) for n, c in (hubs or {"test": 2}).items()]
                if not isinstance(hubs, list)
                else hubs
            )
            config = EmulatorConfig(hubs=hub_list, **kwargs)
        emulator = EventHubsEmulator(config).start()
        started.append(emulator)
        return emulator

    yield start
    for emulator in reversed(started):
        emulator.stop()


@pytest.fixture
def eventhubs_emulator(eventhubs_emulator_factory: EmulatorFactory) -> EventHubsEmulator:
    """An in-memory emulator with hub ``test`` (2 partitions; groups $Default and cg1)."""
    return eventhubs_emulator_factory()
