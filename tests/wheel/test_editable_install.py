"""A plain ``pip install -e .`` (setuptools' default editable mode) keeps automatic registration:
Spark finds the ``pyspark_*`` shims with ``pkgutil.iter_modules``, which sees only sys.path
folders, not the import hooks setuptools uses for flat layouts unless told the package root
(``package-dir`` in pyproject.toml)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.paths import PRODUCT

pytestmark = pytest.mark.wheel

LIST_SHIMS = (
    "import pkgutil; "
    "print(sorted(m.name for m in pkgutil.iter_modules() if m.name.startswith('pyspark_')))"
)


def test_default_editable_install_exposes_the_shims_to_sparks_lookup(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps",
         "-e", str(PRODUCT)],
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert install.returncode == 0, install.stdout + install.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    listed = subprocess.run(
        [python, "-c", LIST_SHIMS], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.strip() == "['pyspark_pyeventhub', 'pyspark_pyfile', 'pyspark_pyrate']"
