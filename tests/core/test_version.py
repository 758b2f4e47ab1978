"""One place holds the product's version: ``pysparksources/_version.py``. The packaging metadata
reads it (pyproject.toml's dynamic version), the package re-exports it, and no other module
writes a version of its own. (The built wheel's metadata is checked in tests/wheel.)"""

from __future__ import annotations

import ast
import re
from importlib import metadata

import pysparksources
from support.paths import PRODUCT

SOURCE = PRODUCT / "src"


def _table(text: str, name: str) -> str:
    """The body of one TOML table (tomllib is not in Python 3.10)."""
    match = re.search(rf"^\[{re.escape(name)}\]\n(.*?)(?=^\[|\Z)", text, re.M | re.S)
    assert match, f"no [{name}] in pyproject.toml"
    return match.group(1)


def test_the_packaging_metadata_reads_the_version_module() -> None:
    text = (PRODUCT / "pyproject.toml").read_text()
    project = _table(text, "project")
    assert not re.search(r"^version\s*=", project, re.M), "pyproject.toml states a version"
    assert re.search(r'^dynamic\s*=\s*\[[^]]*"version"', project, re.M)
    dynamic = _table(text, "tool.setuptools.dynamic")
    attr = r'^version\s*=\s*\{\s*attr\s*=\s*"pysparksources\._version\.__version__"'
    assert re.search(attr, dynamic, re.M)
    # What this environment installed from it (the editable install's metadata).
    assert metadata.version("pysparksources") == pysparksources.__version__


def test_no_other_module_holds_a_version() -> None:
    holders = []
    for path in sorted(SOURCE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = node.targets if isinstance(node, ast.Assign) else []
            if any(isinstance(t, ast.Name) and t.id == "__version__" for t in targets):
                holders.append(str(path.relative_to(SOURCE)))
    assert holders == ["pysparksources/_version.py"]
