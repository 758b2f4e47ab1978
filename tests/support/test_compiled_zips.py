"""The cluster's SPARK_HOME (tests/support/compiled_zips.py): Spark's layout, zips compiled."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from support.compiled_zips import compiled_zip_spark_home


def _installed_pyspark(tmp_path: Path) -> Path:
    package = tmp_path / "site-packages" / "pyspark"
    for folder in ("bin", "jars", "python/pyspark", "python/lib"):
        (package / folder).mkdir(parents=True)
    (package / "python" / "lib" / "README").write_text("not a zip\n")
    with zipfile.ZipFile(package / "python" / "lib" / "pyspark.zip", "w") as archive:
        archive.writestr("fakespark/__init__.py", "")
        archive.writestr("fakespark/answer.py", "def value():\n    return 42\n")
        archive.writestr("fakespark/broken.py", "def (:\n")  # Python reports it on import
    return package


def test_zips_gain_bytecode_and_everything_else_is_linked(tmp_path: Path) -> None:
    package = _installed_pyspark(tmp_path)
    mirror = compiled_zip_spark_home(package, tmp_path / "layout")
    assert (mirror / "bin").resolve() == (package / "bin").resolve()
    assert (mirror / "python" / "pyspark").resolve() == (package / "python" / "pyspark").resolve()
    assert (mirror / "python" / "lib" / "README").resolve().parent == package / "python" / "lib"
    with zipfile.ZipFile(mirror / "python" / "lib" / "pyspark.zip") as archive:
        names = set(archive.namelist())
    assert {"fakespark/answer.py", "fakespark/answer.pyc", "fakespark/__init__.pyc"} <= names
    assert "fakespark/broken.pyc" not in names
    assert compiled_zip_spark_home(package, tmp_path / "layout") == mirror  # built once


def test_python_imports_the_bytecode_from_the_zip(tmp_path: Path) -> None:
    mirror = compiled_zip_spark_home(_installed_pyspark(tmp_path), tmp_path / "layout")
    code = "import fakespark.answer as a; print(a.__file__, a.value())"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": str(mirror / "python" / "lib" / "pyspark.zip")},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert out[0].endswith("pyspark.zip/fakespark/answer.pyc"), out
    assert out[1] == "42"
