"""The emulator distribution's own tests: alone (``pytest`` in packages/pysparksources-emulator,
settings in its pyproject.toml) or in the repository's whole suite (the root pytest.ini lists
this folder in its testpaths).

Needs ``pip install "pysparksources-emulator[test]"``. The fixtures ``eventhubs_emulator`` and
``eventhubs_emulator_factory`` come from the distribution's pytest plugin, which pytest loads
through its entry point (no ``pytest_plugins`` line). The SDK helpers come from
``pysparksources_emulator.testing``, whose ``send`` opens a new producer on every call: these
tests check what a new client's handshake does, and count the emulator's connections.
"""

from __future__ import annotations

from hypothesis import settings

# Property-based fuzzing (test_fuzz_amqp.py), the same profiles as the repository's suite: "ci"
# keeps it under a minute on 2 cores; --hypothesis-profile=long runs deep. No deadline: a
# socket round trip on a loaded machine is no bug.
settings.register_profile("ci", max_examples=150, deadline=None, print_blob=True)
settings.register_profile("long", max_examples=20_000, deadline=None, print_blob=True)
settings.load_profile("ci")
