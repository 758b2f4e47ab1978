"""List a source's files the way Spark's file index does, on any fsspec filesystem.

Spark lists every folder below the source path (globs expanded first), skips files and folders
whose names start with ``_`` or ``.`` (``_``-names holding ``=`` are partition folders and
stay), applies ``pathGlobFilter`` to file names, and reads ``col=value`` folder names as
partition values unless ``recursiveFileLookup`` is on.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

__all__ = [
    "FileEntry",
    "check_glob",
    "glob_regex",
    "is_hidden",
    "list_files",
    "modification_ms",
    "partition_values",
]


@dataclass(frozen=True)
class FileEntry:
    """One listed file: full path on its filesystem, modification time (ms) and size."""

    path: str
    timestamp: int
    size: int


def is_hidden(name: str) -> bool:
    """Spark's rule for names the file index skips."""
    if name.startswith("_") and "=" not in name:
        return True
    return name.startswith(".") or name.endswith("._COPYING_")


def modification_ms(info: dict[str, Any]) -> int:
    """A file's modification time in epoch ms from whatever key its fsspec backend uses."""
    for key in ("mtime", "last_modified", "LastModified", "updated", "modified", "created"):
        value = info.get(key)
        if value is None:
            continue
        if isinstance(value, datetime):
            return int(value.timestamp() * 1000)
        if isinstance(value, (int, float)):
            return int(value * 1000) if value < 1e11 else int(value)
        if isinstance(value, str):
            try:
                return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
            except ValueError:
                continue
    return 0


def glob_regex(pattern: str) -> re.Pattern[str]:
    """Hadoop-style glob (``*``, ``?``, ``[...]``, ``{a,b}``) as a regex for one name."""
    out: list[str] = []
    depth = 0
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        elif c == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("^") or body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end
        elif c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    out.append(")" * depth)  # an unclosed {a,b is closed at the end, as Hadoop does
    try:
        return re.compile("".join(out) + r"\Z", re.DOTALL)
    except re.error as error:  # e.g. an empty class [] or a reversed range [z-a]
        raise ValueError(f"not a valid glob pattern: {error}") from None


def partition_values(relative_dir: str) -> dict[str, str]:
    """``col=value`` folder names along a file's folder path, outermost first."""
    values: dict[str, str] = {}
    for part in relative_dir.split("/"):
        if "=" in part:
            key, _, value = part.partition("=")
            if key:
                from urllib.parse import unquote

                values[key] = unquote(value)
    return values


def _visible(relative: str) -> bool:
    return not any(is_hidden(part) for part in relative.split("/") if part)


def _roots(fs: Any, base: str, pattern: str | None) -> list[str]:
    if pattern is None:
        return [base]
    # fsspec's glob understands * ? [..] but not Hadoop's {a,b}: expand alternatives first.
    roots: list[str] = []
    for expanded in _expand_braces(pattern):
        roots.extend(str(p) for p in fs.glob(expanded))
    return sorted(set(roots))


MAX_BRACE_EXPANSIONS = 1024


def _expand_braces(pattern: str) -> list[str]:
    """``a{b,c}d`` -> ``abd``, ``acd``; ValueError past :data:`MAX_BRACE_EXPANSIONS`."""
    match = re.search(r"\{([^{}]*)\}", pattern)
    if match is None:
        return [pattern]
    head, tail = pattern[: match.start()], pattern[match.end() :]
    result: list[str] = []
    for choice in match.group(1).split(","):
        result.extend(_expand_braces(head + choice + tail))
        if len(result) > MAX_BRACE_EXPANSIONS:
            raise ValueError(
                f"the {{a,b}} alternatives expand to over {MAX_BRACE_EXPANSIONS} globs"
            )
    return result


def check_glob(pattern: str) -> None:
    """Raise ValueError when ``pattern`` (a path glob) cannot be listed."""
    for expanded in _expand_braces(pattern):
        for part in expanded.split("/"):
            glob_regex(part)


def list_files(
    fs: Any, base: str, pattern: str | None, name_filter: str | None = None
) -> list[FileEntry]:
    """Every visible data file below ``base`` (or below what ``pattern`` matches)."""
    name_regex = glob_regex(name_filter) if name_filter else None
    found: dict[str, FileEntry] = {}
    base_norm = base.rstrip("/")
    for root in _roots(fs, base, pattern):
        root = root.rstrip("/")
        rel_root = posixpath.relpath(root, base_norm) if root != base_norm else ""
        if rel_root and not _visible(rel_root):
            continue
        try:
            listing = fs.find(root, withdirs=False, detail=True)
        except FileNotFoundError:
            continue
        for path, info in listing.items():
            path = str(path)
            if info.get("type") == "directory":
                continue
            rel = (
                path[len(root) :].lstrip("/") if path.startswith(root) else posixpath.basename(path)
            )
            if rel and not _visible(rel):
                continue
            name = posixpath.basename(path)
            if not rel and is_hidden(name):
                continue
            if name_regex is not None and name_regex.match(name) is None:
                continue
            found[path] = FileEntry(path, modification_ms(info), int(info.get("size") or 0))
    return list(found.values())


def relative_dir(base: str, path: str) -> str:
    """The folder part of ``path`` below ``base`` (for partition values)."""
    base_norm = base.rstrip("/") + "/"
    rel = path[len(base_norm) :] if path.startswith(base_norm) else path
    return posixpath.dirname(rel)
