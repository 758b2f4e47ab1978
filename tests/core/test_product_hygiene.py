"""Static checks of the product's source and metadata that a security scanner would make.

- ``assert`` vanishes under ``python -O``: an assertion may only narrow a type for mypy on an
  invariant the code itself establishes (``assert x is not None``, ``assert isinstance(x, T)``),
  never check input, state read back or a result that can differ at run time; those are
  explicit checks raising a :mod:`pysparksources.errors` class.
- A hash used for a name, not for security, says so (``usedforsecurity=False``), as bandit and
  FIPS-mode Pythons require.
- Dependency floors exclude releases with known vulnerabilities.
"""

from __future__ import annotations

import ast
import re

from packaging.requirements import Requirement

from support.paths import PRODUCT

SOURCE = PRODUCT / "src"
PRODUCT_FILES = sorted(SOURCE.rglob("*.py"))
# (distribution, first release without the vulnerability, why)
FLOORS = [("azure-identity", "1.16.1", "CVE-2024-35255: elevation of privilege")]


def _narrowing(node: ast.Assert) -> bool:
    """``assert <name or attribute> is not None`` or ``assert isinstance(<...>, <type>)``."""
    test = node.test
    if node.msg is not None:
        return False
    if isinstance(test, ast.Compare):
        return (
            isinstance(test.left, (ast.Name, ast.Attribute))
            and [type(op) for op in test.ops] == [ast.IsNot]
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None
        )
    return (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "isinstance"
        and isinstance(test.args[0], (ast.Name, ast.Attribute))
    )


def test_no_assert_checks_anything_but_a_type() -> None:
    found = [
        f"{path.relative_to(SOURCE)}:{node.lineno} {ast.unparse(node)}"
        for path in PRODUCT_FILES
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.Assert) and not _narrowing(node)
    ]
    assert not found, "python -O drops these checks; raise an error instead: " + ", ".join(found)


def test_hashes_for_names_are_declared_not_for_security() -> None:
    weak = {"md5", "sha1", "new"}
    found = []
    for path in PRODUCT_FILES:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if ast.unparse(node.func.value) != "hashlib" or node.func.attr not in weak:
                continue
            declared = any(
                k.arg == "usedforsecurity"
                and isinstance(k.value, ast.Constant)
                and k.value.value is False
                for k in node.keywords
            )
            if not declared:
                found.append(f"{path.relative_to(SOURCE)}:{node.lineno} {ast.unparse(node)}")
    assert not found, "add usedforsecurity=False (or use sha256): " + ", ".join(found)


def test_dependency_floors_exclude_vulnerable_releases() -> None:
    # Every quoted requirement of pyproject.toml (tomllib is not in Python 3.10).
    text = (PRODUCT / "pyproject.toml").read_text()
    quoted = re.findall(r'"([A-Za-z0-9_.\[\]-]+(?:[<>=!~][^"]*)?)"', text)
    requirements = [Requirement(q) for q in quoted if re.match(r"[a-z]", q)]
    for name, fixed, why in FLOORS:
        specs = [r.specifier for r in requirements if r.name == name]
        assert specs, f"{name} is no longer a dependency: drop it from FLOORS"
        below = fixed.rsplit(".", 1)[0] + "." + str(int(fixed.rsplit(".", 1)[1]) - 1)
        for spec in specs:
            assert spec.contains(fixed), f"{name}{spec} refuses {fixed}"
            assert not spec.contains(below), f"{name}{spec} admits {below} ({why})"
