"""The README's pyeventhub source section documents every option and every Scala alias."""

from __future__ import annotations

from pathlib import Path

from pysparksources.eventhubs.options import SOURCE_ALIASES as ALIASES
from pysparksources.eventhubs.options import SOURCE_OPTIONS as OPTIONS

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()
SECTION = README.split("## `pyeventhub` source", 1)[1].split("\n## ", 1)[0]


def test_every_option_has_a_row_with_its_default_and_meaning() -> None:
    for name, (default, meaning) in OPTIONS.items():
        assert f"| `{name}` | {default} | {meaning} |" in SECTION, f"README lacks a row for {name}"


def test_every_alias_is_in_the_migration_table() -> None:
    table = SECTION.split("### Migrating from the Scala connector", 1)[1].lower()
    for alias in map(str.lower, ALIASES):
        grouped = alias + "(s)" in table or (alias[-1] == "s" and alias[:-1] + "(s)" in table)
        assert alias in table or grouped, f"the migration table lacks {alias}"


def test_checkpoint_precedence_is_said_plainly() -> None:
    assert "**Starting positions are ignored once the checkpoint exists.**" in SECTION
