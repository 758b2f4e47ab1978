"""``--cpu-report=N``: the CPU each test cost, so suite-time work starts from where CPU goes.

The suite is bound by CPU on 2 cores (three pytest-xdist processes share them), so a test's
wall time says little: it stretches with whatever its neighbours run. This plugin charges each
test the CPU-seconds its own pytest process tree used from setup to teardown: the process
itself and every live descendant (its Spark JVMs, Spark's Python daemons and workers,
subprocess drivers), each with the CPU of the children it has reaped. Background work of a
shared JVM during the test is charged to the test; processes re-parented away from the tree (a
SIGKILLed driver's JVM) are lost. The run's one Connect server (support/shared_connect.py) sits
in the tree of the process that started it: its work for every process is charged to that
process's tests, and its exit shows as a negative figure there. The numbers travel to the
xdist controller in the reports' user properties; the summary lists the N costliest tests and
the folders' totals.

Linux only (/proc); elsewhere the option prints that it has nothing to report.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest

from support.processes import descendants, process_table

PROPERTY = "cpu-seconds"
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def tree_cpu_seconds(root: int) -> float | None:
    """CPU of ``root`` and its live descendants, with the children each has reaped."""
    table = process_table()
    if root not in table:  # no /proc
        return None
    pids = descendants(root, table) | {root}
    return sum(table[pid].cpu_ticks for pid in pids) / _TICKS


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cpu-report",
        type=int,
        default=0,
        metavar="N",
        help="charge each test the CPU-seconds of its pytest process tree; list the N costliest",
    )


class CpuReport:
    """Measures in the process that runs tests; summarizes in the one that reports."""

    def __init__(self, top: int) -> None:
        self.top = top
        self.started: dict[str, float] = {}
        self.costs: dict[str, float] = {}

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        now = tree_cpu_seconds(os.getpid())
        if now is not None:
            self.started[item.nodeid] = now

    @pytest.hookimpl(hookwrapper=True, trylast=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Iterator[None]:
        yield
        start = self.started.pop(item.nodeid, None)
        end = tree_cpu_seconds(os.getpid())
        if start is not None and end is not None:
            item.user_properties.append((PROPERTY, round(end - start, 2)))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "teardown":
            for key, value in report.user_properties:
                if key == PROPERTY and isinstance(value, (int, float)):
                    self.costs[report.nodeid] = float(value)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        terminalreporter.section(f"CPU-seconds per test (top {self.top})")
        if not self.costs:
            terminalreporter.write_line("nothing measured (needs Linux's /proc)")
            return
        ranked = sorted(self.costs.items(), key=lambda kv: -kv[1])
        for nodeid, seconds in ranked[: self.top]:
            terminalreporter.write_line(f"{seconds:8.1f}  {nodeid}")
        folders: dict[str, list[float]] = defaultdict(list)
        for nodeid, seconds in self.costs.items():
            folders[nodeid.split("::")[0].rsplit("/", 1)[0]].append(seconds)
        terminalreporter.write_line("by folder (CPU-s, tests):")
        for folder, values in sorted(folders.items(), key=lambda kv: -sum(kv[1])):
            terminalreporter.write_line(f"{sum(values):8.1f}  {len(values):4d}  {folder}")
        total = sum(self.costs.values())
        terminalreporter.write_line(f"{total:8.1f}  {len(self.costs):4d}  all tests")


def pytest_configure(config: pytest.Config) -> None:
    top = config.getoption("--cpu-report")
    if top > 0:
        config.pluginmanager.register(CpuReport(top), "cpu-report")
