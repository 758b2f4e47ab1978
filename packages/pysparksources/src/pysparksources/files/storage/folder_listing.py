"""One listing of a folder or glob, by the rules of Spark's file index, on any fsspec filesystem.

Which files a source reads (this listing, or a file sink's manifest) is ``source.file_index``'s
job; files named by storage events are ``source.notifications.discovery``'s.

Spark lists every folder below the source path (globs expanded first), skips files and
folders whose names start with ``_`` or ``.`` (``_``-names holding ``=`` are partition folders
and stay) and applies ``pathGlobFilter`` to file names. Which of those files a stream reads
follows Spark's partition discovery (checked against Spark's own file source in
tests/files/source/test_spark_parity_source.py):

- with ``recursiveFileLookup``, every file;
- when the folders holding files are ``col=value`` partition folders, every file (in nested
  plain folders below a partition folder too); partition folders next to plain folders are a
  conflicting layout and an error, as in Spark;
- otherwise only the files directly in the path (or in each folder a glob matches, or the
  files a glob matches): plain subfolders are not read.

Partition values come from the ``col=value`` names nearest to each file
(``partition_folders``), and only for a path without a glob (Spark reads none through a glob).

Every file's path below the folder must pass
:func:`~pysparksources.files.storage.safe_paths.path_problem` (no ``..``, empty or dot segments,
backslashes, or encoded forms of them), and a glob's matched folders obey the hidden-name rule
as listed folders do; :func:`selects` applies the same rules to the one path a notification
names, so no event can reach outside the folder.
"""

from __future__ import annotations

import logging
import posixpath
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pysparksources._redact import safe_url
from pysparksources.errors import ArgumentError, PartitionLayoutError
from pysparksources.files import NAME
from pysparksources.files.storage.partition_folders import partition_spec, relative_dir
from pysparksources.files.storage.safe_paths import below, path_problem

__all__ = [
    "FileEntry",
    "check_glob",
    "glob_regex",
    "is_hidden",
    "list_files",
    "modification_ms",
    "selects",
]

log = logging.getLogger(__name__)
# Paths already warned about (a refused file is listed again at every trigger).
_WARNED: set[str] = set()
_WARNED_MAX = 1000


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
                raw = pattern[i + 1 : end]
                if re.search(r"(?<!\\)\[", raw):  # Hadoop's GlobPattern refuses it too
                    raise ArgumentError(
                        NAME, f"not a valid glob pattern: '[' inside the character class [{raw}]"
                    )
                body = raw.replace("\\", "\\\\")
                if body.startswith("^") or body.startswith("!"):
                    body = "^" + body[1:]
                # Literal in a glob class, but "[" (here only after a backslash, which stays
                # literal too), "&&", "~~" and "||" are future set syntax in a Python class.
                body = "".join("\\" + ch if ch in "[&~|" else ch for ch in body)
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
        raise ArgumentError(NAME, f"not a valid glob pattern: {error}") from None


def _visible(relative: str) -> bool:
    return not any(is_hidden(part) for part in relative.split("/") if part)


def _roots(fs: Any, base: str, pattern: str | None) -> list[str]:
    if pattern is None:
        return [base]
    # fsspec's glob understands * ? [..] but neither Hadoop's {a,b} nor its backslash escapes:
    # expand alternatives first, then turn each escaped character into a one-character class.
    roots: list[str] = []
    for expanded in _expand_braces(pattern):
        roots.extend(str(p) for p in fs.glob(_fsspec_glob(expanded)))
    return sorted(set(roots))


