"""No module of pyfile outside ``files/formats/`` asks which format it has: it asks the format.

A comparison with a format's name (``fmt == "csv"``, ``fmt in ("csv", "json")``), a mapping
keyed by format names, or a lookup by one is how adding a format came to touch eleven modules.
Each format's module says what the format is (splittable, parse modes, codecs, options...),
and the rest of pyfile asks the format the registry gives for a name. Static: every module's
source read with :mod:`ast`; a format name as a value (``default="parquet"``) or in a
docstring is no comparison.
"""

from __future__ import annotations

import ast

from pysparksources.files.formats import READ_FORMATS
from support.paths import PRODUCT

FILES = PRODUCT / "src" / "pysparksources" / "files"
FORMATS_ROOM = FILES / "formats"
_LOOKUPS = {"get", "pop", "setdefault", "index", "count"}


def _names_in(node: ast.AST, names: set[str]) -> list[str]:
    """The format names ``node`` is, or holds as a literal tuple, list or set."""
    if isinstance(node, ast.Constant) and node.value in names:
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [found for element in node.elts for found in _names_in(element, names)]
    return []


def format_name_uses(source: str, names: set[str]) -> list[str]:
    """Each place ``source`` compares with, keys by or looks up a format name, as ``line: code``."""
    found: list[tuple[int, str]] = []

    def flag(node: ast.AST) -> None:
        found.append((getattr(node, "lineno", 0), ast.unparse(node)))

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            if any(_names_in(operand, names) for operand in (node.left, *node.comparators)):
                flag(node)
        elif isinstance(node, ast.Dict):
            if any(key is not None and _names_in(key, names) for key in node.keys):
                flag(node)
        elif isinstance(node, ast.Subscript):
            if _names_in(node.slice, names):
                flag(node)
        elif isinstance(node, ast.MatchValue):
            if _names_in(node.value, names):
                flag(node)
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            lookup = isinstance(func, ast.Attribute) and func.attr in _LOOKUPS
            if lookup and _names_in(node.args[0], names):
                flag(node)
    return [f"{line}: {code}" for line, code in sorted(found)]


def test_no_format_name_is_compared_outside_the_formats() -> None:
    names = set(READ_FORMATS)
    assert {"parquet", "csv", "json", "text", "orc"} <= names
    modules = [path for path in sorted(FILES.rglob("*.py")) if FORMATS_ROOM not in path.parents]
    assert len(modules) > 30, f"only {len(modules)} modules found under {FILES}"
    offenders = {}
    for path in modules:
        uses = format_name_uses(path.read_text(encoding="utf-8"), names)
        if uses:
            offenders[str(path.relative_to(FILES))] = uses
    assert not offenders, (
        "ask the format (files/formats: format_named(name).splittable, .parse_modes, ...) "
        f"instead of comparing its name: {offenders}"
    )


def test_the_check_sees_every_form_of_a_comparison() -> None:
    names = {"csv", "json", "parquet"}
    # The forms pyfile's modules used before the formats became modules, one a line.
    source = "\n".join(
        [
            'if opts.format == "csv": pass',
            'if "json" != fmt: pass',
            'tolerant = opts.format in ("csv", "json")',
            'if fmt not in ["parquet"]: pass',
            'READERS = {"parquet": read_parquet, "csv": read_csv}',
            'reader = READERS["csv"]',
            'suffix = SUFFIXES.get("json")',
            'match fmt:\n    case "parquet":\n        pass',
            'if fmt in {"csv"}: pass',
        ]
    )
    lines = [int(entry.split(":")[0]) for entry in format_name_uses(source, names)]
    assert lines == [1, 2, 3, 4, 5, 6, 7, 9, 11], format_name_uses(source, names)


def test_a_format_name_as_a_value_is_no_comparison() -> None:
    names = {"csv", "parquet"}
    source = '''
"""Reads parquet and csv."""
FORMAT = Choice(name="format", default="parquet", choices=READ_FORMATS)
message = f"cannot read {fmt} file"
if fmt == other: pass
values = {"csv_header": True}
'''
    assert format_name_uses(source, names) == []
