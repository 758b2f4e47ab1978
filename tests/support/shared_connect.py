"""One Spark Connect server for every pytest-xdist process of a run.

Each pytest process used to start its own server: a JVM start, its warm-up and its own set of
Spark Python daemons, three times over in a run that is bound by CPU on 2 cores. A Connect
server serves many client sessions, each with its own configuration, temporary views,
streaming queries and listeners, so the processes share one, as a team shares a cluster's.

The processes coordinate through two files in the run's folder (:func:`run_folder`, made by
the run's first process and inherited by the xdist workers it starts), under an exclusive
``flock``: the server's address and pid, and the processes using it. The first to need a
server starts it; the last to leave stops it (by pid: the starter may have exited by then). A
process that needs a server after the last user stopped it starts a new one. If a worker dies
holding it, the run's first process stops the server when it exits.
"""

from __future__ import annotations

import atexit
import fcntl
import json
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from support.processes import process_state
from support.spark_processes import ConnectServer

STATE, LOCK = "connect-server.json", "connect-server.lock"
RUN_FOLDER_VARIABLE = "PYSPARKSOURCES_TEST_RUN_FOLDER"
# Servers this process started: kept referenced, so a server another process stops leaves no
# "subprocess still running" warning behind here.
_STARTED: list[ConnectServer] = []


@dataclass(frozen=True)
class RunningConnectServer:
    """What tests read of a server: where to connect, and its log (whose folder is the
    server's working directory)."""

    url: str
    log: Path
    pid: int


@contextmanager
def _locked(root: Path) -> Iterator[None]:
    with (root / LOCK).open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie left by an exited starter does not)."""
    return process_state(pid) not in (None, "Z", "X")


def _stop(pid: int, timeout: float = 60) -> None:
    for server in _STARTED:
        if server.proc.pid == pid:  # this process's child: stop and reap it
            server.stop()
            return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _running(pid):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 10
        time.sleep(0.1)


def run_folder() -> Path:
    """The folder the pytest processes of this run share; the first process makes it and,
    when it exits, stops a server left running and removes the folder."""
    if RUN_FOLDER_VARIABLE not in os.environ:
        folder = tempfile.mkdtemp(prefix="pysparksources-run-")
        os.environ[RUN_FOLDER_VARIABLE] = folder
        atexit.register(_clean_up, Path(folder))
    return Path(os.environ[RUN_FOLDER_VARIABLE])


def _clean_up(folder: Path) -> None:
    state_file = folder / STATE
    if state_file.exists():
        pid = json.loads(state_file.read_text())["pid"]
        if _running(pid):
            _stop(pid)
    shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def shared_connect_server(user: str) -> Iterator[RunningConnectServer]:
    """The run's server, used by ``user`` (a name unique among the run's processes)."""
    root = run_folder()
    state_file = root / STATE
    with _locked(root):
        state = json.loads(state_file.read_text()) if state_file.exists() else None
        if state is None or not _running(state["pid"]):
            workdir = root / f"connect-{time.time_ns()}"
            workdir.mkdir()
            server = ConnectServer(workdir)
            _STARTED.append(server)
            # Processes still registered with a server that died stay registered, so the last
            # of them to leave stops this one.
            users = state["users"] if state is not None else []
            state = {"url": server.url, "log": str(server.log), "pid": server.proc.pid}
            state["users"] = users
        state["users"].append(user)
        state_file.write_text(json.dumps(state))
    try:
        yield RunningConnectServer(state["url"], Path(state["log"]), state["pid"])
    finally:
        with _locked(root):
            state = json.loads(state_file.read_text())
            state["users"].remove(user)
            if state["users"]:
                state_file.write_text(json.dumps(state))
            else:
                _stop(state["pid"])
                state_file.unlink()
