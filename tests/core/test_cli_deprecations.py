"""The emulator's old homes in the product keep working, with a deprecation, now that it is its
own distribution (pysparksources-emulator); and the demo names that distribution at once when
it is missing."""

from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import pysparksources_emulator
from pysparksources_emulator import pytest_plugin


def test_importing_pysparksources_emulator_warns_and_gives_the_same_classes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "pysparksources.emulator", raising=False)
    with pytest.warns(DeprecationWarning, match="import pysparksources_emulator"):
        old = importlib.import_module("pysparksources.emulator")
    # The deprecated module re-exports what existed when the emulator moved, nothing newer.
    newer = {"serve", "JwtAuthority", "JwtError"}
    assert set(old.__all__) == set(pysparksources_emulator.__all__) - newer
    for name in old.__all__:
        assert getattr(old, name) is getattr(pysparksources_emulator, name), name


def test_the_old_plugin_module_warns_and_gives_the_same_fixtures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "pysparksources.emulator", raising=False)
    monkeypatch.delitem(sys.modules, "pysparksources.emulator.pytest_plugin", raising=False)
    with pytest.warns(DeprecationWarning, match=r"pysparksources-emulator\[pytest\]"):
        old = importlib.import_module("pysparksources.emulator.pytest_plugin")
    assert old.eventhubs_emulator is pytest_plugin.eventhubs_emulator
    assert old.eventhubs_emulator_factory is pytest_plugin.eventhubs_emulator_factory


OLD_STYLE_CONFTEST = 'pytest_plugins = ["pysparksources.emulator.pytest_plugin"]\n'
OLD_STYLE_TEST = """
from pysparksources_emulator import EventHubsEmulator


def test_fixtures(eventhubs_emulator, eventhubs_emulator_factory):
    assert isinstance(eventhubs_emulator, EventHubsEmulator)
    assert eventhubs_emulator.connection_string("test").startswith("Endpoint=sb://127.0.0.1:")
    assert eventhubs_emulator_factory({"other": 1}).port != eventhubs_emulator.port
"""


@pytest.mark.parametrize("autoload", [False, True], ids=["old-line-only", "with-entry-point"])
def test_an_old_style_pytest_plugins_line_still_gives_the_fixtures(
    tmp_path: Path, autoload: bool
) -> None:
    """A project's conftest.py that names the old module keeps its fixtures: alone (plugin
    autoloading off), and next to the entry point that now registers the same fixtures."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(OLD_STYLE_CONFTEST)
    (tmp_path / "test_old_style.py").write_text(OLD_STYLE_TEST)
    outer = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTEST_ADDOPTS"}  # this run's, not the project's
    env = {k: v for k, v in os.environ.items() if k not in outer}
    if not autoload:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_old_style.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
    assert "pysparksources.emulator.pytest_plugin is deprecated" in result.stdout


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "pysparksources.cli", *args]


def test_the_old_emulator_command_still_parses_its_options() -> None:
    result = subprocess.run(
        _cli("eventhubs-emulator", "--help"), capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: pysparksources-emulator ")
    for option in ("--port", "--config", "--data-dir", "--hub", "--key"):
        assert option in result.stdout
    assert (
        "`pysparksources eventhubs-emulator` is deprecated: run pysparksources-emulator"
        in result.stderr
    )


def test_the_old_emulator_command_still_serves() -> None:
    proc = subprocess.Popen(
        _cli("eventhubs-emulator", "--port", "0", "--hub", "old:1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        conn = next((x.strip() for x in proc.stdout if x.strip().startswith("Endpoint=")), "")
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=30)
    assert conn.startswith("Endpoint=sb://127.0.0.1:") and "EntityPath=old;" in conn
    assert code == 0


def test_the_demo_without_the_emulator_fails_at_once_naming_the_install() -> None:
    """Where pysparksources-emulator is not installed (here: hidden from the import system),
    ``pysparksources demo`` stops before Spark starts, with one line that says what to run."""
    code = textwrap.dedent(
        """
        import sys
        sys.modules["pysparksources_emulator"] = None  # what "not installed" looks like
        from pysparksources.cli import main
        code = main(["demo"])
        from pyspark import SparkContext
        print(code, SparkContext._active_spark_context is None)
        """
    )
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ | {"PYSPARK_PYTHON": sys.executable},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["2", "True"]  # exit status 2; no Spark started
    assert result.stderr.splitlines() == [
        "pysparksources demo: needs pysparksources-emulator, not installed here: "
        'pip install pysparksources-emulator (or pip install "pysparksources[demo]")'
    ]
    assert time.monotonic() - started < 60
