"""docs/pyfile-source.md's option table is the one rendered from pyfile's declarations."""

from __future__ import annotations

from pysparksources._core.option_docs import markdown_table, render_markers
from pysparksources._core.option_table import Use
from pysparksources.files._option_table import FS, TABLE
from support.paths import DOCS

PAGE = DOCS / "pyfile-source.md"


def test_the_pages_table_is_current() -> None:
    text = PAGE.read_text()
    assert "<!-- options:pyfile:READ -->" in text
    assert render_markers(text, {"pyfile": TABLE}) == text, (
        "docs/pyfile-source.md's option table differs from files/_option_table.py: render it "
        "again (./dev docs)"
    )


def test_every_read_option_has_a_row_with_its_default() -> None:
    rows = markdown_table(TABLE, Use.READ).splitlines()
    options = TABLE.for_use(Use.READ)
    assert len(options) == len({o.name for o in options}) > 30
    for option in options:
        row = next((r for r in rows if r.startswith(f"| `{option.name}`")), None)
        assert row is not None, option.name
        assert f"| {option.documented_default()} |" in row, (option.name, row)
        assert all(f"`{alias}`" in row for alias in option.aliases), row
    assert any(r.startswith(f"| `{FS.shown_name}` | unset |") for r in rows)
    # The sink's own options are not in the source's table.
    assert not any(r.startswith("| `compression`") for r in rows)
