"""Shared fixtures: one classic local[2] session per pytest process, one Spark Connect server per
run (the Event Hubs emulator's fixtures come from its own pytest plugin). Helpers shared by the
folders live in ``tests/support``; test modules never import each other (checked at start).
"""

from __future__ import annotations

import ast
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).parent))  # for the support package

# The emulator's fixtures load through its entry point; the storage servers' (Azurite, moto's
# S3, fake-gcs-server) and the object_store fixture over them from support.object_stores; the
# local Entra ID stand-in (set up before any Spark process starts) from support.entra.
pytest_plugins = ["support.cpu_report", "support.object_stores", "support.entra"]

os.environ["PYSPARK_PYTHON"] = sys.executable

# Property-based fuzzing (test_fuzz_*.py): "ci" keeps it under a minute on 2 cores;
# --hypothesis-profile=long runs deep (pytest -k fuzz --hypothesis-profile=long).
settings.register_profile("ci", max_examples=150, deadline=None, print_blob=True)
settings.register_profile("long", max_examples=20_000, deadline=None, print_blob=True)
settings.load_profile("ci")
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
# gcsfs 2026's default filesystem asks a gRPC storage-layout API for every bucket's type, which
# no GCS emulator serves (60 s of retries per request against fake-gcs-server); its classic
# filesystem sends the same JSON API requests for a standard bucket. Set before any Spark
# process starts, so that their Python workers inherit it (support/fake_gcs.py).
os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")

from support import shared_connect  # noqa: E402  (needs the path above)


def _test_spark_layout() -> None:
    """Spark processes of this run import the installed PySpark and start lean JVMs that share
    one class archive (see support/spark_home.py); a SPARK_CONF_DIR you set yourself wins."""
    if "SPARK_CONF_DIR" in os.environ:
        return
    from benchmarks.cluster import spark_home
    from support.spark_home import run_layout

    user_options = os.environ.get("SPARK_SUBMIT_OPTS", "")
    os.environ.update(run_layout(spark_home()))
    if user_options:
        os.environ["SPARK_SUBMIT_OPTS"] += " " + user_options


_test_spark_layout()
# The run's shared folder (the Connect server's state) is made in its first process, before
# pytest-xdist starts the workers, which inherit it.
shared_connect.run_folder()


CONNECT_FIXTURES = {"connect_spark", "cluster_connect", "bare_connect"}


def _uses_connect_in_process(item: pytest.Item) -> bool:
    names = set(getattr(item, "fixturenames", ()))
    callspec = getattr(item, "callspec", None)
    param = callspec.params.get("session") if callspec is not None else None
    return bool(names & CONNECT_FIXTURES) or param == "connect"


# Fixture (anywhere in a test's fixture closure) -> the marker the test gets from it.
MARKER_OF_FIXTURE = {
    "spark": "spark",
    "connect_server": "connect",
    "connect_spark": "connect",
    "bare_connect": "connect",
    "cluster": "cluster",
    "classic_driver": "cluster",
    "cluster_connect": "cluster",
    "eventhubs_emulator_factory": "emulator",
    "azurite": "azurite",
    "moto_s3": "moto",
    "fake_gcs": "fake_gcs",
    "fresh": "wheel",
}


