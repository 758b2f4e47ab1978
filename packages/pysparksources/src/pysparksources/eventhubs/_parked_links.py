"""Parked receivers of every Python worker on a machine, kept within Event Hubs' reader limit.

Event Hubs allows five readers per partition and consumer group. Spark gives each concurrent
task a Python worker of its own (two with a Python sink) and hands a partition's batches to
whichever worker is idle, so with a receiver cache per worker an executor of four cores
parks up to eight receivers per partition, and the sixth link is refused
(``amqp:resource-limit-exceeded``) until a parked one idles out.

Workers share nothing but the machine, so the registry is a folder under the temp directory:
one empty file per parked receiver (``<pid>-<token>``) in a folder per hub, consumer group and
partition. A worker about to open a link asks the most recently parked receivers beyond
``maxParkedReceivers`` to close by creating ``<name>.close``; each worker's reaper thread looks
for that mark ten times a second. The most recent, because Spark's pool of idle Python
workers is first in, first out: the worker that parked longest ago gets the next task, so its
receiver is the one most likely to be reused (closing the oldest instead made every task of
three workers taking turns a miss). A refused link asks every parked one on the machine. All
of it is best effort: a registry that cannot be written never fails a task.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
from pathlib import Path

__all__ = ["Slot", "ask_to_close", "is_asked_to_close", "parked", "unparked"]

log = logging.getLogger(__name__)
_MARK = ".close"


class Slot:
    """Where one (hub, consumer group, partition)'s parked receivers are registered."""

    def __init__(self, hub: str, consumer_group: str, partition_id: str) -> None:
        # Event Hubs counts readers per hub, consumer group (case-insensitive) and partition,
        # whatever else differs between receivers; the digest keeps names short and plain.
        name = f"{hub}|{consumer_group.lower()}".encode()
        digest = hashlib.sha256(name).hexdigest()[:20]
        self.folder = _root() / digest / partition_id


def _root() -> Path:
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"pysparksources-parked-{uid}"


def _name(token: str) -> str:
    return f"{os.getpid()}-{token}"


def parked(slot: Slot, token: str) -> None:
    """Register a receiver parked by this process (its mtime says when)."""
    try:
        slot.folder.mkdir(parents=True, exist_ok=True)
        (slot.folder / (_name(token) + _MARK)).unlink(missing_ok=True)
        (slot.folder / _name(token)).touch()
    except OSError as error:
        log.debug("could not register a parked receiver in %s: %s", slot.folder, error)


def unparked(slot: Slot, token: str) -> None:
    """Forget a receiver: taken by a task, or closed."""
    for name in (_name(token), _name(token) + _MARK):
        with contextlib.suppress(OSError):
            (slot.folder / name).unlink(missing_ok=True)


def is_asked_to_close(slot: Slot, token: str) -> bool:
    return (slot.folder / (_name(token) + _MARK)).exists()


def ask_to_close(slot: Slot, keep: int) -> int:
    """Ask all but the ``keep`` longest parked receivers of ``slot`` on this machine to close
    (those of this process included: their reaper acts on it too); returns how many. Entries
    of processes that no longer exist are removed."""
    try:
        entries = [p for p in slot.folder.iterdir() if not p.name.endswith(_MARK)]
    except OSError:
        return 0
    live: list[tuple[float, Path]] = []
    for entry in entries:
        pid = entry.name.split("-", 1)[0]
        try:
            stamp = entry.stat().st_mtime
        except OSError:
            continue
        if not pid.isdigit() or not _alive(int(pid)):
            with contextlib.suppress(OSError):
                entry.unlink(missing_ok=True)
            continue
        live.append((stamp, entry))
    live.sort()
    asked = 0
    for _, entry in live[max(0, keep) :]:
        try:
            entry.with_name(entry.name + _MARK).touch()
            asked += 1
        except OSError as error:
            log.debug("could not ask %s to close: %s", entry, error)
    return asked


def _alive(pid: int) -> bool:
    if os.name == "nt":  # os.kill there ends the process; Spark's workers run on POSIX anyway
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive, and not ours to judge
        return True
    return True
