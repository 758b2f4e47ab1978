"""Render docs/api.md, the API reference, from the public names' signatures and docstrings.

The page is plain Markdown, so the repository's web view shows it as the site does (a
mkdocstrings ``:::`` directive shows there as that line only). ``./dev docs`` writes it;
tests/core/test_docs.py fails when the committed page differs from its rendering.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["PAGE", "render"]

PAGE = Path(__file__).resolve().parent / "api.md"

# (module, the names it shows; None: every name of its __all__), in the page's order.
SHOWN: tuple[tuple[str, tuple[str, ...] | None], ...] = (
    ("pysparksources", ("register", "source_names")),
    ("pysparksources.errors", None),
    ("pysparksources.monitoring", ("LagListener", "partition_lag")),
    (
        "pysparksources_emulator",
        ("EmulatorConfig", "HubConfig", "Fault", "partition_for_key", "serve", "EventHubsEmulator"),
    ),
)

_INTRO = """\
# API reference

<!-- Made by ./dev docs (docs/render_api.py) from the docstrings: edit those, not this page. -->

The public names of the two distributions, from their docstrings. Everything else (modules and
names starting with `_`, the sources' internals) is private and may change. The sources
themselves are used through Spark (`spark.readStream.format("pyfile")`): their options are in
each source's reference page.
"""

# reST roles (:class:`~a.b.C`, :func:`name <target>`) and literals (``x``) as Markdown code.
_ROLE = re.compile(r":[a-z]+:`(?:([^`<]*?)\s*<[^`>]*>|~?([^`]*?))`")
_LITERAL = re.compile(r"``(.+?)``")
_SECTION = re.compile(r"^(\S[^\n]*)\n-{3,}$", re.MULTILINE)


def _role(match: re.Match[str]) -> str:
    text = match.group(1) or match.group(2)
    if match.group(0).split("`")[1].startswith("~"):
        text = text.rsplit(".", 1)[-1]
    return f"`{text}`"


def _markdown(doc: str) -> str:
    """A numpy-style docstring as Markdown: roles and literals as code, sections in bold,
    parameter lists as lists, reST literal blocks (``::``) as fenced code."""
    doc = _ROLE.sub(_role, _LITERAL.sub(r"`\1`", doc))
    doc = _SECTION.sub(r"**\1**\n", doc)
    out: list[str] = []
    lines = doc.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.rstrip()
        if stripped.endswith("::"):
            out.append(stripped[:-3] if stripped.endswith(" ::") else stripped[:-1])
            block: list[str] = []
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith("    ")):
                block.append(lines[i][4:])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            while block and not block[0].strip():
                block.pop(0)
            out += ["", "```python", *block, "```", ""]
            continue
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if line and not line.startswith(" ") and following.startswith("    ") and line[-1] == ":":
            out.append(f"- `{line[:-1]}`:")  # a parameter's name, its text indented below
        elif line.startswith("    ") and out and out[-1].startswith(("- `", "  ")):
            out.append("  " + line.strip())
        else:
            out.append(line)
        i += 1
    return "\n".join(out).strip()


def _signature(name: str, obj: Any) -> str:
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return name
    if dataclasses.is_dataclass(obj):  # its private fields are no part of the interface
        params = [p for p in signature.parameters.values() if not p.name.startswith("_")]
        signature = signature.replace(parameters=params)
    returns = signature.return_annotation
    hidden = returns is inspect.Signature.empty or inspect.isclass(obj)
    shown = "" if hidden else _annotation(returns)
    params = ", ".join(_parameter(p) for p in signature.parameters.values())
    return f"{name}({params})" + (f" -> {shown}" if shown else "")


def _annotation(annotation: Any) -> str:
    # Postponed annotations are their source text; anything else, its name.
    if annotation is None:
        return "None"
    return annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")


def _parameter(parameter: inspect.Parameter) -> str:
    text = parameter.name
    if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
        text = f"*{text}"
    elif parameter.kind is inspect.Parameter.VAR_KEYWORD:
        text = f"**{text}"
    if parameter.annotation is not inspect.Parameter.empty:
        text += f": {_annotation(parameter.annotation)}"
    if parameter.default is not inspect.Parameter.empty:
        default = parameter.default
        shown = getattr(default, "__name__", None) if callable(default) else None
        text += f" = {shown or repr(default)}"
    return text


def _kind(obj: Any) -> str:
    if inspect.isclass(obj):
        if issubclass(obj, BaseException):
            bases = ", ".join(base.__name__ for base in obj.__bases__)
            return f"exception ({bases})"
        return "dataclass" if dataclasses.is_dataclass(obj) else "class"
    return "function"


def _entry(module: str, name: str, obj: Any, level: int) -> Iterator[str]:
    yield f"{'#' * level} `{module}.{name}`"
    yield ""
    shown = name if inspect.isclass(obj) and issubclass(obj, BaseException) else None
    yield f"*{_kind(obj)}*" + ("" if shown else f" `{_signature(name, obj)}`")
    yield ""
    doc = inspect.getdoc(obj)
    if doc:
        yield _markdown(doc)
        yield ""
    if inspect.isclass(obj) and not issubclass(obj, BaseException):
        for method, value in vars(obj).items():
            if method.startswith("_") or not callable(value):
                continue
            yield f"{'#' * (level + 1)} `{name}.{method}`"
            yield ""
            yield f"`{_signature(method, getattr(obj, method))}`"
            yield ""
            method_doc = inspect.getdoc(value)
            if method_doc:
                yield _markdown(method_doc)
                yield ""


def render() -> str:
    """The page as ./dev docs writes it."""
    parts = [_INTRO]
    for module_name, names in SHOWN:
        module = importlib.import_module(module_name)
        parts.append(f"## `{module_name}`\n")
        summary = (inspect.getdoc(module) or "").split("\n\n", 1)[0]
        if summary:
            parts.append(_markdown(summary) + "\n")
        for name in names or tuple(module.__all__):
            parts.append("\n".join(_entry(module_name, name, getattr(module, name), 3)))
    return "\n".join(parts).rstrip() + "\n"


if __name__ == "__main__":
    PAGE.write_text(render())
