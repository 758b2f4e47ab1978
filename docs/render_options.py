"""Render the option tables of the documentation from the sources' declarations.

Run by ``./dev docs`` (rewrites every page whose marked tables are stale) and by the tests (which
fail when a committed page differs from its rendering). The tables come from each format's one
declaration, ``pysparksources/<source>/_option_table.py``; never edit them by hand.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pysparksources._core.option_docs import render_markers
from pysparksources._core.option_table import OptionTable
from pysparksources.eventhubs._option_table import TABLE as EVENTHUBS
from pysparksources.files._option_table import TABLE as FILES
from pysparksources.rate._option_table import TABLE as RATE

__all__ = ["PAGES", "TABLES", "main", "stale_pages"]

TABLES: dict[str, OptionTable] = {table.source: table for table in (RATE, FILES, EVENTHUBS)}
DOCS = Path(__file__).resolve().parent
PAGES = sorted(DOCS.rglob("*.md"))


def stale_pages() -> list[Path]:
    """The pages whose marked option tables differ from their rendering."""
    return [page for page in PAGES if render_markers(page.read_text(), TABLES) != page.read_text()]


def main() -> int:
    for page in stale_pages():
        page.write_text(render_markers(page.read_text(), TABLES))
        print(f"rendered the option tables of {page.relative_to(DOCS.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
