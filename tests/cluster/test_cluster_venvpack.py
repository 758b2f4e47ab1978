"""The packed-venv recipe on the standalone cluster, and ``pysparksources doctor --master``.

The venv is a fresh one with the package installed from its wheel (never this checkout), packed
with venv-pack and shipped with ``--archives venv.tar#environment``; the executors run
``./environment/bin/python`` from their own unpacked copy.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.paths import PRODUCT, ROOT
from support.spark_processes import StandaloneCluster, spark_home, users_worker_env

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def packed_venv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the venv's python, its venv-pack archive): pip install of the wheel, then venv-pack."""
    work = tmp_path_factory.mktemp("venvpack")
    run = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(work), str(PRODUCT)]
    subprocess.run(run, check=True, capture_output=True)
    wheel = next(work.glob("pysparksources-*.whl"))
    base = Path(sys.base_prefix) / "bin" / "python3"  # a venv of this venv's own interpreter
    subprocess.run([base, "-m", "venv", work / "venv"], check=True, capture_output=True)
    python = work / "venv" / "bin" / "python"
    install = subprocess.run(
        [python, "-m", "pip", "install", "-q", str(wheel)], capture_output=True, text=True
    )
    assert install.returncode == 0, install.stderr[-3000:]
    venv_pack = shutil.which("venv-pack", path=str(Path(sys.executable).parent))
    assert venv_pack, "venv-pack is in the dev extra: pip install -e '.[dev]'"
    # .tar.gz, not .tar: Spark unpacks a plain .tar with Hadoop's Java untar, which drops the
    # execute bits and refuses bin/python3 (a link to the base interpreter, outside the folder).
    archive = work / "venv.tar.gz"
    pack = [venv_pack, "-p", work / "venv", "-o", archive, "--compress-level", "1"]
    subprocess.run(pack, check=True, capture_output=True)
    return python, archive


def test_executors_run_the_package_from_the_packed_venv(
    cluster: StandaloneCluster, packed_venv: tuple[Path, Path], tmp_path: Path
) -> None:
    python, archive = packed_venv
    submit = [str(spark_home() / "bin" / "spark-submit"), "--master", cluster.url]
    submit += ["--archives", f"{archive}#environment"]
    submit += ["--conf", "spark.pyspark.python=./environment/bin/python"]
    submit += ["--conf", f"spark.pyspark.driver.python={python}"]
    # The job asserts both executors ran tasks: schedule it once both (2 cores) registered.
    submit += [
        "--conf",
        "spark.cores.max=2",
        "--conf",
        "spark.scheduler.minRegisteredResourcesRatio=1",
    ]
    submit += ["--conf", "spark.scheduler.maxRegisteredResourcesWaitingTime=120s"]
    submit.append(str(Path(__file__).parent / "venv_driver.py"))
    env = users_worker_env() | {"PYSPARK_PYTHON": "./environment/bin/python"}
    env["PYSPARK_DRIVER_PYTHON"] = str(python)
    result = subprocess.run(
        submit, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert result.returncode == 0 and lines, result.stdout + result.stderr[-4000:]
    outcome = json.loads(lines[-1][len("RESULT ") :])
    assert outcome["ok"]
    origins = outcome["origins"]
    assert len({cwd for cwd, _, _ in origins}) == 2, origins  # both executors ran tasks
    for cwd, executable, module in origins:
        unpacked = Path(cwd) / "environment"
        assert executable == str(unpacked / "bin" / "python"), origins
        assert Path(module).is_relative_to(unpacked.resolve()), origins  # not the checkout
        assert not Path(module).is_relative_to(ROOT), origins


def test_doctor_sees_the_executors_import_the_package(cluster: StandaloneCluster) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pysparksources.cli", "doctor", "--master", cluster.url],
        capture_output=True,
        text=True,
        timeout=300,
        env=users_worker_env(),
    )
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert f"[ok] {cluster.url}: Spark" in result.stdout, result.stdout
    assert "[ok] executors import the package: versions seen: ['" in result.stdout, result.stdout
