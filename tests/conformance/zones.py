"""Session time zones for tests: set one on a shared session for a block, then restore.

No test session pins ``spark.sql.session.timeZone``; a test that needs a zone sets it here and
unsets it afterwards, so every other test runs under Spark's default (the JVM's zone).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

KEY = "spark.sql.session.timeZone"
# The matrix every zone-sensitive test runs: Spark's default, a zone with DST, a half-hour one.
DEFAULT = None
ZONES: tuple[str | None, ...] = (DEFAULT, "America/Los_Angeles", "Asia/Kolkata")


def zone_name(zone: str | None) -> str:
    return "default" if zone is None else zone


@contextlib.contextmanager
def session_zone(session: Any, zone: str | None) -> Iterator[str]:
    """Run a block with the session time zone ``zone`` (None: unset, the JVM default).

    Yields the zone the session then uses (for ``None``, the JVM default's id).
    """
    session.conf.unset(KEY)
    try:
        if zone is not None:
            session.conf.set(KEY, zone)
        yield str(session.conf.get(KEY))
    finally:
        session.conf.unset(KEY)
