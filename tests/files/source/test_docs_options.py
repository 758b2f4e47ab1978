"""The README's `pyfile` source section documents every option the source accepts."""

from __future__ import annotations

from pysparksources.files._option_tables import CSV_OPTIONS, TEXT_OPTIONS
from pysparksources.files._option_tables import SOURCE_OPTIONS as OPTIONS
from support.paths import README as README_PATH

README = README_PATH.read_text()
SECTION = README.split("## `pyfile` source", 1)[1].split("\n## ", 1)[0]


def test_every_option_has_a_row() -> None:
    for name in (*OPTIONS, *CSV_OPTIONS, *TEXT_OPTIONS):
        assert f"| `{name}` |" in SECTION, f"README's pyfile source section lacks a row for {name}"
