"""The command loads only what the chosen subcommand runs: no emulator, no benchmarks; the
emulator is its own distribution, with its own command, and the demo loads it lazily."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from pysparksources import cli

PROBE = """
import json, sys
from pysparksources import cli
cli.build_parser().parse_args({argv!r})
print(json.dumps(sorted(m for m in sys.modules if m.startswith(("pysparksources", "pyspark")))))
"""


def loaded_after_parsing(*argv: str) -> list[str]:
    code = PROBE.format(argv=list(argv))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    loaded: list[str] = json.loads(result.stdout)
    return loaded


def test_parsing_any_subcommand_imports_neither_the_emulator_nor_the_benchmarks() -> None:
    for argv in (["demo"], ["doctor"], ["eventhubs", "migrate-checkpoint", "/tmp/x"]):
        loaded = loaded_after_parsing(*argv)
        assert not [m for m in loaded if m.startswith("pysparksources_emulator")], argv
        assert not [m for m in loaded if m.startswith("benchmarks")], argv
        assert not [m for m in loaded if m.split(".")[0] == "pyspark"], argv


@pytest.mark.parametrize("command", ["bench", "eventhubs-emulator"])
def test_the_emulator_and_the_benchmarks_are_no_subcommand(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """They have their own commands: ``pysparksources-emulator`` and ``./dev bench``."""
    with pytest.raises(SystemExit) as exit_:
        cli.main([command, "--help"])
    assert exit_.value.code == 2
    assert f"invalid choice: '{command}'" in capsys.readouterr().err


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
        'pip install "./packages/pysparksources-emulator" in a clone of the repository, or '
        "its wheel (README: Install)"
    ]
    assert time.monotonic() - started < 60
