"""The documentation site builds strictly: no missing page, link or anchor, no page outside the nav.

``mkdocs build --strict`` (what ``./dev site`` runs) turns every warning into a failure; the
validation settings in mkdocs.yml make broken links, missing anchors and pages left out of the
nav warnings. The build renders the option tables again through docs/hooks.py.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import subprocess
import sys
from pathlib import Path

from support.paths import DOCS, ROOT


def test_the_site_builds_strictly_without_a_warning(tmp_path: Path) -> None:
    site = tmp_path / "site"
    config = ["--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(site)]
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", *config],
        cwd=tmp_path,  # the configuration, not the working directory, locates every file
        env=os.environ | {"NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = build.stdout + build.stderr
    warnings = [line for line in output.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert build.returncode == 0 and not warnings, output
    pages = {page.stem for page in DOCS.glob("*.md")} - {"index"}
    built = {path.parent.name for path in site.glob("*/index.html")}
    assert pages <= built, f"pages not built: {sorted(pages - built)}"


def test_the_build_renders_a_stale_option_table_again() -> None:
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    # The hook quiets the package's logger for the build's own process: not for this one,
    # whose later tests read the package's warnings.
    logger = logging.getLogger("pysparksources")
    level = logger.level
    try:
        spec.loader.exec_module(hooks)
    finally:
        logger.setLevel(level)
    page = (DOCS / "pyfile-source.md").read_text()  # current: tests/core/test_docs.py
    table = page.split("<!-- options:pyfile:READ -->\n", 1)[1].split("<!-- /options -->", 1)[0]
    stale = page.replace(table, "| option | default | meaning |\n|---|---|---|\n")
    built = hooks.on_page_markdown(stale, None, None, None)
    assert built == hooks.on_page_markdown(page, None, None, None)
    assert "| `sourceLogLocation` | required for streams |" in built
