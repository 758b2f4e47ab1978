"""A standalone Spark cluster on 127.0.0.1, started from the installed pyspark wheel.

Used by ``./dev bench --local-cluster`` and the cluster tests; never shipped in a wheel. Its
processes run this interpreter as Spark's Python (``worker_env``), not PATH's ``python3``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "StandaloneCluster",
    "free_port",
    "spark_home",
    "wait_for_port",
    "worker_env",
]


def spark_home() -> Path:
    """The pyspark package folder: a complete SPARK_HOME (bin/, jars/) in the wheel."""
    import pyspark

    return Path(pyspark.__file__).parent


def free_port() -> int:
    """A port nothing listens on right now (servers here bind 127.0.0.1 only)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def worker_env() -> dict[str, str]:
    """Environment for Spark processes: workers run this interpreter, not PATH's python3."""
    # A Spark Connect session in this process marks the environment as Connect mode; a child
    # that starts a classic driver must not inherit that.
    connect_markers = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE", "SPARK_LOCAL_REMOTE")
    env = {k: v for k, v in os.environ.items() if k not in connect_markers}
    env["PYSPARK_PYTHON"] = sys.executable
    env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    env["SPARK_HOME"] = str(spark_home())
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    return env


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float, log: Path) -> None:
    """Block until ``proc`` listens on ``port``; its log in the error if it dies first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode}; log:\n{log.read_text()}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.25)
    raise TimeoutError(f"nothing listened on 127.0.0.1:{port} after {timeout}s; log: {log}")


class StandaloneCluster:
    """A real Spark standalone cluster on 127.0.0.1: one master and one-core workers.

    Started from the installed pyspark wheel (SPARK_HOME = the pyspark package folder); every
    process is stopped by its id, worker process groups included, because a worker's executors
    are its children.
    """

    def __init__(
        self,
        workdir: Path,
        workers: int = 2,
        memory: str = "2g",
        daemon_env: Mapping[str, str] | None = None,
    ) -> None:
        self.workdir = workdir
        # Set for the master and every worker (restarted ones too), and so for the executors
        # the workers start: e.g. a SPARK_CONF_DIR whose java-opts the executors should get.
        self.daemon_env = dict(daemon_env or {})
        self.port = free_port()
        self.ui_port = free_port()
        self.master = self._start(
            "master",
            [
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--webui-port",
                str(self.ui_port),
            ],
        )
        wait_for_port(self.port, self.master, 120, self.workdir / "master.log")
        self.memory = memory
        self._started_at: dict[int, float] = {}  # worker index -> wall-clock start
        self.workers = [self._start_worker(i) for i in range(workers)]
        self.wait_for_workers(workers)

    def _start_worker(self, i: int) -> subprocess.Popen[bytes]:
        args = ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "1"]
        args += ["--memory", self.memory, "--webui-port", str(free_port())]
        args += ["--work-dir", str(self.workdir / f"worker-{i}"), self.url]
        self._started_at[i] = time.time()
        return self._start(f"worker-{i}", args)

    def _start(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        log = self.workdir / f"{name}.log"
        with log.open("wb") as out:
            return subprocess.Popen(
                [str(spark_home() / "bin" / "spark-class"), *args],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=worker_env() | self.daemon_env,
                cwd=self.workdir,
                start_new_session=True,
            )

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def state(self) -> dict[str, Any]:
        """The master's own view (its web UI's JSON endpoint)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=5) as r:
            state: dict[str, Any] = json.load(r)
            return state

    def wait_for_workers(self, count: int, timeout: float = 120) -> None:
        self._wait_for_state(
            lambda state: state.get("aliveworkers", 0) >= count,
            timeout,
            f"{count} workers did not register with {self.url} in {timeout}s",
        )

    def _wait_for_state(
        self, holds: Callable[[dict[str, Any]], bool], timeout: float, failure: str
    ) -> None:
        """Poll the master's state until ``holds``; TimeoutError(failure) after ``timeout``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if holds(self.state()):
                    return
            except OSError:  # the master's web UI is not up yet
                pass
            time.sleep(0.5)
        raise TimeoutError(failure)

    def kill_worker(self, index: int) -> None:
        """SIGKILL a worker and its executors, as a machine loss would."""
        os.killpg(self.workers[index].pid, signal.SIGKILL)
        self.workers[index].wait(30)

    def restart_worker(self, index: int) -> None:
        """Bring a killed worker back so later tests see two executors again.

        If an application is running, it also waits until that application has an executor
        on the new worker again, so whatever runs next on it has both.
        """
        self.workers[index] = self._start_worker(index)
        self.wait_for_workers(len(self.workers))
        if self.state().get("activeapps"):
            self.wait_for_busy_workers()
            self.wait_for_registered_executors()

    def wait_for_busy_workers(self, timeout: float = 120) -> None:
        """Wait until every live worker's cores are in use (the master placed executors)."""

        def busy(state: dict[str, Any]) -> bool:
            alive = [w for w in state["workers"] if w.get("state") == "ALIVE"]
            return bool(alive) and all(w["coresused"] >= w["cores"] for w in alive)

        failure = f"the running application got no executor on every worker in {timeout}s"
        self._wait_for_state(busy, timeout, failure)

    def wait_for_registered_executors(self, timeout: float = 120) -> None:
        """Wait until an application runs and its executor on every live worker has registered
        with its driver.

        The master counts a worker's cores as used as soon as it asks for an executor; the
        executor's JVM registers seconds later (5 s on an idle machine). A query started in
        between runs all its tasks on the other executors. Registration shows in the executor's
        own log (Spark's default log profile writes it at INFO to the executor's stderr). Only
        executors launched since their worker started count: a restarted worker's folder still
        holds the killed executor's log, which says it registered.
        """

        def registered(state: dict[str, Any]) -> bool:
            apps = [app["id"] for app in state.get("activeapps", [])]
            return bool(apps) and all(
                _has_registered(self.workdir / f"worker-{i}" / app, self._started_at[i])
                for i, worker in enumerate(self.workers)
                if worker.poll() is None
                for app in apps
            )

        failure = (
            f"an executor did not register with its driver in {timeout}s (logs: {self.workdir})"
        )
        self._wait_for_state(registered, timeout, failure)

    def stop(self) -> None:
        for proc in [*self.workers, self.master]:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        for proc in [*self.workers, self.master]:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)


_REGISTERED = "Successfully registered with driver"


def _has_registered(app_dir: Path, since: float) -> bool:
    """Whether the newest executor of one application on one worker, launched after ``since``
    (seconds since the epoch), has registered."""
    executors = [d for d in app_dir.glob("*") if d.name.isdigit()] if app_dir.is_dir() else []
    executors = [d for d in executors if d.stat().st_mtime >= since]
    if not executors:
        return False
    newest = max(executors, key=lambda d: int(d.name))
    try:
        return _REGISTERED in (newest / "stderr").read_text(errors="replace")
    except FileNotFoundError:
        return False
