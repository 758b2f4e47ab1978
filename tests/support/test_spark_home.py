"""The zip-free SPARK_HOME the tests run on (tests/support/spark_home.py)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from support.spark_home import zip_free_spark_home


def _installed_pyspark(tmp_path: Path, zipped: dict[str, str], installed: dict[str, str]) -> Path:
    """A fake installed package: ``site-packages/pyspark`` with bin/, jars/ and python/lib zip."""
    package = tmp_path / "site-packages" / "pyspark"
    for name, text in installed.items():
        (package.parent / name).parent.mkdir(parents=True, exist_ok=True)
        (package.parent / name).write_text(text)
    for folder in ("bin", "jars", "python/pyspark", "python/lib"):
        (package / folder).mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(package / "python" / "lib" / "pyspark.zip", "w") as archive:
        for name, text in zipped.items():
            archive.writestr(name, text)
    return package


def test_mirror_links_everything_but_the_zips(tmp_path: Path) -> None:
    modules = {"pyspark/__init__.py": "A = 1\n", "pyspark/sql/x.py": "B = 2\n"}
    zipped = modules | {"pyspark/sql/tests/test_x.py": "pass\n"}  # the wheel drops tests
    package = _installed_pyspark(tmp_path, zipped, modules)
    mirror = zip_free_spark_home(package, tmp_path / "mirror")
    assert mirror is not None
    assert (mirror / "bin").resolve() == (package / "bin").resolve()
    assert (mirror / "jars").resolve() == (package / "jars").resolve()
    assert (mirror / "python" / "pyspark").is_dir()
    assert not (mirror / "python" / "lib").exists()


@pytest.mark.parametrize(
    "installed",
    [
        {"pyspark/__init__.py": "A = 1\n"},  # a module the zip has is not installed
        {"pyspark/__init__.py": "A = 1\n", "pyspark/sql/x.py": "B = 3\n"},  # or differs
    ],
)
def test_spark_layout_stays_when_the_zip_differs(tmp_path: Path, installed: dict[str, str]) -> None:
    zipped = {"pyspark/__init__.py": "A = 1\n", "pyspark/sql/x.py": "B = 2\n"}
    package = _installed_pyspark(tmp_path, zipped, installed)
    assert zip_free_spark_home(package, tmp_path / "mirror") is None


def test_spark_layout_stays_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    modules = {"pyspark/__init__.py": "A = 1\n"}
    package = _installed_pyspark(tmp_path, modules, modules)
    monkeypatch.setenv("PYSPARKSOURCES_TEST_PYSPARK_ZIP", "1")
    assert zip_free_spark_home(package, tmp_path / "mirror") is None
