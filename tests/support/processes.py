"""This test process's Java descendants, read from Linux /proc (empty elsewhere)."""

from __future__ import annotations

import os
from pathlib import Path


def java_descendants() -> set[int]:
    """Process ids of the java processes below this one."""
    parents: dict[int, int] = {}
    commands: dict[int, str] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        pid = int(stat.parent.name)
        commands[pid] = text[text.index("(") + 1 : text.rindex(")")]
        parents[pid] = int(text[text.rindex(")") + 2 :].split()[1])
    found, mine = set(), os.getpid()
    for pid in parents:
        walk = pid
        while walk in parents and walk != mine and walk > 1:
            walk = parents[walk]
        if walk == mine and pid != mine and commands[pid] == "java":
            found.add(pid)
    return found


def command_line(pid: int) -> list[str]:
    """The arguments a process was started with ([] once it has ended)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []
