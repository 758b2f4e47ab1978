"""A JVM's live heap: what is still in use right after a full collection (``jcmd``).

A JVM's RSS climbs while the collector lets the heap grow towards its maximum, so RSS alone
cannot tell a leak from a heap settling; the heap in use after a forced full GC can. Costs one
full GC (tens of milliseconds on these heaps) per call; ``None`` without a JDK's ``jcmd``.
"""

from __future__ import annotations

import re
import shutil
import subprocess

__all__ = ["live_heap_bytes"]

_USED = re.compile(r"heap\s+total\s+\d+K,\s+used\s+(\d+)K")


def live_heap_bytes(pid: int, timeout: float = 60) -> int | None:
    jcmd = shutil.which("jcmd")
    if jcmd is None:
        return None
    try:
        subprocess.run([jcmd, str(pid), "GC.run"], capture_output=True, timeout=timeout, check=True)
        info = subprocess.run(
            [jcmd, str(pid), "GC.heap_info"],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        ).stdout
    except (subprocess.SubprocessError, OSError):  # the JVM ended or did not answer
        return None
    match = _USED.search(info)
    return int(match.group(1)) * 1024 if match else None
