"""A ceiling on this process's address space for the length of a block (Linux).

A test of a memory bound runs the code under it: if the bound is broken, allocation fails
within the ceiling (MemoryError) instead of taking the machine's memory.
"""

from __future__ import annotations

import resource
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _address_space() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize in /proc/self/status")


@contextmanager
def address_space_cap(extra_bytes: int) -> Iterator[None]:
    """Let the process map at most ``extra_bytes`` more than it has mapped now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    ceiling = _address_space() + extra_bytes
    if hard != resource.RLIM_INFINITY:
        ceiling = min(ceiling, hard)
    resource.setrlimit(resource.RLIMIT_AS, (ceiling, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
