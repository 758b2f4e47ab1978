"""What of a value may appear in a message, a log or a stored file: never a credential.

A connection string pasted into the wrong option, a URL carrying a password, a token or a SAS
query, a key or a PEM block is never quoted. Errors, the options toolkit and pyfile's URLs
(messages, the sink's manifest) use this, so it depends on nothing.
"""

from __future__ import annotations

import itertools
import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["NOT_SHOWN", "public_url", "safe_url", "scrubbed", "showable"]

NOT_SHOWN = "<not shown>"
# A value that looks like a credential is never quoted, even for an option that is not secret
# (a connection string pasted into the wrong option, a URL carrying a SAS token, a key file).
_CREDENTIAL = re.compile(
    r"sharedaccess|accountkey|sig=|secret|password|passwd|token|credential|[a-z]key="
    r"|key[\"']\s*:"  # JSON or a Python dict: {"account_key": ...}
    r"|[a-z]_?key\s*:\s*\S"  # YAML-ish: account_key: ...
    r"|-----BEGIN"  # PEM: keys and certificates
    r"|\bbearer\s+\S|\bbasic\s+[a-z0-9+/]{8,}",  # HTTP Authorization values
    re.IGNORECASE,
)
# Runs of the alphabets keys and tokens are written in (base64, base64url).
_RUN = re.compile(r"[A-Za-z0-9+/_\-]{32,}={0,2}")
# Schemes whose userinfo names a container, not a user: abfs://container@account.dfs...
_CONTAINER_USERINFO = frozenset({"abfs", "abfss", "wasb", "wasbs"})
# ... and those where a userinfo without a password is a user's name, no token.
_NAMED_USERINFO = _CONTAINER_USERINFO | {"sftp", "ssh", "ftp", "ftps"}
# Schemes where a query string is a request's parameters (a SAS token lives there); in other
# fsspec URLs (s3://, memory://...) "?" and "#" may be part of an object's name.
_HTTP = frozenset({"http", "https", "webhdfs", "swebhdfs", "webdav"})
_QUERY_CREDENTIAL = re.compile(
    r"sig=|signature|token|key|credential|secret|password|passwd|auth|sas", re.IGNORECASE
)


def public_url(url: str) -> str:
    """``url`` as it may be shown or stored: without userinfo (a user, password or token), and
    without the query or fragment where those can carry a credential (all of them for http(s);
    for other schemes only when they look like one, since ``?`` and ``#`` may be part of a
    name). The container of ``abfs://container@account...`` stays: it is no credential.

    Not a parser of every URL: a string without ``://`` is returned as it is.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    end = len(rest)
    for mark in "/?#":
        found = rest.find(mark)
        if 0 <= found < end:
            end = found
    authority, tail = rest[:end], rest[end:]
    if "@" in authority:
        user, _, host = authority.rpartition("@")
        keep = scheme.lower() in _CONTAINER_USERINFO and ":" not in user
        authority = f"{user}@{host}" if keep else host
    cut = len(tail)
    for mark in "?#":
        found = tail.find(mark)
        if 0 <= found < cut and (scheme.lower() in _HTTP or _QUERY_CREDENTIAL.search(tail[found:])):
            cut = found
    return f"{scheme}://{authority}{tail[:cut]}"


_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>()\[\]]+")


def scrubbed(text: str) -> str:
    """``text`` (say, a filesystem error's message) with every URL in it made public: fsspec
    and aiohttp quote the URL they failed on, SAS query included."""
    return _URL_IN_TEXT.sub(lambda match: public_url(match.group(0)), text)


def safe_url(url: str) -> str:
    """``url`` without a password or a query string (a SAS token), for messages and logs.

    Unlike :func:`public_url` it shows where something was left out (``user:***@``, ``?***``).
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return NOT_SHOWN
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        if ":" in user:
            user = user.split(":", 1)[0] + ":***"
        elif parts.scheme.lower() not in _NAMED_USERINFO:
            user = "***"  # a lone userinfo may be a token whole (https://TOKEN@host)
        netloc = f"{user}@{host}"
    query = "***" if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def showable(value: str | None) -> str | None:
    """``value`` as it may appear in a message: URLs without credentials, no key-like text.

    None (not shown) for anything that looks like a credential: the words of one (``secret``,
    ``sig=``, ``"account_key":``...), a PEM block, an ``Authorization`` value (``Bearer ...``),
    a URL whose userinfo is a token (``https://TOKEN@host``) or a long run of random-looking
    base64 (a key). Paths, names and ordinary option values are shown.
    """
    if value is None or _CREDENTIAL.search(value) or _looks_like_a_key(value):
        return None
    if "://" in value:
        if _token_userinfo(value):
            return None
        return safe_url(value)
    return value


def _token_userinfo(url: str) -> bool:
    """A userinfo without a password in a URL where it is no name: ``https://TOKEN@host``."""
    scheme, _, rest = url.partition("://")
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if "@" not in authority:
        return False
    user = authority.rpartition("@")[0]
    return ":" not in user and scheme.lower() not in _NAMED_USERINFO


def _looks_like_a_key(value: str) -> bool:
    """A run of 32+ base64 characters mixing cases the way random text does.

    In a key, about 60 % of the upper case letters are followed by something else than a lower
    case letter, and about 40 % of the lower case ones by another lower case letter; in words
    and names (CamelCase too) a capital starts a word and lower case letters come in runs. A
    run cut by ``/`` every few characters is a path, not a key (one ``/`` in 64 in base64).
    """
    for run in _RUN.findall(value):
        body = run.rstrip("=")
        if len(body) < 10 * (body.count("/") + 1):
            continue
        pairs = list(itertools.pairwise(body))
        upper = sum(a.isupper() for a, _ in pairs)
        lower = sum(a.islower() for a, _ in pairs)
        if upper < 4 or lower < 4:
            continue
        capitals = sum(a.isupper() and b.islower() for a, b in pairs)
        lower_runs = sum(a.islower() and b.islower() for a, b in pairs)
        if (upper - capitals) * 100 >= upper * 35 or lower_runs * 2 < lower:
            return True
    return False
