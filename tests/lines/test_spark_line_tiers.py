"""The older Spark lines' tiers, run from the main suite (support/spark_lines.py).

Each tier is a pytest run of its own, in a cached virtual environment with that line's PySpark
(4.0 also with every dependency at its floor): the tests marked ``lines`` must pass there as
they do here. The refusal tier checks that PySpark 3.5 gets one line naming both versions from
every way in: the shims, ``register()`` and ``doctor``.
"""

from __future__ import annotations

import subprocess
import textwrap

import pytest

from support.paths import ROOT
from support.spark_lines import LINES, REFUSED, prepared_venv, run_tier, tier_env

pytestmark = [pytest.mark.slow, pytest.mark.spark]


@pytest.mark.parametrize("name", sorted(LINES))
def test_the_lines_subset_passes_on_this_spark_line(name: str) -> None:
    result = run_tier(LINES[name], "-q", "-p", "no:cacheprovider", "--durations=5")
    assert result.returncode == 0, f"the {name} tier failed:\n{result.stdout[-8000:]}"
    assert " passed" in result.stdout.splitlines()[-1], result.stdout[-2000:]


REFUSAL_CHECK = textwrap.dedent(
    """
    import sys
    import pysparksources
    from pysparksources.errors import UnsupportedSparkError
    messages = []
    for attempt in (
        lambda: __import__("pyspark_pyrate"),
        lambda: __import__("pyspark_pyeventhub"),
        lambda: pysparksources.register(None),
    ):
        try:
            attempt()
        except UnsupportedSparkError as error:
            messages.append(str(error))
    print("\\n".join(messages))
    """
)


def test_spark_3_gets_one_line_naming_both_versions() -> None:
    with prepared_venv(REFUSED, full=False) as venv:
        env = tier_env(venv)
        python = str(venv / "bin" / "python")
        checked = subprocess.run(
            [python, "-c", REFUSAL_CHECK], cwd=ROOT, env=env, capture_output=True, text=True
        )
        doctor = subprocess.run(
            [str(venv / "bin" / "pysparksources"), "doctor"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert checked.returncode == 0, checked.stderr
    messages = checked.stdout.splitlines()
    expected = (
        f"pysparksources: this Python has PySpark {REFUSED.pyspark}; pysparksources needs "
        "PySpark 4.0 or newer (any 4.x line): pip install 'pyspark[connect]>=4.0,<5', or run "
        "on a Spark 4 cluster"
    )
    assert messages == [expected] * 3, checked.stdout
    assert doctor.returncode == 1
    assert f"[FAIL] Spark: this Python has PySpark {REFUSED.pyspark}" in doctor.stdout
    assert "pysparksources[" not in checked.stdout + doctor.stdout, "advice to install an extra"
