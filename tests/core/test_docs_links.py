"""The docs read where users read them: every relative link of the README and of docs/ leads to a
file, and to a heading of it, on the repository's web view; every how-to guide fits one sitting;
the nav and the home page show the four kinds of page (tutorial, how-to, reference, design notes).

The site's strict build (tests/core/test_docs_site.py) checks the links between pages of the
site with its own heading ids; GitHub makes heading ids by other rules, and the README is no
page of the site, so this checks both kinds of id. Pure Python: no Spark, no mkdocs.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from support.paths import DOCS, README, ROOT

GUIDES = DOCS / "how-to"
MAX_GUIDE_LINES = 220  # "short enough to follow in one sitting": about 200 lines
# The README and the other pages a visitor of the repository opens from it, and every page of the
# site (docs/changelog.md shows CHANGELOG.md; the package READMEs are what the index shows).
PAGES = [
    README,
    ROOT / "CHANGELOG.md",
    ROOT / "CONTRIBUTING.md",
    *sorted(ROOT.glob("packages/*/README.md")),
    *sorted(ROOT.glob("examples/**/README.md")),
    *sorted(DOCS.rglob("*.md")),
]
# Pages whose headings only the site's build makes (none now: docs/api.md is rendered Markdown).
GENERATED: set[Path] = set()

_FENCE = re.compile(r"^ *(```|~~~).*?^ *\1[ \t]*$", re.DOTALL | re.MULTILINE)
_CODE_SPAN = re.compile(r"(`+)(?:(?!\n[ \t]*\n).)+?(?<!`)\1(?!`)", re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)


def _prose(markdown: str) -> str:
    """``markdown`` without code blocks, code spans and comments, where links are no links."""
    for pattern in (_FENCE, _COMMENT, _CODE_SPAN):
        markdown = pattern.sub("", markdown)
    return markdown


def _heading_text(raw: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", raw)  # a link shows its text
    return re.sub(r"[`*]", "", text)


def github_ids(markdown: str) -> set[str]:
    """The ids GitHub's web view gives the headings (github-slugger: lower case, punctuation
    dropped, each space a hyphen, repeats numbered)."""
    ids: set[str] = set()
    seen: dict[str, int] = {}
    for match in _HEADING.finditer(_FENCE.sub("", markdown)):
        text = _heading_text(match.group(2)).strip().lower()
        slug = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        ids.add(slug if count == 0 else f"{slug}-{count}")
    return ids


def site_ids(markdown: str) -> set[str]:
    """The ids the site gives them (Python-Markdown's toc: ASCII, runs of spaces and hyphens one
    hyphen, repeats numbered with an underscore)."""
    ids: set[str] = set()
    for match in _HEADING.finditer(_FENCE.sub("", markdown)):
        text = unicodedata.normalize("NFKD", _heading_text(match.group(2)))
        text = re.sub(r"[^\w\s-]", "", text.encode("ascii", "ignore").decode()).strip().lower()
        slug = re.sub(r"[-\s]+", "-", text)
        unique, n = slug, 0
        while unique in ids:
            n += 1
            unique = f"{slug}_{n}"
        ids.add(unique)
    return ids


def broken_links(page: Path, root: Path = ROOT, docs: Path = DOCS) -> list[str]:
    """The relative links of ``page`` that lead nowhere on the web view of ``root`` (or, for a
    page of the site in ``docs``, to a heading the site does not have)."""
    broken = []
    for target in _LINK.findall(_prose(page.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
            continue  # https:, mailto:: not the repository's
        path_part, _, anchor = target.partition("#")
        linked = (page.parent / path_part).resolve() if path_part else page
        if not linked.exists() or root not in (linked, *linked.parents):
            broken.append(f"{target}: no such file in the repository")
            continue
        if not anchor or linked.suffix != ".md" or linked in GENERATED:
            continue
        text = linked.read_text()
        if anchor not in github_ids(text):
            broken.append(f"{target}: no heading with that id on the web view")
        elif docs in linked.parents and docs in page.parents and anchor not in site_ids(text):
            broken.append(f"{target}: no heading with that id on the site")
    return broken


def test_every_relative_link_leads_to_a_file_and_a_heading() -> None:
    broken = {str(page.relative_to(ROOT)): links for page in PAGES if (links := broken_links(page))}
    assert not broken, broken


def test_the_check_finds_a_missing_file_or_heading_and_skips_code(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "how-to").mkdir(parents=True)
    (docs / "index.md").write_text("# Home\n## A - b\n")
    (tmp_path / "outside.md").write_text("# Outside\n")
    page = docs / "how-to" / "guide.md"
    page.write_text(
        "# Guide\n[ok](../index.md#home) [self](#guide) [web](https://example.test/x.md#y)\n"
        "[a](missing.md) [b](../index.md#no-such-heading) `[c](missing-too.md)`\n"
        "[site](../index.md#a-b) [up](../../outside.md) [dir](../how-to/)\n"
        "```\n[d](missing-three.md)\n```\n<!-- [e](missing-four.md) -->\n"
    )
    assert broken_links(page, root=tmp_path, docs=docs) == [
        "missing.md: no such file in the repository",
        "../index.md#no-such-heading: no heading with that id on the web view",
        "../index.md#a-b: no heading with that id on the web view",
    ]
    # Headings whose ids agree on both: the link to a-b now resolves.
    (docs / "index.md").write_text("# Home\n## A b\n")
    missing = ["missing.md: no such file in the repository"]
    no_heading = ["../index.md#no-such-heading: no heading with that id on the web view"]
    assert broken_links(page, root=tmp_path, docs=docs) == missing + no_heading
    outside = ["../../outside.md: no such file in the repository"]
    assert broken_links(page, root=docs, docs=docs) == missing + no_heading + outside


def test_github_and_the_site_make_heading_ids_by_their_own_rules() -> None:
    text = "# `pyfile`: a - b\n## Where pyfile differs from Spark's file source\n# Twice\n# Twice\n"
    assert github_ids(text) == {
        "pyfile-a---b",
        "where-pyfile-differs-from-sparks-file-source",
        "twice",
        "twice-1",
    }
    assert site_ids(text) == {
        "pyfile-a-b",
        "where-pyfile-differs-from-sparks-file-source",
        "twice",
        "twice_1",
    }


def test_every_guide_fits_one_sitting() -> None:
    guides = sorted(GUIDES.glob("*.md"))
    assert len(guides) >= 6, guides
    long = {g.name: n for g in guides if (n := len(g.read_text().splitlines())) > MAX_GUIDE_LINES}
    assert not long, f"guides over {MAX_GUIDE_LINES} lines: {long}"


KINDS = ("Tutorial", "How-to guides", "Reference", "Design notes")


def _linked_from(page: Path) -> set[Path]:
    return {(page.parent / target).resolve() for target in _LINK.findall(_prose(page.read_text()))}


def test_the_nav_and_the_home_page_show_the_four_kinds_and_every_page() -> None:
    nav = (ROOT / "mkdocs.yml").read_text().split("\nnav:\n", 1)[1]
    sections = re.findall(r"^  - ([^:\n]+):\s*$", nav, re.MULTILINE)
    assert sections == list(KINDS), sections
    home = DOCS / "index.md"
    for kind in KINDS:
        assert f"**{kind}" in home.read_text(), f"docs/index.md has no {kind} paragraph"
    in_nav = {(DOCS / page).resolve() for page in re.findall(r"([\w/.-]+\.md)\s*$", nav, re.M)}
    shown = _linked_from(home) | _linked_from(GUIDES / "index.md") | {home.resolve()}
    missing = sorted(str(page.relative_to(DOCS)) for page in in_nav - shown)
    assert not missing, f"in the nav but not linked from docs/index.md: {missing}"
