"""Render the option tables of the documentation from the sources' declarations, the pages
that are copies of a file outside docs/, and the API page (``render_api.py``).

Run by ``./dev docs`` (rewrites every page whose marked tables are stale) and by the tests (which
fail when a committed page differs from its rendering). The tables come from each format's one
declaration, ``pysparksources/<source>/_option_table.py``; never edit them by hand.

A copied page (``COPIES``) is its file whole, under a comment naming it: the repository's web
view shows the page itself, where an include line (``--8<--``) would show only that line.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from pysparksources._core.option_docs import render_markers
from pysparksources._core.option_table import OptionTable
from pysparksources.eventhubs._option_table import TABLE as EVENTHUBS
from pysparksources.files._option_table import TABLE as FILES
from pysparksources.rate._option_table import TABLE as RATE

__all__ = [
    "COPIES",
    "PAGES",
    "TABLES",
    "api_page",
    "copied_text",
    "main",
    "stale_copies",
    "stale_pages",
]

TABLES: dict[str, OptionTable] = {table.source: table for table in (RATE, FILES, EVENTHUBS)}
DOCS = Path(__file__).resolve().parent
PAGES = sorted(DOCS.rglob("*.md"))
# page -> the file it copies, from the repository root
COPIES = {DOCS / "emulator-reference.md": "packages/pysparksources-emulator/README.md"}


def copied_text(page: Path) -> str:
    """What a copied page must hold: a comment naming its source, then the source whole."""
    source = COPIES[page]
    note = f"<!-- A copy of {source}, made by ./dev docs: edit that file, not this one. -->\n\n"
    return note + (DOCS.parent / source).read_text()


def stale_copies() -> list[Path]:
    """The copied pages that differ from their file."""
    return [page for page in COPIES if not page.exists() or page.read_text() != copied_text(page)]


def stale_pages() -> list[Path]:
    """The pages whose marked option tables differ from their rendering."""
    return [page for page in PAGES if render_markers(page.read_text(), TABLES) != page.read_text()]


def api_page() -> ModuleType:
    """docs/render_api.py, loaded by its path (docs/ is no package)."""
    spec = importlib.util.spec_from_file_location("render_api", DOCS / "render_api.py")
    if spec is None or spec.loader is None:
        raise ImportError("docs/render_api.py cannot be loaded")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    for page in stale_pages():
        page.write_text(render_markers(page.read_text(), TABLES))
        print(f"rendered the option tables of {page.relative_to(DOCS.parent)}")
    for page in stale_copies():
        page.write_text(copied_text(page))
        print(f"copied {COPIES[page]} to {page.relative_to(DOCS.parent)}")
    api = api_page()
    if not api.PAGE.exists() or api.PAGE.read_text() != api.render():
        api.PAGE.write_text(api.render())
        print(f"rendered {api.PAGE.relative_to(DOCS.parent)} from the docstrings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
