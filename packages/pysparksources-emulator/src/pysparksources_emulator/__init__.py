"""An Event Hubs-compatible AMQP 1.0 emulator for development and tests (not a broker).

The real azure-eventhub SDK talks to it over a socket on 127.0.0.1; see the distribution's
README (pysparksources-emulator). This package needs only the standard library. Two modules
outside its core stand behind extras: ``pytest_plugin`` (``pip install
"pysparksources-emulator[pytest]"``; pytest loads it by itself through its ``pytest11`` entry
point: fixtures ``eventhubs_emulator`` and ``eventhubs_emulator_factory``) and ``testing``
(``[sdk]``: send, receive and collect events with the azure-eventhub SDK). The command line is
``pysparksources-emulator`` (or ``python -m pysparksources_emulator``).
"""

from pysparksources_emulator._config import EmulatorConfig, HubConfig
from pysparksources_emulator._emulator import EventHubsEmulator
from pysparksources_emulator._faults import Fault
from pysparksources_emulator._jwt import JwtAuthority, JwtError
from pysparksources_emulator._partition_key import partition_for_key
from pysparksources_emulator._serve import main as serve

__all__ = [
    "EmulatorConfig",
    "EventHubsEmulator",
    "Fault",
    "HubConfig",
    "JwtAuthority",
    "JwtError",
    "partition_for_key",
    "serve",
]
