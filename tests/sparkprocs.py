"""Start and stop Spark processes for tests: a Spark Connect server (and later, clusters).

A classic session and ``SparkSession.builder.remote("local[2]")`` cannot share one Python
process (SESSION_ALREADY_EXIST), so the Connect variants talk to a server in its own process.
That server imports sources from this same Python environment.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyspark


def spark_home() -> Path:
    return Path(pyspark.__file__).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def worker_env() -> dict[str, str]:
    """Environment for Spark processes: workers run this interpreter, not PATH's python3."""
    env = dict(os.environ)
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

    def __init__(self, workdir: Path, master: str = "local[2]") -> None:
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
            "--conf",
            f"spark.driver.extraJavaOptions=-Djava.io.tmpdir={workdir}",
            "spark-internal",
        ]
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, env=worker_env(), cwd=workdir
            )
        wait_for_port(self.port, self.proc, 120, self.log)

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
