"""docs/pyfile-source.md documents every option the source accepts."""

from __future__ import annotations

from pathlib import Path

from pysparksources.files.source_options import CSV_OPTIONS, OPTIONS, TEXT_OPTIONS

DOC = (Path(__file__).resolve().parents[2] / "docs" / "pyfile-source.md").read_text()


def test_every_option_has_a_row() -> None:
    for name in (*OPTIONS, *CSV_OPTIONS, *TEXT_OPTIONS):
        assert f"| `{name}` |" in DOC, f"docs/pyfile-source.md lacks a row for {name}"
