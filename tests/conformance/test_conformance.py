"""pyfile vs Spark's own file reader and writer, on the corpus, in every format and zone.

One test item per (session kind, format, zone) runs both directions on every column at once.
The items outside :data:`FAST` are marked ``slow`` (outside the fast tier), which keeps
every format on the classic session under a zone that is not UTC where the format's values
depend on the zone, and two formats over Connect.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cases import ORC_IN_RANGE
from corpus import write_seed
from documented import DOCUMENTED
from harness import FORMATS, RESULTS, compare_format, failures, not_applicable
from zones import ZONES, session_zone, zone_name

pytestmark = pytest.mark.spark

LOS_ANGELES, KOLKATA = ZONES[1], ZONES[2]
# (session kind, format, zone) run by default; every other combination is slow.
FAST = {
    ("classic", "parquet", LOS_ANGELES),
    ("classic", "csv", KOLKATA),
    ("classic", "json", LOS_ANGELES),
    ("classic", "text", None),
    ("classic", "orc", None),
    ("connect", "csv", LOS_ANGELES),
    ("connect", "parquet", None),
}


def zones_for(fmt: str, kind: str) -> tuple[str | None, ...]:
    """The zones worth the time: text and ORC values do not depend on the session zone (ORC
    depends on the JVM's, see test_jvm_zone.py), so they run in the default zone; csv and json
    render and parse zones, parquet had the tagged-timestamp bug. Connect runs the zone-bound
    text formats in the default zone and Los Angeles (the read path is the same code)."""
    if fmt in ("text", "orc"):
        return ZONES[:1]
    if kind == "classic":
        return ZONES
    return ZONES[:2] if fmt in ("csv", "json") else ZONES[:1]


def _matrix() -> list[Any]:
    return [
        pytest.param(
            kind,
            fmt,
            zone,
            id=f"{kind}-{fmt}-{zone_name(zone)}",
            marks=() if (kind, fmt, zone) in FAST else pytest.mark.slow,
        )
        for kind in ("classic", "connect")
        for fmt in FORMATS
        for zone in zones_for(fmt, kind)
    ]


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_seed(tmp_path_factory.mktemp("corpus"))


# ``session`` is parametrized directly (not the shared fixture's two params), so each format
# runs only in the zones chosen for its session kind; the root conftest still orders the
# Connect items last by this parameter.
@pytest.mark.parametrize(("session", "fmt", "zone"), _matrix())
def test_format_matches_spark(
    session: str,
    fmt: str,
    zone: str | None,
    seed: Path,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    spark = request.getfixturevalue("spark" if session == "classic" else "connect_spark")
    with session_zone(spark, zone):
        name = zone_name(zone)
        cells = compare_format(spark, seed, fmt, tmp_path, name, session, DOCUMENTED)
        cells += not_applicable(fmt, name, session)
        if fmt == "orc":
            cells += compare_format(
                spark, seed, fmt, tmp_path / "in-range", name, session, DOCUMENTED, ORC_IN_RANGE
            )
    RESULTS.extend(cells)
    problems = failures(cells)
    assert not problems, "\n".join(problems)
