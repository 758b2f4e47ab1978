"""docs/pyeventhub-source.md documents every option and every Scala alias."""

from __future__ import annotations

from pathlib import Path

from pysparksources.eventhubs.source_options import ALIASES, OPTIONS

DOC = (Path(__file__).resolve().parents[2] / "docs" / "pyeventhub-source.md").read_text()


def test_every_option_has_a_row() -> None:
    for name in OPTIONS:
        assert f"| `{name}` |" in DOC, f"docs/pyeventhub-source.md lacks a row for {name}"


def test_every_alias_is_in_the_migration_table() -> None:
    table = DOC.split("## Migrating from the Scala connector", 1)[1].lower()
    for alias in ALIASES:
        grouped = alias + "(s)" in table or (alias[-1] == "s" and alias[:-1] + "(s)" in table)
        assert alias in table or grouped, f"the migration table lacks {alias}"


def test_checkpoint_precedence_is_said_plainly() -> None:
    assert "**Starting positions are ignored once the checkpoint exists.**" in DOC
