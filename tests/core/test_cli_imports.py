"""The command loads only what the chosen subcommand runs: no emulator, no benchmarks."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
from pysparksources import cli
cli.build_parser().parse_known_args({argv!r})
print(json.dumps(sorted(m for m in sys.modules if m.startswith(("pysparksources", "pyspark")))))
"""


def loaded_after_parsing(*argv: str) -> list[str]:
    code = PROBE.format(argv=list(argv))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    loaded: list[str] = json.loads(result.stdout)
    return loaded


def test_parsing_any_subcommand_imports_neither_the_emulator_nor_the_benchmarks() -> None:
    for argv in (["demo"], ["doctor"], ["bench", "rate"], ["eventhubs-emulator", "--port", "0"]):
        loaded = loaded_after_parsing(*argv)
        assert not [m for m in loaded if m.startswith("pysparksources_emulator")], argv
        assert not [m for m in loaded if m.startswith("benchmarks")], argv
        assert not [m for m in loaded if m.split(".")[0] == "pyspark"], argv


def test_the_emulator_command_parses_its_own_options() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pysparksources.cli", "eventhubs-emulator", "--help"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    for option in ("--port", "--config", "--data-dir", "--hub", "--key"):
        assert option in result.stdout
