"""A standalone cluster (master + two one-core workers) per run, and the applications on it.

A running application holds one executor on each one-core worker, so any other application
waits for cores until it ends. Each new application also costs about 30 s before its first
row (session start, then the executors' cold Python workers). So the classic driver process
and the Connect server are shared: each starts when the first test that uses it runs and
stops after the last of the consecutive tests that use it (tests/conftest.py orders the
cluster tests so that each application's users are consecutive), before any test that
starts an application of its own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

import pytest

from pysparksources_emulator import EventHubsEmulator
from support.cluster_drivers import (
    ORDERS_PARTITIONS,
    ORDERS_PER_PARTITION,
    ClassicDriver,
    send_numbered,
)
from support.compiled_zips import cluster_spark_home
from support.spark_home import LEAN_CONF_VARIABLE
from support.spark_processes import ConnectServer, StandaloneCluster

App = TypeVar("App")


class SharedApplication(Generic[App]):
    """An application started on first use and stopped when its run of users ends.

    ``alive`` tells whether a started one can still serve: one an earlier test's failure
    ended is replaced for the next test.
    """

    def __init__(
        self,
        start: Callable[[], App],
        stop: Callable[[App], None],
        alive: Callable[[App], bool] = lambda app: True,
    ) -> None:
        self._start, self._stop, self._alive = start, stop, alive
        self._app: App | None = None

    def get(self) -> App:
        if self._app is not None and not self._alive(self._app):
            self.close()
        if self._app is None:
            self._app = self._start()
        return self._app

    def close(self) -> None:
        if self._app is not None:
            app, self._app = self._app, None
            self._stop(app)


# Fixture name -> its shared application, for the teardown hook below.
_SHARED: dict[str, SharedApplication[Any]] = {}


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    # The daemons, and the executors they start, read the lean JVM options from a java-opts
    # file (SPARK_SUBMIT_OPTS reaches only drivers; see support/spark_home.py), and run on
    # Spark's layout with bytecode in its zips (support/compiled_zips.py).
    lean = os.environ.get(LEAN_CONF_VARIABLE)
    daemon_env = {"SPARK_CONF_DIR": lean} if lean is not None else {}
    home = cluster_spark_home()
    if home is not None:
        daemon_env["SPARK_HOME"] = str(home)
    started = StandaloneCluster(tmp_path_factory.mktemp("cluster"), daemon_env=daemon_env)
    yield started
    for shared in _SHARED.values():
        shared.close()
    _SHARED.clear()
    started.stop()


def _shared(name: str, application: SharedApplication[App]) -> App:
    """The running application of fixture ``name`` (``application`` the first time)."""
    app: App = _SHARED.setdefault(name, application).get()
    return app


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Stop a shared application once the next test does not use it."""
    yield
    following = set(getattr(nextitem, "fixturenames", ())) if nextitem is not None else set()
    for name, shared in _SHARED.items():
        if name not in following:
            shared.close()


@pytest.fixture
def classic_driver(
    cluster: StandaloneCluster, tmp_path_factory: pytest.TempPathFactory
) -> ClassicDriver:
    """A classic driver process on the cluster (one per run of consecutive users)."""

    def start() -> ClassicDriver:
        driver = ClassicDriver(
            cluster.url, tmp_path_factory.mktemp("classic-driver") / "driver.log"
        )
        cluster.wait_for_registered_executors(timeout=240)  # or the first query may run on one
        return driver

    application = SharedApplication(start, ClassicDriver.stop, lambda driver: driver.alive)
    return _shared("classic_driver", application)


def _connect_session(cluster: StandaloneCluster, workdir: Any) -> tuple[ConnectServer, Any]:
    from pyspark.sql import SparkSession

    server = ConnectServer(workdir, master=cluster.url)
    cluster.wait_for_registered_executors()  # or the first query may run on one executor
    return server, SparkSession.builder.remote(server.url).create()


def _stop_connect(app: tuple[ConnectServer, Any]) -> None:
    server, session = app
    session.stop()
    server.stop()


@pytest.fixture
def cluster_connect(
    cluster: StandaloneCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    """A Spark Connect session whose server runs its queries on the cluster.

    Streams a test leaves running are stopped after it, so the next test has the cores.
    """

    def start() -> tuple[ConnectServer, Any]:
        return _connect_session(cluster, tmp_path_factory.mktemp("cluster-connect"))

    _, session = _shared("cluster_connect", SharedApplication(start, _stop_connect))
    yield session
    for query in session.streams.active:
        query.stop()


@pytest.fixture(scope="session")
def emulator() -> Iterator[EventHubsEmulator]:
    """Hub "orders" seeded with the numbered events of support.cluster_drivers; "lost" empty."""
    started = EventHubsEmulator.for_hubs({"orders": ORDERS_PARTITIONS, "lost": 2}).start()
    conn = started.connection_string("orders")
    for pid in range(ORDERS_PARTITIONS):
        send_numbered(conn, pid, range(ORDERS_PER_PARTITION))
    yield started
    started.stop()
