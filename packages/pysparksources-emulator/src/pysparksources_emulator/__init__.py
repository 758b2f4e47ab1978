"""An Event Hubs-compatible AMQP 1.0 emulator for development and tests (not a broker).

The azure-eventhub SDK talks to it over a real socket on 127.0.0.1; see
docs/eventhubs-emulator.md. The emulator itself needs only the standard library (it imports
no Azure module); nothing else in the package imports it except the demo and the
``pysparksources eventhubs-emulator`` command. For tests, ``pip install
"pysparksources[emulator]"`` adds pytest (fixtures: ``pytest_plugins =
["pysparksources_emulator.pytest_plugin"]``) and the azure-eventhub SDK to talk to it.
"""

from pysparksources_emulator._config import EmulatorConfig, HubConfig
from pysparksources_emulator._emulator import EventHubsEmulator
from pysparksources_emulator._faults import Fault
from pysparksources_emulator._partition_key import partition_for_key
from pysparksources_emulator._serve import main as serve

__all__ = [
    "EmulatorConfig",
    "EventHubsEmulator",
    "Fault",
    "HubConfig",
    "partition_for_key",
    "serve",
]
