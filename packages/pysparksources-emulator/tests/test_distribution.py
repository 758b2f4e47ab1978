"""What the distribution promises: a standard-library core, its own command, and a pytest plugin
that pytest loads by itself."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import pysparksources_emulator
from pysparksources_emulator import pytest_plugin

COMMAND = str(Path(sysconfig.get_path("scripts")) / "pysparksources-emulator")

# Import the core and its command line in a fresh interpreter; list what they loaded that is
# neither the standard library nor this package.
PROBE = """
import json, sys
before = set(sys.modules)
import pysparksources_emulator, pysparksources_emulator._serve
roots = {name.split(".")[0] for name in set(sys.modules) - before}
print(json.dumps(sorted(roots - set(sys.stdlib_module_names) - {"pysparksources_emulator"})))
"""


def test_the_core_loads_only_the_standard_library() -> None:
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


@pytest.mark.parametrize(
    "command",
    [[COMMAND], [sys.executable, "-m", "pysparksources_emulator"]],
    ids=["console-script", "python-m"],
)
def test_help_names_the_command(command: list[str]) -> None:
    result = subprocess.run([*command, "--help"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: pysparksources-emulator ")
    assert "eventhubs-emulator" not in result.stdout
    for option in ("--host", "--port", "--config", "--data-dir", "--hub", "--key"):
        assert option in result.stdout


def test_the_fixtures_come_from_the_entry_point(pytestconfig: pytest.Config) -> None:
    """No conftest.py names the plugin: pytest found it through the ``pytest11`` entry point."""
    assert pytestconfig.pluginmanager.get_plugin("pysparksources_emulator") is pytest_plugin
    assert pytestconfig.pluginmanager.get_plugin("pysparksources_emulator.pytest_plugin") is None


def test_the_package_exports() -> None:
    assert pysparksources_emulator.serve is pysparksources_emulator._serve.main
    assert set(pysparksources_emulator.__all__) == {
        "EmulatorConfig",
        "EventHubsEmulator",
        "Fault",
        "HubConfig",
        "JwtAuthority",
        "JwtError",
        "partition_for_key",
        "serve",
    }
