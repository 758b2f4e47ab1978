"""Fuzzed frames must leave the emulator serving new clients: every send opens a fresh producer."""

from __future__ import annotations

import pytest
from support import eventhubs


@pytest.fixture(autouse=True)
def fresh_producers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eventhubs, "reuse_producers", False)
