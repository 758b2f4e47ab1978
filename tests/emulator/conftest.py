"""This folder tests what a new SDK client does against the emulator: no reused producers."""

from __future__ import annotations

import pytest
from support import eventhubs


@pytest.fixture(autouse=True)
def fresh_producers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eventhubs, "reuse_producers", False)
