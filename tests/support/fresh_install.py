"""The user's install, built once per test run: both distributions (the product and the Event
Hubs emulator, sdist and wheel each) installed into a fresh virtual environment that is never
activated.

The environment grows in three steps, each recorded before the next: the product alone, with
``[spark,eventhubs]``, then with ``[demo,pipelines]``, whose ``pysparksources-emulator`` pip takes
from the emulator's wheel given next to it (``pipelines`` adds PyYAML, which ``spark-pipelines``
needs: tests/examples runs the pipelines example with it). Commands run from a folder outside
the checkout with PYSPARK_PYTHON unset and neither this environment nor the fresh one on PATH,
so Spark's default worker Python is PATH's python3, which has no pysparksources: exactly a
newcomer's ``venv/bin/python app.py``. tests/conftest.py shares it as the session fixture
``fresh``; the tests that use it carry the ``wheel`` marker, so pytest-xdist runs them in one
process and the builds happen once.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from support.paths import EMULATOR, PRODUCT

__all__ = ["STEPS", "Dists", "FreshInstall", "fresh_install"]

# Spark and connect-mode markers an outer session may have left; PYTHONPATH would leak the
# checkout into the fresh environment.
DROPPED = {
    "PYSPARK_PYTHON",
    "PYSPARK_DRIVER_PYTHON",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "SPARK_HOME",
    "SPARK_CONNECT_MODE_ENABLED",
    "SPARK_REMOTE",
    "SPARK_LOCAL_REMOTE",
}

# The installation steps: pip arguments after the product's wheel file's name. The last one
# also installs the `pipelines` extra in the same pip run (one step less to pay for).
STEPS = {"alone": "", "spark,eventhubs": "[spark,eventhubs]", "demo": "[demo,pipelines]"}


@dataclass(frozen=True)
class Dists:
    """The four files the builds made."""

    product_wheel: Path
    product_sdist: Path
    emulator_wheel: Path
    emulator_sdist: Path


@dataclass(frozen=True)
class FreshInstall:
    venv: Path
    workdir: Path  # outside the checkout
    env: dict[str, str]  # PYSPARK_PYTHON unset, no virtual environment on PATH
    dists: Dists
    installed: dict[str, set[str]]  # step -> the distributions in the venv after it
    bare_demo: subprocess.CompletedProcess[str]  # `pysparksources demo` after step "alone"
    bare_demo_seconds: float

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    def command(self, name: str) -> str:
        return str(self.venv / "bin" / name)

    def run(
        self, *args: str, timeout: float = 300, cwd: Path | None = None, **extra_env: str
    ) -> subprocess.CompletedProcess[str]:
        """``args`` from ``cwd`` (default: the work folder) with ``env`` and ``extra_env``."""
        return subprocess.run(
            list(args),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd or self.workdir,
            env=self.env | extra_env,
        )

    def script(self, code: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
        return self.run(self.python, "-c", textwrap.dedent(code), **extra_env)


def _path_without_virtual_environments(*venvs: Path) -> str:
    bins = {os.path.realpath(Path(sys.executable).parent)} | {
        os.path.realpath(v / "bin") for v in venvs
    }
    kept = [p for p in os.environ["PATH"].split(os.pathsep) if os.path.realpath(p) not in bins]
    return os.pathsep.join(kept)


def _timed(label: str, timings: dict[str, float], cmd: list[str], **kwargs: object) -> None:
    start = time.monotonic()
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    timings[label] = time.monotonic() - start
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


def _build_both(dist: Path, timings: dict[str, float]) -> Dists:
    """``python -m build`` of both projects at once: the sdist, then the wheel from the sdist
    (so both must be complete)."""
    start = time.monotonic()
    builds = {
        project: subprocess.Popen(
            [sys.executable, "-m", "build", "--outdir", str(dist), str(project)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for project in (PRODUCT, EMULATOR)
    }
    for project, build in builds.items():
        output, _ = build.communicate(timeout=600)
        assert build.returncode == 0, f"{project}:\n{output[-3000:]}"
    timings["build both"] = time.monotonic() - start

    def one(pattern: str) -> Path:
        found = sorted(dist.glob(pattern))
        assert len(found) == 1, (pattern, sorted(dist.iterdir()))
        return found[0]

    return Dists(
        product_wheel=one("pysparksources-*.whl"),
        product_sdist=one("pysparksources-*.tar.gz"),
        emulator_wheel=one("pysparksources_emulator-*.whl"),
        emulator_sdist=one("pysparksources_emulator-*.tar.gz"),
    )


def _installed(python: Path) -> set[str]:
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "list", "--format=json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return {entry["name"].lower().replace("_", "-") for entry in json.loads(listed.stdout)}


def fresh_install(base: Path) -> Iterator[FreshInstall]:
    """Build, install and yield the fresh environment under ``base``; remove it afterwards."""
    timings: dict[str, float] = {}
    dists = _build_both(base / "dist", timings)
    venv = base / "venv"
    python = venv / "bin" / "python"
    workdir = base / "work"
    workdir.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in DROPPED}
    env["PATH"] = _path_without_virtual_environments(venv)
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    # No pip inside: this environment's pip installs into it (pip --python), which saves
    # bootstrapping pip. Bytecode is compiled as usual: without it every first Python worker
    # compiles PySpark and can miss Spark's 10 s connect-back deadline on a loaded machine.
    _timed("venv", timings, [sys.executable, "-m", "venv", "--without-pip", str(venv)])
    installed: dict[str, set[str]] = {}
    bare_demo: subprocess.CompletedProcess[str] | None = None
    bare_demo_seconds = 0.0
    for step, extras in STEPS.items():
        # The emulator's wheel goes along only with the extra that needs it: pip must take
        # `pysparksources-emulator` from that file (it is on no index).
        extra_files = [str(dists.emulator_wheel)] if step == "demo" else []
        _timed(
            f"install {step}",
            timings,
            [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
             f"{dists.product_wheel}{extras}", *extra_files],
            timeout=900,
        )  # fmt: skip
        installed[step] = _installed(python)
        if step == "alone":
            start = time.monotonic()
            bare_demo = subprocess.run(
                [str(venv / "bin" / "pysparksources"), "demo"],
                capture_output=True,
                text=True,
                timeout=120,
                cwd=workdir,
                env=env | {"PYSPARK_PYTHON": str(python)},  # so the only line is the demo's
            )
            bare_demo_seconds = time.monotonic() - start
    print("wheel smoke setup:", ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()))
    assert bare_demo is not None
    yield FreshInstall(venv, workdir, env, dists, installed, bare_demo, bare_demo_seconds)
    shutil.rmtree(base, ignore_errors=True)
