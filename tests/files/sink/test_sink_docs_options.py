"""The README's `pyfile` sink section documents every option the sink accepts."""

from __future__ import annotations

from pysparksources.files._option_tables import SINK_OPTIONS as OPTIONS
from support.paths import README as README_PATH

README = README_PATH.read_text()
SECTION = README.split("## `pyfile` sink", 1)[1].split("\n## ", 1)[0]


def test_every_option_has_a_row() -> None:
    for name in OPTIONS:
        assert f"| `{name}` |" in SECTION, f"README's pyfile sink section lacks a row for {name}"
