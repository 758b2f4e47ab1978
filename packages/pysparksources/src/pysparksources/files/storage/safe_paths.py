"""Which paths below a source's folder pyfile may touch: the one rule for listing and events.

A path that comes from outside the query (a storage event, a listing, a manifest, the source
log) is used only when its part below the configured folder cannot reach above it, whoever
reads the name: fsspec, the HTTP client (which may normalise ``a/../b`` before sending), a
proxy or the service (which may decode ``%2e`` or ``%252e`` again, or read ``\\`` as ``/``).
So that part is refused when, as written,

- a segment is empty (``a//b``, a leading or trailing ``/``), only dots (``.``, ``..``,
  ``...``) or only blanks, also once ``;params`` are cut (``..;x``, as some servers do);
- it holds a backslash (Azure Blob storage reads it as ``/``) or a NUL;

or when, percent-decoded once, twice, ... (up to :data:`DECODE_ROUNDS` times: ``%252e`` ->
``%2e`` -> ``.``), with Unicode look-alikes folded (fullwidth and leader dots, NFKC) and the
overlong UTF-8 forms of ``.``, ``/`` and ``\\`` read as those, a segment between ``/`` or
``\\`` is only dots or blanks. ``%2F`` and ``%5C`` that only split a name into plain names
stay allowed: that is how Spark's own partition folders spell ``/`` and ``\\`` in values
(``col=a%2Fb``), and decoded they still stay below the folder. Pure functions, no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import unquote_to_bytes

__all__ = ["DECODE_ROUNDS", "below", "path_problem"]

# Each round undoes one layer of percent-encoding; no real name needs this many.
DECODE_ROUNDS = 4
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
# A segment that names no file: empty, blanks, or dots (".", "..", and "..." which some
# servers trim to ".." or nothing).
_NO_NAME = re.compile(r"[.\s]*")
# Overlong UTF-8 spellings of "." "/" "\" that lenient decoders still accept.
_OVERLONG = {
    b"\xc0\xae": b".",
    b"\xe0\x80\xae": b".",
    b"\xc0\xaf": b"/",
    b"\xe0\x80\xaf": b"/",
    b"\xc1\x9c": b"\\",
    b"\xe0\x81\x9c": b"\\",
}


def path_problem(relative: str) -> str | None:
    """Why ``relative`` (a path below the source's folder) is refused, or None when it is safe.

    The reason is a short phrase for a log line; it never quotes the path.
    """
    if not relative:
        return "it is empty"
    if "\\" in relative:
        return "it holds a backslash"
    if any(not segment for segment in relative.split("/")):
        return "it has an empty segment"
    text = relative
    for round_ in range(DECODE_ROUNDS + 1):
        if round_:
            if not _ESCAPE.search(text):
                return None
            text = _decode(text)
        problem = _view_problem(unicodedata.normalize("NFKC", text))
        if problem is not None:
            return problem + (f" once percent-decoded ({round_}x)" if round_ else "")
    if _ESCAPE.search(text):
        return f"it is still percent-encoded after {DECODE_ROUNDS} decodings"
    return None


def below(path: str, root: str) -> str | None:
    """``path`` relative to the folder ``root`` ('' when it is ``root`` itself), or None when it
    is not below ``root`` or its part below it is refused by :func:`path_problem`."""
    if path == root:
        return ""
    prefix = root.rstrip("/") + "/"
    if path.startswith(prefix):
        relative = path[len(prefix) :]
    elif prefix == "/" and not path.startswith("/"):  # a bucket or container path below "/"
        relative = path
    else:
        return None
    return relative if path_problem(relative) is None else None


def _view_problem(text: str) -> str | None:
    """One spelling of the path (as written, or decoded), Unicode look-alikes folded.

    An empty segment here comes from a decoded ``%2F``/``%5C`` or a look-alike next to a
    separator: it climbs nowhere, so only segments of dots or blanks are refused.
    """
    if "\x00" in text:
        return "it holds a NUL"
    for segment in re.split(r"[/\\]", text):
        head = segment.split(";", 1)[0]  # some servers read "..;x" as ".."
        if head and _NO_NAME.fullmatch(head):
            return "it has a segment of dots or blanks"
    return None


def _decode(text: str) -> str:
    raw = unquote_to_bytes(text)
    for overlong, plain in _OVERLONG.items():
        raw = raw.replace(overlong, plain)
    return raw.decode("utf-8", "replace")
