"""docs/pyfile-sink.md documents every option the sink accepts."""

from __future__ import annotations

from pathlib import Path

from pysparksources.files.sink_options import OPTIONS

DOC = (Path(__file__).resolve().parents[2] / "docs" / "pyfile-sink.md").read_text()


def test_every_option_has_a_row() -> None:
    for name in OPTIONS:
        assert f"| `{name}` |" in DOC, f"docs/pyfile-sink.md lacks a row for {name}"
