"""This machine's processes as Linux /proc shows them (empty elsewhere): the Java processes
below this one, a process's state, and the table both are read from."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ProcessEntry:
    parent: int
    command: str  # the kernel's short name, e.g. "java"
    state: str  # "R", "S", ..., "Z" for a zombie
    cpu_ticks: int  # user + system, with the children it has reaped


def _stat_fields(pid: int | str) -> tuple[str, list[str]] | None:
    """(command, the fields after it) of /proc/PID/stat; None once the process is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    command, _, rest = text[text.find("(") + 1 :].rpartition(")")
    return command, rest.split()


def process_state(pid: int) -> str | None:
    """The process's state letter ("Z": exited, not reaped yet); None when there is none."""
    stat = _stat_fields(pid)
    return stat[1][0] if stat is not None and stat[1] else None


def process_table() -> dict[int, ProcessEntry]:
    """Every process now: pid -> its entry."""
    table = {}
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        stat = _stat_fields(name) if name.isdigit() else None
        if stat is None or len(stat[1]) < 15:
            continue
        command, fields = stat  # fields[0] state, [1] parent, [11]..[14] utime..cstime
        ticks = sum(int(v) for v in fields[11:15])
        table[int(name)] = ProcessEntry(int(fields[1]), command, fields[0], ticks)
    return table


def descendants(root: int, table: dict[int, ProcessEntry]) -> set[int]:
    """Process ids below ``root`` in ``table``."""
    children: dict[int, list[int]] = {}
    for pid, entry in table.items():
        children.setdefault(entry.parent, []).append(pid)
    found: set[int] = set()
    todo = list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        found.add(pid)
        todo.extend(children.get(pid, ()))
    return found


def java_descendants() -> set[int]:
    """Process ids of the java processes below this one."""
    table = process_table()
    return {pid for pid in descendants(os.getpid(), table) if table[pid].command == "java"}


def command_line(pid: int) -> list[str]:
    """The arguments a process was started with ([] once it has ended)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []
