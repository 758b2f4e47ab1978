"""``./dev golden`` still records what is committed: two cases recorded again with the shared
Spark session into a temporary folder must equal their golden files (the answers, the inputs,
the zone). A case is recorded in the zone its golden file names, as on the machine that
recorded it; a change of Spark version shows here first."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from support.golden import golden_path, load, record
from support.golden_cases import GOLDEN
from support.record_golden import main

# One inferred csv read whose timestamps depend on the zone, one parse-mode case in a DST zone.
SAMPLE = ("infer-csv-inferschema", "modes-csv-in-america-los-angeles")


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("slug", SAMPLE)
def test_the_recorder_gives_the_committed_answers(spark: Any, tmp_path: Path, slug: str) -> None:
    case = next(c for c in GOLDEN if c.slug == slug)
    committed = load(case)
    path = record(spark, dataclasses.replace(case, zone=committed["zone"]), tmp_path)
    assert path == golden_path(case, tmp_path)
    fresh = json.loads(path.read_text(encoding="utf-8"))
    assert fresh["spark_version"] == spark.version
    for key in ("case", "format", "zone", "files", "reads"):
        assert fresh[key] == committed[key], f"{slug}: {key} differs from the golden file"
    assert path.read_text(encoding="utf-8").endswith("\n")


def test_the_command_refuses_an_unknown_case(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["no-such-case"])
    assert "unknown case(s) no-such-case" in capsys.readouterr().err
