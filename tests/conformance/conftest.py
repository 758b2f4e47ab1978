"""Collects the conformance cells of a run and prints the summary table at its end."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    from harness import RESULTS, save
    from report import counts, summary

    if not RESULTS:
        return
    terminalreporter.section("pyfile vs Spark: conformance summary")
    terminalreporter.write_line(summary(RESULTS))
    terminalreporter.write_line(f"Totals: {counts(RESULTS)}.")
    target = os.environ.get("CONFORMANCE_RESULTS")
    if target:
        save(RESULTS, Path(target))
