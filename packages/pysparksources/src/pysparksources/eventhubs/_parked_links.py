"""Parked receivers of every Python worker on a machine, kept within Event Hubs' reader limit.

Event Hubs allows five readers per partition and consumer group. Spark gives each concurrent
task a Python worker of its own (two with a Python sink) and hands a partition's batches to
whichever worker is idle, so with a receiver cache per worker an executor of four cores
parks up to eight receivers per partition, and the sixth link is refused
(``amqp:resource-limit-exceeded``) until a parked one idles out.

Workers share nothing but the machine, so the registry is a folder of this user's (see
:mod:`_private_folder`): one empty file per parked receiver (``<pid>-<token>``) in a folder per
hub, consumer group and partition. A worker about to open a link asks the most recently parked
receivers beyond ``maxParkedReceivers`` to close by creating ``<name>.close``; each worker's
reaper thread looks for that mark ten times a second. The most recent, because Spark's pool of
idle Python workers is first in, first out: the worker that parked longest ago gets the next
task, so its receiver is the one most likely to be reused (closing the oldest instead made
every task of three workers taking turns a miss). A refused link asks every parked one on the
machine. All of it is best effort: a registry that cannot be written never fails a task.

Whether an entry's process still lives is the kernel's answer, not the pid in its name: the
process holds an exclusive ``flock`` on its entry while the receiver is parked, and the kernel
drops it when the process ends, however it ends. Another worker that can take the lock knows
the owner is gone. Pids mean nothing across PID namespaces (containers sharing /tmp) and are
reused; a lock is neither. The pid stays in the name for people reading the folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import stat
import threading
import time
from collections.abc import Iterator

from pysparksources.eventhubs import _private_folder

try:
    import fcntl
except ImportError:  # not POSIX: Spark's Python workers run on POSIX; the registry is off
    fcntl = None  # type: ignore[assignment]

__all__ = ["Slot", "ask_to_close", "is_asked_to_close", "parked", "unparked"]

log = logging.getLogger(__name__)
_MARK = ".close"
# The only names the registry creates, reads or removes: anything else in its folders is
# left alone.
_ENTRY = re.compile(r"[0-9]{1,10}-[A-Za-z0-9]{1,32}")
# O_NONBLOCK: a FIFO named like an entry must not hang the worker that opens it.
_READ_FLAGS = os.O_RDONLY | _private_folder.OPEN_FLAGS | getattr(os, "O_NONBLOCK", 0)
_LOCK_TRIES = 50  # 1 ms apart: another worker holds a new entry's lock only while it checks it

# (slot name, token) -> descriptor holding the lock of this process's parked entry.
_HELD: dict[tuple[str, str], int] = {}
_HELD_LOCK = threading.Lock()


class Slot:
    """Where one (hub, consumer group, partition)'s parked receivers are registered."""

    def __init__(self, hub: str, consumer_group: str, partition_id: str) -> None:
        # Event Hubs counts readers per hub, consumer group (case-insensitive) and partition,
        # whatever else differs between receivers. One digest names the folder: short, plain,
        # and nothing of the service's (a partition id) reaches a path.
        name = f"{hub}|{consumer_group.lower()}|{partition_id}".encode()
        self.name = hashlib.sha256(name).hexdigest()[:24]


def _name(token: str) -> str:
    return f"{os.getpid()}-{token}"


@contextlib.contextmanager
def _slot_folder(slot: Slot, create: bool) -> Iterator[int | None]:
    """A descriptor of the slot's folder (created if ``create``), None when the registry is
    off or the folder is missing; checked private to this user, as its root is."""
    if fcntl is None:
        yield None
        return
    root = _private_folder.open_root()
    if root is None:
        yield None
        return
    try:
        shown = os.path.join(*_private_folder.root_path(), slot.name)
        folder = _private_folder.open_child(root, slot.name, create, shown)
    finally:
        os.close(root)
    if folder is None:
        yield None
        return
    try:
        yield folder
    finally:
        os.close(folder)


def parked(slot: Slot, token: str) -> None:
    """Register a receiver parked by this process (its mtime says when)."""
    if _ENTRY.fullmatch(_name(token)) is None:
        log.debug("not registering parked receiver %r: not a registry name", token)
        return
    try:
        with _slot_folder(slot, create=True) as folder:
            if folder is None:
                return
            name = _name(token)
            _unlink(folder, name + _MARK)
            with _HELD_LOCK:
                held = _HELD.get((slot.name, token))
                if held is not None and _still_named(folder, name, held):
                    os.utime(held)  # parked again: now
                    return
                if held is not None:
                    del _HELD[(slot.name, token)]
                    os.close(held)
                fd = _create_locked(folder, name)
                if fd is not None:
                    _HELD[(slot.name, token)] = fd
    except OSError as error:
        log.debug("could not register a parked receiver in %s: %s", slot.name, error)


