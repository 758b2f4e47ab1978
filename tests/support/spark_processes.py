"""Start and stop Spark processes for tests: a Spark Connect server, and (from the package,
shared with ``./dev bench --local-cluster``) a standalone cluster.

A classic session and ``SparkSession.builder.remote("local[2]")`` cannot share one Python
process (SESSION_ALREADY_EXIST), so the Connect variants talk to a server in its own process.
That server imports sources from this same Python environment.

``worker_env`` starts Spark processes on the SPARK_HOME this test process runs (the zip-free
mirror of ``support.spark_home`` when tests/conftest.py built one); ``users_worker_env`` keeps
Spark's own layout, for the cluster tests (with bytecode in its zips: support/compiled_zips.py).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from benchmarks.cluster import (
    StandaloneCluster,
    free_port,
    spark_home,
    wait_for_port,
)
from benchmarks.cluster import worker_env as package_worker_env
from support.compiled_zips import cluster_spark_home

__all__ = [
    "LONG_LIVED_DRIVER_CONF",
    "ConnectServer",
    "StandaloneCluster",
    "free_port",
    "spark_home",
    "users_worker_env",
    "wait_for_port",
    "worker_env",
]


def users_worker_env() -> dict[str, str]:
    """Environment for a Spark process on Spark's own layout (the cluster's processes)."""
    env = package_worker_env()
    home = cluster_spark_home()
    if home is not None:
        env["SPARK_HOME"] = str(home)
    return env


def worker_env() -> dict[str, str]:
    """Environment for a Spark process that runs on this test process's SPARK_HOME."""
    env = package_worker_env()
    env["SPARK_HOME"] = os.environ.get("SPARK_HOME", env["SPARK_HOME"])
    return env


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


class ConnectServer:
    """A Spark Connect server process on 127.0.0.1."""

    def __init__(
        self, workdir: Path, master: str = "local[2]", env: dict[str, str] | None = None
    ) -> None:
        if env is None:  # on a cluster, Spark's own layout (see the module's docstring)
            env = worker_env() if master.startswith("local") else users_worker_env()
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
                cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=workdir
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