def _markers_from_fixtures(item: pytest.Item) -> set[str]:
    names = set(getattr(item, "fixturenames", ()))
    markers = {MARKER_OF_FIXTURE[name] for name in names & set(MARKER_OF_FIXTURE)}
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "session" in callspec.params:
        markers.add("spark" if callspec.params["session"] == "classic" else "connect")
    return markers


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test by the servers its fixtures start, before ``-m`` selects on markers.

    Markers come from the fixture closure, so a test that gains a Spark or emulator fixture
    cannot miss its marker (``-m "not spark"`` stays honest); tests that start Spark in a
    child process carry their marker in the module (checked by ``pytest_runtest_call``).
    """
    for item in items:
        for marker in sorted(_markers_from_fixtures(item) - {m.name for m in item.iter_markers()}):
            item.add_marker(marker)
        if _uses_cluster(item):
            connect = "-connect" if _uses_connect_in_process(item) else ""
            item.add_marker(pytest.mark.xdist_group(f"cluster{connect}"))
        elif item.get_closest_marker("wheel") is not None:  # one build of the source tree
            item.add_marker(pytest.mark.xdist_group("wheel"))
        elif item.get_closest_marker("connect_default_port") is not None:  # port 15002
            # The wheel group's pipelines example starts Connect on it too (spark-pipelines).
            item.add_marker(pytest.mark.xdist_group("wheel"))
    items.sort(key=_run_order)


CLUSTER_FIXTURES = {"cluster", "classic_driver", "cluster_connect"}


def _uses_cluster(item: pytest.Item) -> bool:
    return bool(set(getattr(item, "fixturenames", ())) & CLUSTER_FIXTURES)


def _run_order(item: pytest.Item) -> tuple[int, int]:
    """Where a test runs in the ordered collection (the sort is stable: file order otherwise).

    Creating a remote session marks the whole process as Connect mode (an environment
    variable PySpark reads everywhere): afterwards a classic session can no longer be created
    and child processes inherit the mark. So every test that needs no in-process Connect
    session runs before every test that does, in each pytest process (`./dev test` runs
    pytest-xdist's loadgroup scheduler without reordering, which hands each worker tests in
    this order). Cluster tests run serially on one worker per group (an application holds
    the cluster's cores) and are the longest chain, so each group starts its block. Within
    it, the users of each shared application (tests/cluster/conftest.py) are consecutive:
    the classic driver's first, then tests with applications of their own, then the Connect
    server's.
    """
    connect, cluster = _uses_connect_in_process(item), _uses_cluster(item)
    names = set(getattr(item, "fixturenames", ()))
    shared = 0 if "classic_driver" in names else 2 if "cluster_connect" in names else 1
    return 2 * connect + (0 if cluster else 1), shared if cluster else 0


SERVER_MARKERS = {"spark", "connect", "cluster", "wheel", "emulator"}


def pytest_collection_finish(session: pytest.Session) -> None:
    """A run that will start Spark starts building the JVMs' class archive, if it is missing."""
    starts_spark = ("spark", "connect", "cluster")
    if any(item.get_closest_marker(m) for item in session.items for m in starts_spark):
        from support.spark_home import start_archive_build

        start_archive_build()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Fail a test without a server marker that starts Spark or the emulator itself."""
    if {m.name for m in item.iter_markers()} & SERVER_MARKERS:
        yield
        return
    from support.processes import java_descendants

    java_before, threads_before = java_descendants(), set(threading.enumerate())
    yield
    emulators = [
        t for t in set(threading.enumerate()) - threads_before if t.name == "eventhubs-emulator"
    ]
    started_java = java_descendants() - java_before
    if emulators or started_java:
        what = "the Event Hubs emulator" if emulators else "a Spark JVM"
        pytest.fail(f"{item.nodeid} starts {what} but carries no server marker: add one")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    """Close the producers ``support.eventhubs.send`` kept, while their emulator still runs."""
    helpers = sys.modules.get("support.eventhubs")
    if helpers is not None:
        helpers.close_producers()
    yield


# Conformance cells travel in the reports' user properties, so the summary table is complete
# when pytest-xdist runs the comparisons in several worker processes.
CONFORMANCE_PROPERTY = "conformance-cell"
_conformance_cells: list[dict[str, str]] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "teardown":
        _conformance_cells.extend(v for k, v in report.user_properties if k == CONFORMANCE_PROPERTY)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the conformance table (type x format x direction) of the cells this run compared."""
    if not _conformance_cells:
        return
    sys.path.insert(0, str(Path(__file__).parent / "conformance"))
    from harness import Cell, save
    from report import counts, summary

    cells = [Cell(**cell) for cell in _conformance_cells]
    terminalreporter.section("pyfile vs Spark: conformance summary")
    terminalreporter.write_line(summary(cells))
    terminalreporter.write_line(f"Totals: {counts(cells)}.")
    target = os.environ.get("CONFORMANCE_RESULTS")
    if target:
        save(cells, Path(target))


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The classic session. No register() call here: sources must auto-register."""
    from pyspark.sql import SparkSession

    from support.spark_processes import LONG_LIVED_DRIVER_CONF

    session = (
        SparkSession.builder.master("local[2]")
        .config(map=LONG_LIVED_DRIVER_CONF)
        .appName("pysparksources-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def connect_server() -> Iterator[Any]:
    """The run's Spark Connect server, shared by its pytest-xdist processes (see
    support/shared_connect.py)."""
    user = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with shared_connect.shared_connect_server(user) as server:
        yield server


@pytest.fixture(scope="session")
def connect_spark(connect_server: Any) -> Iterator[Any]:
    from pyspark.sql import SparkSession

    session = SparkSession.builder.remote(connect_server.url).create()
    yield session
    session.stop()


@pytest.fixture(scope="session")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Both distributions built and installed into a fresh, never activated virtual environment
    (support/fresh_install.py); its tests are marked ``wheel`` and share one build."""
    from support.fresh_install import fresh_install

    yield from fresh_install(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="session", params=["classic", "connect"])
def session(request: pytest.FixtureRequest) -> Any:
    """Runs a test once on the classic session and once over Spark Connect."""
    name = "spark" if request.param == "classic" else "connect_spark"
    return request.getfixturevalue(name)


def _imported_test_modules(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return [n for n in names if n.split(".")[-1].startswith("test_")]


def pytest_sessionstart(session: pytest.Session) -> None:
    """Fail fast on two test files with one basename (rootdir-relative imports collide on
    them) and on a test module importing another (shared helpers belong in tests/support)."""
    root = Path(str(session.config.rootpath)) / "tests"
    seen: dict[str, Path] = {}
    for path in sorted(root.rglob("test_*.py")):
        if path.name in seen:
            raise pytest.UsageError(f"test files share a basename: {seen[path.name]} and {path}")
        seen[path.name] = path
        imported = _imported_test_modules(path)
        if imported:
            raise pytest.UsageError(
                f"{path} imports test module(s) {', '.join(imported)}: move what they share "
                "into tests/support"
            )
