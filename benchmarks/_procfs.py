"""What the soak samples of a process, read from Linux's /proc (no psutil needed).

RSS, threads and open sockets of one process, and its process tree, so the Spark processes a
run started can be found by ancestry and command line rather than by name across the machine.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CAPPED_POOL_PREFIX",
    "ProcessFigures",
    "children_by_parent",
    "command_line",
    "cpu_seconds",
    "descendants",
    "figures",
]

_PROC = Path("/proc")


# Spark's block manager runs block removals (the ContextCleaner drops each micro-batch's
# broadcasts) on cached thread pools of at most 100 threads each that end after 60 s idle:
# "block-manager-ask-thread-pool" on the driver, "block-manager-storage-async-thread-pool" on
# every JVM. Under a steady stream they fill towards their cap; counted apart so that growth
# elsewhere is not hidden behind them (Linux keeps the first 15 characters of a thread name).
CAPPED_POOL_PREFIX = "block-manager-"


@dataclass(frozen=True)
class ProcessFigures:
    """One process (or a group summed): resident memory, threads and socket descriptors."""

    rss_bytes: int = 0
    threads: int = 0
    sockets: int = 0
    processes: int = 0
    capped_pool_threads: int = 0

    def __add__(self, other: ProcessFigures) -> ProcessFigures:
        return ProcessFigures(
            self.rss_bytes + other.rss_bytes,
            self.threads + other.threads,
            self.sockets + other.sockets,
            self.processes + other.processes,
            self.capped_pool_threads + other.capped_pool_threads,
        )


def figures(pid: int) -> ProcessFigures:
    """RSS, threads and socket fds of ``pid``; all zero once it has exited."""
    try:
        status = (_PROC / str(pid) / "status").read_text()
        fds = os.listdir(_PROC / str(pid) / "fd")
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return ProcessFigures()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    rss_kb = int(fields.get("VmRSS", "0 kB").split()[0])
    sockets = 0
    for fd in fds:
        try:
            if os.readlink(_PROC / str(pid) / "fd" / fd).startswith("socket:"):
                sockets += 1
        except OSError:  # closed between the listing and the readlink
            continue
    threads = int(fields.get("Threads", "0"))
    return ProcessFigures(rss_kb * 1024, threads, sockets, 1, _capped_pool_threads(pid))


def _capped_pool_threads(pid: int) -> int:
    count = 0
    try:
        tasks = os.listdir(_PROC / str(pid) / "task")
    except OSError:
        return 0
    for task in tasks:
        try:
            name = (_PROC / str(pid) / "task" / task / "comm").read_text()
        except OSError:  # the thread ended meanwhile
            continue
        count += name.startswith(CAPPED_POOL_PREFIX)
    return count


def command_line(pid: int) -> str:
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


def children_by_parent() -> dict[int, list[int]]:
    """Parent pid -> child pids, for every process visible now."""
    tree: dict[int, list[int]] = {}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        # The command name in parentheses may hold spaces; the parent pid follows it.
        parent = int(stat[stat.rindex(")") + 2 :].split()[1])
        tree.setdefault(parent, []).append(int(entry.name))
    return tree


def descendants(pid: int, tree: dict[int, list[int]] | None = None) -> list[int]:
    """Every process below ``pid`` (children, their children, ...)."""
    tree = children_by_parent() if tree is None else tree
    found: list[int] = []
    stack = list(tree.get(pid, []))
    while stack:
        child = stack.pop()
        found.append(child)
        stack.extend(tree.get(child, []))
    return found


_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU ``pid`` has used, its waited-for children's included; 0 once gone."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return 0.0
    fields = stat[stat.rindex(")") + 2 :].split()
    return sum(int(v) for v in fields[11:15]) / _TICKS
