"""pyfile's format modules, inference and parse modes against Spark's recorded answers.

No JVM: each golden file's inputs go to fsspec's ``memory://``, pyfile's batch reader runs in
this process as Spark drives it (``schema()`` when none is given, then the reader's partitions
and batches), in the session zone Spark answered in, and the schema and the canonical rows must
equal Spark's (tests/support/golden.py says how values are made comparable). Where Spark failed
(FAILFAST), pyfile must fail too, naming the file. ``./dev golden`` re-records the answers;
test_golden_recorder.py checks that the recorder still gives the committed ones.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pysparksources.errors import CorruptFileError
from support.golden import in_process_read, in_zone, load, stage_in_memory
from support.golden_cases import GOLDEN, GoldenCase
from support.memory_fs import memory_root

__all__ = ["memory_root"]  # a fixture the tests below take


def _first_difference(expected: list[Any], got: list[Any]) -> str:
    missing = [row for row in expected if row not in got]
    extra = [row for row in got if row not in expected]
    shown = [f"  only Spark's:  {json.dumps(r)[:200]}" for r in missing[:5]]
    shown += [f"  only pyfile's: {json.dumps(r)[:200]}" for r in extra[:5]]
    return f"{len(got)} rows vs Spark's {len(expected)}\n" + "\n".join(shown)


def _describe(case: GoldenCase, read: dict[str, Any]) -> str:
    return f"{case.slug} with {read['options']}"


@pytest.mark.parametrize("case", GOLDEN, ids=[c.slug for c in GOLDEN])
def test_pyfile_reads_as_spark_answered(case: GoldenCase, memory_root: str) -> None:
    golden = load(case)
    url = stage_in_memory(golden, memory_root)
    with in_zone(golden["zone"]):
        for read in golden["reads"]:
            what, answer = _describe(case, read), read["spark"]
            if "error" in answer:
                with pytest.raises(CorruptFileError) as caught:
                    in_process_read(url, case.fmt, read["options"], read["schema"])
                message = str(caught.value)
                assert any(name in message for name in golden["files"]), (what, message)
                assert "mode=PERMISSIVE keeps malformed records" in message, (what, message)
                continue
            expected_schema = read["schema"] or answer["schema"]
            schema, rows = in_process_read(
                url, case.fmt, read["options"], read["schema"], expected_schema
            )
            assert schema.simpleString() == answer["simple"], what
            assert rows == answer["rows"], f"{what}: {_first_difference(answer['rows'], rows)}"


def test_every_golden_case_has_its_file_and_every_file_a_case() -> None:
    from support.golden import GOLDEN_DIR

    recorded = {path.stem for path in GOLDEN_DIR.glob("*.json")}
    assert recorded == {case.slug for case in GOLDEN}
