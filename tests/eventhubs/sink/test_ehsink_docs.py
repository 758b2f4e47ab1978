"""The README's pyeventhub sink section documents every option and input column."""

from __future__ import annotations

from pysparksources.eventhubs.options import SINK_COLUMNS as COLUMNS
from pysparksources.eventhubs.options import SINK_OPTIONS as OPTIONS
from support.paths import README as README_PATH

README = README_PATH.read_text()
SECTION = README.split("## `pyeventhub` sink", 1)[1].split("\n## ", 1)[0]


def test_every_option_and_column_has_a_row() -> None:
    for name in OPTIONS:
        assert f"| `{name}` |" in SECTION, f"README's pyeventhub sink section lacks {name}"
    for name in COLUMNS:
        assert f"| `{name}` |" in SECTION, f"README's pyeventhub sink section lacks {name}"
