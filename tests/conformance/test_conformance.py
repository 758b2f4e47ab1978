"""pyfile vs Spark's own file reader and writer, on the corpus, in every format and zone."""

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


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_seed(tmp_path_factory.mktemp("corpus"))


def _kind(request: pytest.FixtureRequest) -> str:
    return str(request.node.callspec.params.get("session", "classic"))


def zones_for(fmt: str, kind: str) -> tuple[str | None, ...]:
    """The zones worth the time: text and ORC do not depend on the session zone (ORC depends
    on the JVM's, see test_jvm_zone.py), so they run in the default zone; csv and json render
    and parse zones, parquet had the tagged-timestamp bug. Connect runs the zone-bound text
    formats in the default zone and Los Angeles (the read path is the same code)."""
    if fmt in ("text", "orc"):
        return ZONES[:1]
    if kind == "classic":
        return ZONES
    return ZONES[:2] if fmt in ("csv", "json") else ZONES[:1]


@pytest.mark.parametrize("fmt", FORMATS)
def test_format_matches_spark_in_every_zone(
    session: Any, seed: Path, tmp_path: Path, fmt: str, request: pytest.FixtureRequest
) -> None:
    kind = _kind(request)
    cells = []
    for zone in zones_for(fmt, kind):
        with session_zone(session, zone):
            name = zone_name(zone)
            work = tmp_path / name
            cells += compare_format(session, seed, fmt, work, name, kind, DOCUMENTED)
            cells += not_applicable(fmt, name, kind)
            if fmt == "orc":
                cells += compare_format(
                    session, seed, fmt, work / "in-range", name, kind, DOCUMENTED, ORC_IN_RANGE
                )
    RESULTS.extend(cells)
    problems = failures(cells)
    assert not problems, "\n".join(problems)
