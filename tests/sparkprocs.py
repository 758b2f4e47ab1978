"""Start and stop Spark processes for tests: a Spark Connect server (and later, clusters).

A classic session and ``SparkSession.builder.remote("local[2]")`` cannot share one Python
process (SESSION_ALREADY_EXIST), so the Connect variants talk to a server in its own process.
That server imports sources from this same Python environment.
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
from pathlib import Path
from typing import Any

import pyspark


def spark_home() -> Path:
    return Path(pyspark.__file__).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


# For the drivers that live through the whole suite (the shared session, Connect servers):
# hundreds of short queries would otherwise fill the default 1 GB heap with the status store's
# retained executions, jobs and stages (a run died of "Java heap space" after ~300 tests).
LONG_LIVED_DRIVER_CONF = {
    "spark.driver.memory": "2g",
    "spark.sql.ui.retainedExecutions": "50",
    "spark.ui.retainedJobs": "100",
    "spark.ui.retainedStages": "100",
    "spark.sql.streaming.ui.retainedQueries": "20",
}


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
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode}; log:\n{log.read_text()}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.25)
    raise TimeoutError(f"nothing listened on 127.0.0.1:{port} after {timeout}s; log: {log}")


class ConnectServer:
    """A Spark Connect server process on 127.0.0.1."""

    def __init__(
        self, workdir: Path, master: str = "local[2]", env: dict[str, str] | None = None
    ) -> None:
        self.port = free_port()
        self.log = workdir / "connect-server.log"
        cmd = [
            str(spark_home() / "bin" / "spark-submit"),
            "--class",
            "org.apache.spark.sql.connect.service.SparkConnectServer",
            "--master",
            master,
            "--conf",
            f"spark.connect.grpc.binding.port={self.port}",
            "--conf",
            "spark.connect.grpc.binding.address=127.0.0.1",
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            "spark.sql.shuffle.partitions=2",
            *(arg for k, v in LONG_LIVED_DRIVER_CONF.items() for arg in ("--conf", f"{k}={v}")),
            "--conf",
            f"spark.driver.extraJavaOptions=-Djava.io.tmpdir={workdir}",
            "spark-internal",
        ]
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, env=env or worker_env(), cwd=workdir
            )
        wait_for_port(self.port, self.proc, 120, self.log)

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


class StandaloneCluster:
    """A real Spark standalone cluster on 127.0.0.1: one master and one-core workers.

    Started from the installed pyspark wheel (SPARK_HOME = the pyspark package folder); every
    process is stopped by its id, worker process groups included, because a worker's executors
    are its children.
    """

    def __init__(self, workdir: Path, workers: int = 2, memory: str = "2g") -> None:
        self.workdir = workdir
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
        self.workers = [self._start_worker(i) for i in range(workers)]
        self.wait_for_workers(workers)

    def _start_worker(self, i: int) -> subprocess.Popen[bytes]:
        args = ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "1"]
        args += ["--memory", self.memory, "--webui-port", str(free_port())]
        args += ["--work-dir", str(self.workdir / f"worker-{i}"), self.url]
        return self._start(f"worker-{i}", args)

    def _start(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        log = self.workdir / f"{name}.log"
        with log.open("wb") as out:
            return subprocess.Popen(
                [str(spark_home() / "bin" / "spark-class"), *args],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=worker_env(),
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
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.state().get("aliveworkers", 0) >= count:
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise TimeoutError(f"{count} workers did not register with {self.url} in {timeout}s")

    def kill_worker(self, index: int) -> None:
        """SIGKILL a worker and its executors, as a machine loss would."""
        os.killpg(self.workers[index].pid, signal.SIGKILL)
        self.workers[index].wait(30)

    def restart_worker(self, index: int) -> None:
        """Bring a killed worker back so later tests see two executors again."""
        self.workers[index] = self._start_worker(index)
        self.wait_for_workers(len(self.workers))

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
