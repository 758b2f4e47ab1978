"""Hands each test's conformance cells to the run's summary (printed by tests/conftest.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from harness import RESULTS

CONFORMANCE_PROPERTY = "conformance-cell"  # the name tests/conftest.py collects


@pytest.fixture(autouse=True)
def _report_cells(record_property: Callable[[str, Any], None]) -> Iterator[None]:
    """Attach the cells a test recorded to its report: the only channel out of an xdist worker."""
    start = len(RESULTS)
    yield
    for cell in RESULTS[start:]:
        record_property(CONFORMANCE_PROPERTY, dataclasses.asdict(cell))
