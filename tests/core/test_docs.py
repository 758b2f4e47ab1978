"""The documentation's option tables are rendered from the one declaration of each option."""

from __future__ import annotations

import importlib.util
import re
from types import ModuleType

from pysparksources import errors
from pysparksources._core.option_docs import markdown_table
from pysparksources._core.option_table import Use
from support.paths import DOCS
from support.paths import README as README_PATH

README = README_PATH.read_text()


def _renderer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("render_options", DOCS / "render_options.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RENDER = _renderer()


def test_every_marked_table_is_current() -> None:
    stale = [str(page.relative_to(DOCS.parent)) for page in RENDER.stale_pages()]
    assert not stale, f"option tables differ from the declarations in {stale}: run ./dev docs"


def test_getting_started_installs_what_the_readme_installs() -> None:
    marker = '.venv/bin/pip install "./packages'
    installs = [line for line in README.splitlines() if marker in line]
    assert installs, "the README's install line moved"
    guide = (DOCS / "getting-started.md").read_text()
    for line in installs:
        assert line.strip() in guide, f"docs/getting-started.md lacks the README's {line.strip()}"


def test_the_emulator_reference_page_is_its_readme_not_an_include_line() -> None:
    """The repository's web view shows the committed file: it must hold the README's text."""
    page = DOCS / "emulator-reference.md"
    text = page.read_text()
    assert "--8<--" not in text
    assert not RENDER.stale_copies(), "docs/emulator-reference.md is stale: run ./dev docs"
    readme = (DOCS.parent / "packages/pysparksources-emulator/README.md").read_text()
    assert text.endswith(readme)


def test_the_api_page_is_markdown_rendered_from_the_docstrings() -> None:
    """The repository's web view shows api.md as the site does: no ``:::`` directive, every
    public name of the errors module, and the page equal to its rendering."""
    api = RENDER.api_page()
    text = api.PAGE.read_text()
    assert ":::" not in text
    assert text == api.render(), "docs/api.md differs from the docstrings: run ./dev docs"
    for name in errors.__all__:
        assert f"### `pysparksources.errors.{name}`" in text, name
    assert "### `pysparksources.register`" in text and "#### `EventHubsEmulator." in text


def test_every_use_of_every_format_has_a_table_in_the_docs() -> None:
    marked = {
        (source, use)
        for page in RENDER.PAGES
        for source, use in re.findall(r"<!-- options:([a-z]+):([A-Z_]+) -->", page.read_text())
    }
    for source, table in RENDER.TABLES.items():
        for use in (Use.READ, Use.WRITE):
            if table.for_use(use):
                assert (source, use.name) in marked, f"no {use.name} option table for {source}"


def test_a_rendered_table_shows_every_option_with_its_default_and_aliases() -> None:
    for table in RENDER.TABLES.values():
        for use in (Use.READ, Use.WRITE):
            rows = markdown_table(table, use).splitlines()
            for option in table.for_use(use):
                row = next(r for r in rows if r.startswith(f"| `{option.name}`"))
                assert f"| {option.documented_default()} |" in row, (table.source, option.name)
                assert all(f"`{alias}`" in row for alias in option.aliases), row
            for family in table.families:
                shown = any(r.startswith(f"| `{family.shown_name}` | unset |") for r in rows)
                assert shown == bool(family.uses & use), (table.source, family.prefix, use)
            # A table holds its own use's options only (a sink option is not a reader's).
            others = {o.name for o in table.options} - {o.name for o in table.for_use(use)}
            assert not [r for r in rows if any(r.startswith(f"| `{n}`") for n in others)]


def test_readme_names_the_two_commands() -> None:
    assert "./dev demo" in README and "./dev test" in README


def test_the_readmes_example_code_is_the_examples_own() -> None:
    """Each Python block after a link to an example is a verbatim excerpt of that script (CI
    runs the scripts, so the README shows code that runs)."""
    from support.paths import EXAMPLES

    shown = re.findall(r"\]\((examples/[\w/]+\.py)\).*?```python\n(.*?)```", README, re.DOTALL)
    assert len(shown) >= 3, shown
    for path, block in shown:
        script = (EXAMPLES.parent / path).read_text()
        assert block in script, f"README's block after {path} is not a verbatim excerpt of it"
