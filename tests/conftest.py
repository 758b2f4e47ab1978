"""Shared fixtures: one classic local[2] session and one Spark Connect server per test run,
and the package's Event Hubs emulator fixtures. Helpers shared by the folders live in
``tests/support``; test modules never import each other (checked at session start).
"""

from __future__ import annotations

import ast
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).parent))  # for the support package

pytest_plugins = ["pysparksources.emulator.pytest_plugin"]

os.environ["PYSPARK_PYTHON"] = sys.executable

# Property-based fuzzing (tests/fuzz): "ci" keeps the fuzz folder under a minute on 2 cores;
# --hypothesis-profile=long runs deep (pytest tests/fuzz --hypothesis-profile=long).
settings.register_profile("ci", max_examples=150, deadline=None, print_blob=True)
settings.register_profile("long", max_examples=20_000, deadline=None, print_blob=True)
settings.load_profile("ci")
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


CONNECT_FIXTURES = {"connect_spark", "cluster_connect", "bare_connect"}


def _uses_connect_in_process(item: pytest.Item) -> bool:
    names = set(getattr(item, "fixturenames", ()))
    callspec = getattr(item, "callspec", None)
    param = callspec.params.get("session") if callspec is not None else None
    return bool(names & CONNECT_FIXTURES) or param == "connect"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run every test that needs no in-process Spark Connect session first.

    Creating a remote session marks the whole process as Connect mode (an environment
    variable PySpark reads everywhere): afterwards a classic session can no longer be created
    and child processes inherit the mark. The sort is stable, so file order is kept otherwise.
    """
    items.sort(key=_uses_connect_in_process)


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
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from support.spark_processes import ConnectServer

    server = ConnectServer(tmp_path_factory.mktemp("connect"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def connect_spark(connect_server: Any) -> Iterator[Any]:
    from pyspark.sql import SparkSession

    session = SparkSession.builder.remote(connect_server.url).create()
    session.conf.set("spark.sql.session.timeZone", "UTC")
    yield session
    session.stop()


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
