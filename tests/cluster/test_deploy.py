"""The deployment recipes of docs/deploying.md, run against the standalone cluster.

The "bare" interpreter has PySpark and its dependencies but not pysparksources, like a node
where nobody ran pip install: the package must arrive the way each recipe ships it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import venv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.paths import PRODUCT
from support.spark_processes import ConnectServer, StandaloneCluster, spark_home, users_worker_env

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv that sees this environment's site-packages but not the pysparksources checkout."""
    home = tmp_path_factory.mktemp("bare")
    venv.create(home / "venv", with_pip=False)
    python = home / "venv" / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # A path line in a .pth adds the directory without running its own .pth files, so the
    # editable install's pointer to this checkout is not followed.
    Path(site, "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    probe = subprocess.run(
        [python, "-c", "import pyspark, pyarrow, numpy\nimport pysparksources"],
        capture_output=True,
        text=True,
        cwd=home,
    )
    assert "No module named 'pysparksources'" in probe.stderr, probe.stderr
    return python


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(PRODUCT)],
        check=True,
        capture_output=True,
    )
    return next(out.glob("pysparksources-*.whl"))


def bare_env(python: Path) -> dict[str, str]:
    env = users_worker_env()
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = str(python)
    return env


def test_spark_submit_py_files_ships_the_wheel(
    cluster: StandaloneCluster, bare_python: Path, wheel: Path, tmp_path: Path
) -> None:
    driver = tmp_path / "driver.py"
    driver.write_text((Path(__file__).parent / "deploy_driver.py").read_text())
    submit = [str(spark_home() / "bin" / "spark-submit"), "--master", cluster.url]
    # Python data sources run in Python workers that Spark starts without the --py-files
    # includes: put the wheel on the driver's PYTHONPATH, and on the executors' (where
    # --py-files has fetched it into the executor's working directory).
    submit += ["--py-files", str(wheel)]
    submit += ["--conf", f"spark.executorEnv.PYTHONPATH={wheel.name}", str(driver)]
    env = bare_env(bare_python) | {"PYTHONPATH": str(wheel)}
    result = subprocess.run(
        submit, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert result.returncode == 0 and lines, result.stdout + result.stderr[-4000:]
    outcome = json.loads(lines[-1][7:])
    assert outcome["ok"]
    # Spark's lookup of pyspark_* modules also scans the wheel on the driver's Python path.
    assert outcome["auto"] is True


@pytest.fixture(scope="module")
def bare_connect(
    cluster: StandaloneCluster, bare_python: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    from pyspark.sql import SparkSession

    workdir = tmp_path_factory.mktemp("bare-connect")
    server = ConnectServer(workdir, master=cluster.url, env=bare_env(bare_python))
    session = SparkSession.builder.remote(server.url).create()
    yield session
    session.stop()
    server.stop()


def test_connect_add_artifacts_ships_the_wheel(
    bare_connect: Any, wheel: Path, tmp_path: Path
) -> None:
    import pysparksources

    with pytest.raises(Exception, match="pyrate"):
        bare_connect.read.format("pyrate").option("totalRows", 2).load().count()
    # addArtifacts(pyfile=True) takes .py, .zip and .egg files; a wheel is a zip archive.
    archive = tmp_path / "pysparksources.zip"
    archive.write_bytes(wheel.read_bytes())
    bare_connect.addArtifacts(str(archive), pyfile=True)
    pysparksources.register(bare_connect)
    df = bare_connect.read.format("pyrate").options(totalRows="1000", numPartitions="4").load()
    assert sorted(r.value for r in df.collect()) == list(range(1000))
