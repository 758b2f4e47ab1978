"""What of a value may appear in a message or a log: never a credential.

A connection string pasted into the wrong option, or a URL carrying a password or a SAS token,
is never quoted. Errors and the options toolkit both use this, so it depends on nothing.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["NOT_SHOWN", "safe_url", "showable"]

NOT_SHOWN = "<not shown>"
# A value that looks like a credential is never quoted, even for an option that is not secret
# (a connection string pasted into the wrong option, a URL carrying a SAS token).
_CREDENTIAL = re.compile(
    r"sharedaccess|accountkey|sig=|secret|password|passwd|token|credential|[a-z]key=",
    re.IGNORECASE,
)


def safe_url(url: str) -> str:
    """``url`` without a password or a query string (a SAS token), for messages and logs."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return NOT_SHOWN
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = (user.split(":", 1)[0] + ":***@" if ":" in user else user + "@") + host
    query = "***" if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def showable(value: str | None) -> str | None:
    """``value`` as it may appear in a message: URLs without credentials, no key-like text."""
    if value is None or _CREDENTIAL.search(value):
        return None
    return safe_url(value) if "://" in value else value