def unparked(slot: Slot, token: str) -> None:
    """Forget a receiver: taken by a task, or closed."""
    with _HELD_LOCK:
        held = _HELD.pop((slot.name, token), None)
    try:
        with _slot_folder(slot, create=False) as folder:
            if folder is not None:
                if held is not None and _still_named(folder, _name(token), held):
                    _unlink(folder, _name(token))
                _unlink(folder, _name(token) + _MARK)
    except OSError as error:
        log.debug("could not unregister a parked receiver in %s: %s", slot.name, error)
    finally:
        if held is not None:
            os.close(held)  # the lock goes with it


def is_asked_to_close(slot: Slot, token: str) -> bool:
    try:
        with _slot_folder(slot, create=False) as folder:
            if folder is None:
                return False
            os.stat(_name(token) + _MARK, dir_fd=folder, follow_symlinks=False)
            return True
    except OSError:
        return False


def ask_to_close(slot: Slot, keep: int) -> int:
    """Ask all but the ``keep`` longest parked receivers of ``slot`` on this machine to close
    (those of this process included: their reaper acts on it too); returns how many. Entries
    whose process has ended are removed, with their marks."""
    try:
        with _slot_folder(slot, create=False) as folder:
            if folder is None:
                return 0
            return _ask(folder, keep)
    except OSError as error:
        log.debug("could not read the parked receivers of %s: %s", slot.name, error)
        return 0


def _ask(folder: int, keep: int) -> int:
    names = set(os.listdir(folder))
    live: list[tuple[float, str]] = []
    for name in sorted(n for n in names if _ENTRY.fullmatch(n)):
        parked_at = _parked_at(folder, name)
        if parked_at is not None:
            live.append((parked_at, name))
    alive = {name for _, name in live}
    for mark in names:
        owner = mark[: -len(_MARK)]
        if mark.endswith(_MARK) and _ENTRY.fullmatch(owner) and owner not in alive:
            _unlink(folder, mark)  # its receiver is gone
    live.sort()
    asked = 0
    for _, name in live[max(0, keep) :]:
        try:
            os.close(_create(folder, name + _MARK))
        except FileExistsError:
            pass  # asked already
        except OSError as error:
            log.debug("could not ask %s to close: %s", name, error)
            continue
        asked += 1
    return asked


def _parked_at(folder: int, name: str) -> float | None:
    """When the entry's receiver was parked, or None when its process is gone (the entry is
    removed then) or the name is not a regular file of the registry's."""
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=folder)
    except OSError:
        return None  # gone, or a symlink (ELOOP): not ours to follow
    try:
        seen = os.fstat(fd)
        if not stat.S_ISREG(seen.st_mode):
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return seen.st_mtime  # its process holds the lock: alive
        # Nobody holds it: its process ended. Remove it while holding the lock, so a worker
        # creating it just now sees it gone (_create_locked) and creates it again.
        if _still_named(folder, name, fd):
            _unlink(folder, name)
            _unlink(folder, name + _MARK)
        return None
    finally:
        os.close(fd)


def _create(folder: int, name: str) -> int:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _private_folder.OPEN_FLAGS
    return os.open(name, flags, 0o600, dir_fd=folder)


def _create_locked(folder: int, name: str) -> int | None:
    """A new entry, locked by this process; None if it could not be made."""
    for _ in range(3):
        try:
            fd = _create(folder, name)
        except FileExistsError:
            # Left by an ended process that had our pid (a restarted container) and a token
            # like ours: removed if nobody holds it, else not ours to touch.
            if _parked_at(folder, name) is not None:
                return None
            continue
        for _ in range(_LOCK_TRIES):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                time.sleep(0.001)  # another worker is checking it: it lets go at once
        else:
            os.close(fd)
            return None
        if os.fstat(fd).st_nlink > 0:
            return fd
        os.close(fd)  # removed by a worker that took it for an ended process's: again
    return None


def _still_named(folder: int, name: str, fd: int) -> bool:
    """Whether ``name`` is still the file open as ``fd``."""
    try:
        named = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except OSError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def _unlink(folder: int, name: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(name, dir_fd=folder)


def _forget_after_fork() -> None:
    """A forked child owns none of its parent's receivers: it must not keep their locks (and
    with them the entries) alive once the parent has ended."""
    global _HELD_LOCK
    _HELD_LOCK = threading.Lock()
    for fd in _HELD.values():
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)