def _fsspec_glob(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            i += 1
            c = pattern[i]
            out.append(f"[{c}]" if c in "*?[]{}" else c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


MAX_BRACE_EXPANSIONS = 1024


def _expand_braces(pattern: str) -> list[str]:
    """Hadoop's ``{a,b}`` alternatives (innermost first); escaped braces stay literal.
    ValueError past :data:`MAX_BRACE_EXPANSIONS` globs."""
    opening = -1
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            opening = i
        elif c == "}" and opening >= 0:
            head, tail = pattern[:opening], pattern[i + 1 :]
            result: list[str] = []
            for choice in pattern[opening + 1 : i].split(","):
                result.extend(_expand_braces(head + choice + tail))
                if len(result) > MAX_BRACE_EXPANSIONS:
                    raise ArgumentError(
                        NAME,
                        f"the {{a,b}} alternatives expand to over {MAX_BRACE_EXPANSIONS} globs",
                    )
            return result
        i += 1
    return [pattern]


def check_glob(pattern: str) -> None:
    """Raise :class:`ArgumentError` when ``pattern`` (a path glob) cannot be listed."""
    for expanded in _expand_braces(pattern):
        for part in expanded.split("/"):
            glob_regex(part)


def list_files(
    fs: Any,
    base: str,
    pattern: str | None,
    name_filter: str | None = None,
    recursive: bool = False,
) -> list[FileEntry]:
    """The files a Spark stream over ``base`` (or ``pattern``) reads now (module docstring)."""
    name_regex = glob_regex(name_filter) if name_filter else None
    found: dict[str, FileEntry] = {}
    direct: set[str] = set()
    # (the folder partitions are discovered against, a folder below it holding files)
    leaves: set[tuple[str, str]] = set()
    base_norm = base.rstrip("/")
    for root in _roots(fs, base, pattern):
        root = root.rstrip("/")
        rel_root = below(root, base_norm)
        if rel_root is None or (rel_root and not _visible(rel_root)):
            continue
        try:
            listing = fs.find(root, withdirs=False, detail=True)
        except FileNotFoundError:
            continue
        for path, info in listing.items():
            path = str(path)
            if info.get("type") == "directory":
                continue
            if below(path, base_norm) is None:
                _warn_refused(path, base_norm)
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
            if "/" not in rel:
                direct.add(path)  # in the root folder, or the root is this file
            if pattern is None:
                leaves.add((base_norm, relative_dir(base_norm, path)))
            else:  # Spark discovers partitions below each folder a glob matched
                leaves.add((root, posixpath.dirname(rel)) if rel else (posixpath.dirname(root), ""))
    if recursive or _partitioned(leaves):
        return list(found.values())
    return [entry for path, entry in found.items() if path in direct]


def selects(
    path: str,
    base: str,
    pattern: str | None,
    name_filter: str | None = None,
    recursive: bool = False,
) -> bool:
    """Whether a listing of ``base`` (or ``pattern``) would read the file ``path``.

    For files a notification names (no listing): the rules of :func:`list_files` applied to
    one path. A file in a plain subfolder counts only with ``recursive`` or below ``col=value``
    partition folders (the one layout :func:`list_files` reads subfolders of); a mixed layout,
    which a listing refuses, cannot be seen from one path.
    """
    name = posixpath.basename(path)
    if is_hidden(name) or (name_filter and glob_regex(name_filter).match(name) is None):
        return False
    base = base.rstrip("/")
    if below(path, base) is None:  # not below the folder, or a path that could climb out
        return False
    roots: list[str] = []
    if pattern is None:
        roots.append(base)
    else:
        parts = path.split("/")
        for expanded in _expand_braces(pattern):
            globs = expanded.rstrip("/").split("/")
            if len(globs) <= len(parts) and all(
                glob_regex(g).match(p) for g, p in zip(globs, parts, strict=False)
            ):
                root = "/".join(parts[: len(globs)])
                rel_root = below(root, base)
                # As a listing does: a glob never selects a hidden folder (_temporary/).
                if rel_root is not None and (not rel_root or _visible(rel_root)):
                    roots.append(root)
    for root in roots:
        if path == root:
            return pattern is not None  # the glob names the file itself
        if not path.startswith(root + "/"):
            continue
        rel = path[len(root) + 1 :]
        if not _visible(rel):
            continue
        folder = posixpath.dirname(rel)
        if not folder or recursive:
            return True
        columns, hangs_from = partition_spec(folder)
        if columns and not hangs_from:
            return True
    return False


def _warn_refused(path: str, base: str) -> None:
    """One warning per refused path and process: the file is listed again at every trigger."""
    if path in _WARNED or len(_WARNED) >= _WARNED_MAX:
        return
    _WARNED.add(path)
    relative = path[len(base) :].lstrip("/") if path.startswith(base) else path
    log.warning(
        "%s: not reading the listed file %r: %s (docs/pyfile-source.md, 'Paths that are never "
        "read')",
        NAME,
        safe_url(path) if "://" in path else path,
        path_problem(relative) or "it is not below the path",
    )


def _partitioned(leaves: set[tuple[str, str]]) -> bool:
    """Whether the folders holding files are partition folders; a mixed layout is an error."""
    hangs_from: dict[str, str] = {}
    names: dict[tuple[str, ...], str] = {}
    for root, folder in leaves:
        columns, hang = partition_spec(folder)
        where = posixpath.join(root, hang).rstrip("/") or "/"
        hangs_from.setdefault(where.lower(), where)
        if columns:
            names.setdefault(tuple(k.lower() for k, _ in columns), posixpath.join(root, folder))
    if not names:
        return False
    if len(hangs_from) > 1:
        shown = ", ".join(sorted(hangs_from.values())[:5])
        raise PartitionLayoutError(
            NAME,
            "conflicting folder layout: partition folders (col=value) hold files, but "
            f"the folders holding files do not hang from one table root ({shown}); Spark's "
            "file source refuses this layout too. Read each table's root folder on its own, "
            "move the other files, or set recursiveFileLookup=true (no partition columns then)",
        )
    if len(names) > 1:
        shown = ", ".join(sorted(names.values())[:5])
        raise PartitionLayoutError(
            NAME,
            f"conflicting partition column names in the folders {shown}; every partition "
            "folder must have the same col=value levels",
        )
    return True
