"""docs/pyeventhub-sink.md documents every input column the sink takes (its option table is
checked with every other page's, tests/core/test_docs.py)."""

from __future__ import annotations

from pysparksources.eventhubs.options import SINK_COLUMNS
from support.paths import DOCS

PAGE = (DOCS / "pyeventhub-sink.md").read_text()


def test_every_input_column_has_a_row() -> None:
    section = PAGE.split("\n## Input columns\n", 1)[1].split("\n## ", 1)[0]
    for name, meaning in SINK_COLUMNS.items():
        assert f"| `{name}` | {meaning} |" in section, f"the input columns table lacks {name}"
