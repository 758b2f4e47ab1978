"""pyrate on a real two-executor standalone cluster, from a classic driver and over Connect."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from support.cluster_drivers import ClassicDriver, pyrate_on_cluster
from support.compiled_zips import cluster_spark_home
from support.processes import command_line
from support.spark_home import LEAN_CONF_VARIABLE, runs_lean
from support.spark_processes import StandaloneCluster

pytestmark = pytest.mark.cluster


def test_both_workers_registered(cluster: StandaloneCluster) -> None:
    state = cluster.state()
    assert state["aliveworkers"] == 2
    assert all(w["cores"] == 1 for w in state["workers"])


@pytest.mark.skipif(
    LEAN_CONF_VARIABLE not in os.environ, reason="your own SPARK_CONF_DIR is used as it is"
)
def test_the_daemons_and_a_restarted_worker_run_the_lean_jvm_options(
    cluster: StandaloneCluster,
) -> None:
    """The executors get their JVM options from their worker's SPARK_CONF_DIR; a worker
    restarted without it makes every later executor run the default JIT and collector (a run
    lost about 150 CPU-seconds that way before the cluster kept its daemon_env)."""
    home = cluster_spark_home()  # Spark's layout with compiled zips (support/compiled_zips.py)
    for daemon in [cluster.master, *cluster.workers]:
        args = command_line(daemon.pid)
        assert runs_lean(args), args
        assert f"{os.environ[LEAN_CONF_VARIABLE]}/" in args[args.index("-cp") + 1], args
        environment = Path(f"/proc/{daemon.pid}/environ").read_bytes().split(b"\0")
        assert home is None or f"SPARK_HOME={home}".encode() in environment
    expected = {"SPARK_CONF_DIR": os.environ[LEAN_CONF_VARIABLE]}
    assert cluster.daemon_env == expected | ({"SPARK_HOME": str(home)} if home else {})


def test_pyrate_classic_driver_uses_both_executors(
    classic_driver: ClassicDriver, tmp_path: Path
) -> None:
    result = classic_driver.run("pyrate", tmp_path / "out")
    assert result["values"] == list(range(4000))
    assert len(result["executors"]) == 2, result["executors"]


def test_pyrate_over_connect_on_the_cluster(cluster_connect: Any, tmp_path: Path) -> None:
    result = pyrate_on_cluster(cluster_connect, str(tmp_path / "out"))
    assert result["values"] == list(range(4000))
    assert len(result["executors"]) == 2, result["executors"]


def test_executors_import_pyspark_bytecode_from_sparks_zip(cluster_connect: Any) -> None:
    """Spark's layout stays (PySpark from pyspark.zip) and the zip's bytecode is used."""
    from pyspark.sql.functions import udf

    def pyspark_file() -> str:
        import pyspark

        return str(pyspark.__file__)

    rows = cluster_connect.range(4).repartition(2).select(udf(pyspark_file)().alias("f")).collect()
    files = {row.f for row in rows}
    home = cluster_spark_home()
    expected = f"{home}/python/lib/pyspark.zip/pyspark/__init__.pyc" if home else None
    assert all("/python/lib/pyspark.zip/pyspark/__init__.py" in f for f in files), files
    assert expected is None or files == {expected}, files
