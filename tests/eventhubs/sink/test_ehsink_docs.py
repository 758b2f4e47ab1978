"""docs/pyeventhub-sink.md: its option table is rendered from the option declarations, and it
documents every input column the sink takes."""

from __future__ import annotations

from pysparksources._core.option_docs import render_markers
from pysparksources._core.option_table import Use
from pysparksources.eventhubs._option_table import TABLE
from pysparksources.eventhubs.options import SINK_COLUMNS
from support.paths import DOCS

PAGE = (DOCS / "pyeventhub-sink.md").read_text()


def test_the_option_table_is_the_rendered_declaration() -> None:
    section = PAGE.split("\n## Options\n", 1)[1].split("\n## ", 1)[0]
    assert "<!-- options:pyeventhub:WRITE -->" in section
    assert render_markers(PAGE, {"pyeventhub": TABLE}) == PAGE, "run ./dev docs"
    for option in TABLE.for_use(Use.WRITE):
        assert f"| `{option.name}`" in section, f"the rendered table lacks {option.name}"


def test_every_input_column_has_a_row() -> None:
    section = PAGE.split("\n## Input columns\n", 1)[1].split("\n## ", 1)[0]
    for name, meaning in SINK_COLUMNS.items():
        assert f"| `{name}` | {meaning} |" in section, f"the input columns table lacks {name}"
