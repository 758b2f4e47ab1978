"""MkDocs hooks of the documentation site (``hooks:`` in mkdocs.yml).

- Every page's option tables (``<!-- options:<format>:<USE> -->`` ... ``<!-- /options -->``) are
  rendered again from the sources' declarations as the page is built, with the renderer
  ``./dev docs`` runs (docs/render_options.py's ``TABLES``), so the site never shows a stale
  table even when a committed page is.
- The pages hold no raw HTML besides comments, so a ``<`` outside code is text:
  ``map<string,string>``, ``<namespace>.servicebus.windows.net``, the conformance report's
  ``array<timestamp>``. Python-Markdown would pass those through as HTML tags, which the browser
  then hides; they are escaped instead.
- Each option table is wrapped in ``<div class="option-table">`` for its column widths
  (docs/assets/extra.css), and its option names may break after a dot
  (``schemaRegistry.<wbr>fullyQualifiedNamespace``).
- pymdownx.snippets reads included files (the changelog, the examples)
  from the repository root, whatever the working directory of ``mkdocs build``.
"""

from __future__ import annotations

import importlib.util
import logging
import re
from pathlib import Path
from types import ModuleType
from typing import Any

# Importing pysparksources warns when Spark would start its workers with another Python; the
# site starts no Spark, so that warning would only be noise in the build's output.
logging.getLogger("pysparksources").setLevel(logging.ERROR)

from pysparksources._core.option_docs import render_markers  # noqa: E402

HERE = Path(__file__).resolve().parent

# Left as they are: fenced code blocks, code spans (never across a blank line), HTML comments
# and snippet lines (--8<-- "file").
_FENCED = re.compile(r"^( *)(```|~~~).*?^\1\2[ \t]*$", re.DOTALL | re.MULTILINE)
_VERBATIM = re.compile(
    r"(`+)(?:(?!\n[ \t]*\n).)+?(?<!`)\1(?!`)|<!--.*?-->|^[ \t]*-+8<-+[^\n]*$",
    re.DOTALL | re.MULTILINE,
)


def _render_options() -> ModuleType:
    spec = importlib.util.spec_from_file_location("render_options", HERE / "render_options.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TABLES = _render_options().TABLES
_TABLE_START = re.compile(r"^<!-- options:[a-z]+:[A-Z_]+ -->$", re.MULTILINE)
_TABLE_END = re.compile(r"^<!-- /options -->$", re.MULTILINE)
_OPTION_TABLE_HTML = re.compile(r'<div class="option-table">.*?</table>', re.DOTALL)
_NAME = re.compile(r"<tr>\s*<td><code>[^<]*</code>")  # a row's first cell: the option's name


def _escape_text(text: str) -> str:
    out, at = [], 0
    for match in _VERBATIM.finditer(text):
        out += [text[at : match.start()].replace("<", "&lt;"), match.group(0)]
        at = match.end()
    return "".join(out) + text[at:].replace("<", "&lt;")


def escape_angle_brackets(markdown: str) -> str:
    """``markdown`` with every ``<`` outside code, comments and snippet lines as ``&lt;``."""
    out, at = [], 0
    for block in _FENCED.finditer(markdown):
        out += [_escape_text(markdown[at : block.start()]), block.group(0)]
        at = block.end()
    return "".join(out) + _escape_text(markdown[at:])


def on_config(config: Any) -> Any:
    root = Path(config.config_file_path).resolve().parent
    config.mdx_configs.setdefault("pymdownx.snippets", {})["base_path"] = [str(root)]
    return config


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    markdown = escape_angle_brackets(render_markers(markdown, TABLES))
    markdown = _TABLE_START.sub('<div class="option-table" markdown>\n', markdown)
    return _TABLE_END.sub("\n</div>", markdown)


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    def names(table: re.Match[str]) -> str:
        return _NAME.sub(lambda m: m.group(0).replace(".", ".<wbr>"), table.group(0))

    return _OPTION_TABLE_HTML.sub(names, html)
