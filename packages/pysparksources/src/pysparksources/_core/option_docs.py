"""The documentation's option tables, rendered from the sources' declarations.

Markdown files hold a marker pair per table, ``<!-- options:pyfile:READ -->`` and
``<!-- /options -->`` (the format's name and a :class:`~pysparksources._core.option_table.Use`
member); :func:`render_markers` replaces what is between them. The documentation site renders
the same tables when it builds, and a test checks that the committed pages match, so no table is
ever copied by hand.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from pysparksources._core.option_table import Option, OptionTable, Use

__all__ = ["markdown_table", "render_markers"]

_MARKER = re.compile(
    r"(<!-- options:(?P<source>[a-z]+):(?P<use>[A-Z_]+) -->\n)(?P<body>.*?)(<!-- /options -->)",
    re.DOTALL,
)


def _cell(text: str) -> str:
    """``text`` as one table cell: no line break, escaped pipes, and ``<`` outside code spans
    as ``&lt;`` (``<namespace>`` would otherwise be an HTML tag that renderers hide)."""
    parts = text.replace("|", "\\|").replace("\n", " ").split("`")
    return "`".join(part if i % 2 else part.replace("<", "&lt;") for i, part in enumerate(parts))


def _name(option: Option[object]) -> str:
    aliases = ", ".join(f"`{alias}`" for alias in option.aliases)
    return f"`{option.name}`" + (f" (alias {aliases})" if aliases else "")


def _meaning(option: Option[object], use: Use) -> str:
    text = option.doc
    if option.uses & use != use:
        text += f" Only for {option.uses.describe()}."
    if option.secret:
        text += " Secret: never shown in messages or logs."
    return text


def markdown_table(table: OptionTable, use: Use) -> str:
    """One Markdown table of the options of ``table`` that apply to ``use``."""
    rows = ["| option | default | meaning |", "|---|---|---|"]
    for option in table.for_use(use):
        cells = (_name(option), option.documented_default(), _meaning(option, use))
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    for family in table.families:
        if family.uses & use:
            doc = family.doc + " Values are treated as secrets."
            rows.append(f"| `{family.shown_name}` | unset | {_cell(doc)} |")
    return "\n".join(rows) + "\n"


def render_markers(
    text: str,
    tables: Mapping[str, OptionTable],
    render: Callable[[OptionTable, Use], str] = markdown_table,
) -> str:
    """``text`` with every marked table rendered again from ``tables`` (by format name)."""

    def replace(match: re.Match[str]) -> str:
        table = tables[match["source"]]
        use = Use[match["use"]]
        return match.group(1) + render(table, use) + match.group(5)

    return _MARKER.sub(replace, text)
