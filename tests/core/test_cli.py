"""``pysparksources doctor`` in its own process. The README's main job, ``pysparksources demo``,
runs end to end from the installed wheel in tests/wheel/test_wheel_install.py."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from support.spark_processes import worker_env

pytestmark = pytest.mark.spark


def run_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pysparksources.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


@pytest.mark.slow
def test_doctor_passes_locally_and_against_a_connect_server(connect_server: object) -> None:
    env = worker_env()
    result = run_cli("doctor", "--connect", connect_server.url, env=env)  # type: ignore[attr-defined]
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert "[FAIL]" not in result.stdout
    for check in ("Java", "worker Python", "executors import the package", "Spark Connect"):
        assert f"[ok] {check}" in result.stdout
    assert "auto-registers: " in result.stdout and "pyrate" in result.stdout


def test_doctor_names_a_broken_worker_python_and_the_fix() -> None:
    result = run_cli("doctor", env=worker_env() | {"PYSPARK_PYTHON": "/bin/false"})
    assert result.returncode == 1
    assert "[FAIL] worker Python: PYSPARK_PYTHON = /bin/false" in result.stdout
    assert f"fix: export PYSPARK_PYTHON={sys.executable}" in result.stdout


def test_doctor_advises_the_readmes_python_and_no_package_index() -> None:
    """Started as the venv's ``python3``, the fix still names ``.venv/bin/python`` (the README's
    spelling), and the install it names is the checkout or the wheel: the package is on no
    index, so a bare ``pip install pysparksources`` would fail."""
    python3 = os.path.join(os.path.dirname(sys.executable), "python3")
    result = subprocess.run(
        [python3, "-m", "pysparksources.cli", "doctor"],
        capture_output=True,
        text=True,
        timeout=300,
        env=worker_env() | {"PYSPARK_PYTHON": "/bin/false"},
    )
    assert result.returncode == 1, result.stdout + result.stderr[-3000:]
    plain = os.path.join(os.path.dirname(sys.executable), "python")
    assert f"fix: export PYSPARK_PYTHON={plain} before Spark starts" in result.stdout
    assert "bin/python3" not in result.stdout.split("fix:", 1)[1]
    assert "pip install pysparksources " not in result.stdout
    assert 'pip install "./packages/pysparksources" in a clone of the repository' in result.stdout
