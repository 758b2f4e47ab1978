"""A standalone cluster (master + two one-core workers) and a Connect server on it, per run."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.spark_processes import ConnectServer, StandaloneCluster


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    started = StandaloneCluster(tmp_path_factory.mktemp("cluster"))
    yield started
    started.stop()


@pytest.fixture(scope="module")
def cluster_connect(
    cluster: StandaloneCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    """A Spark Connect session whose server runs its queries on the cluster.

    Module-scoped: a running application holds one executor on each one-core worker, so any
    other application (a submitted driver, another server) would wait for cores until it ends.
    """
    from pyspark.sql import SparkSession

    server = ConnectServer(tmp_path_factory.mktemp("cluster-connect"), master=cluster.url)
    session = SparkSession.builder.remote(server.url).create()
    yield session
    session.stop()
    server.stop()
