"""The parked-receiver registry's folder: this user's alone, or no registry at all.

The registry (:mod:`_parked_links`) lives where every Python worker of the machine finds it
without being told: ``$XDG_RUNTIME_DIR/pysparksources-receivers`` when that variable names a
private folder of this user's (systemd gives each logged-in user one), else
``<temp dir>/pysparksources-receivers-<uid>``. The temp directory is shared by every user, so
another one may have made that name first, as a folder of theirs, a folder open to all, or a
symbolic link into this user's home, to have our workers create, lock or remove files where
they choose. So the folder is made mode 0700 and, made now or found, opened without following
a symbolic link and checked on the open descriptor: a real folder, owned by this user, no
permission bits for group or others. Anything else turns the registry off, with one warning per
process, and nothing in or behind that name is touched. Its subfolders get the same check, and
every later call works relative to descriptors so checked, never by path.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import tempfile
import threading

from pysparksources.eventhubs import NAME

__all__ = ["OPEN_FLAGS", "open_child", "open_root", "root_path"]

log = logging.getLogger(__name__)
_RUNTIME_NAME = "pysparksources-receivers"
# What every open of the registry adds: never follow a link at the last step, close on
# exec (POSIX only, as is the registry).
OPEN_FLAGS: int = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | OPEN_FLAGS
_warned = False
_warn_lock = threading.Lock()


def root_path() -> tuple[str, str]:
    """The registry folder's parent and name (for this user)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        try:
            if _problem(os.lstat(runtime)) is None:
                return runtime, _RUNTIME_NAME
        except OSError:
            pass
    return tempfile.gettempdir(), f"{_RUNTIME_NAME}-{os.geteuid()}"


def open_root() -> int | None:
    """A descriptor of the registry's folder, made if missing; None (and the one warning) when
    it is not this user's alone. The caller closes it."""
    parent, name = root_path()
    try:
        parent_fd = os.open(parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as error:
        _turn_off(parent, f"cannot be opened ({error.strerror})")
        return None
    try:
        return open_child(parent_fd, name, create=True, shown=os.path.join(parent, name))
    finally:
        os.close(parent_fd)


def open_child(parent: int, name: str, create: bool, shown: str | None = None) -> int | None:
    """A descriptor of folder ``name`` in ``parent`` (made 0700 if ``create``), checked
    private; None if it is missing (and not to be made) or not private (with the warning)."""
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o700, dir_fd=parent)
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        return None
    except OSError as error:
        _turn_off(shown or name, _what_is(parent, name) or f"cannot be opened ({error.strerror})")
        return None
    problem = _problem(os.fstat(fd))
    if problem is not None:
        os.close(fd)
        _turn_off(shown or name, problem)
        return None
    return fd


def _what_is(parent: int, name: str) -> str | None:
    try:
        seen = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except OSError:
        return None
    if stat.S_ISLNK(seen.st_mode):
        return "is a symbolic link"
    return None if stat.S_ISDIR(seen.st_mode) else "is not a folder"


def _problem(seen: os.stat_result) -> str | None:
    """Why a folder (as lstat or fstat saw it) is not private to this user; None if it is."""
    if not stat.S_ISDIR(seen.st_mode):
        return "is a symbolic link" if stat.S_ISLNK(seen.st_mode) else "is not a folder"
    if seen.st_uid != os.geteuid():
        return f"belongs to user id {seen.st_uid}, not to this user ({os.geteuid()})"
    if seen.st_mode & 0o077:
        return f"is open to other users (mode {stat.S_IMODE(seen.st_mode):04o}, not 0700)"
    return None


def _turn_off(path: str, problem: str) -> None:
    global _warned
    with _warn_lock:
        if _warned:
            return
        _warned = True
    log.warning(
        "%s: the registry of parked receivers is off: %s %s. It must be a folder of this "
        "user's that no other user can enter (mode 0700), or another user could have this "
        "process create and remove files where they choose; nothing there was touched. "
        "Without it, the Python workers of this machine do not share their count of parked "
        "receivers, and Event Hubs may refuse a sixth reader of a partition (a task then "
        "waits for a parked receiver to idle out). Remove it (if it is not yours, ask whoever "
        "made it) and the next parked receiver makes it again, or point XDG_RUNTIME_DIR at a "
        "private folder of this user's.",
        NAME,
        path,
        problem,
    )
