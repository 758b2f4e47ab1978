"""A SPARK_HOME for the cluster tests: Spark's own layout, with bytecode in its Python zips.

The cluster's processes keep Spark's layout, as a user's cluster has it: ``pyspark.zip`` first
on every Python worker's path, and a packed venv without PySpark
(tests/cluster/test_cluster_venvpack.py) imports PySpark from nowhere else. Python reads
bytecode from a zip but never writes it there, so every new interpreter compiled PySpark
again: importing the streaming source runner took 1.05-1.12 s of CPU from Spark's zip and
0.51-0.54 s from the same zip with compiled modules beside the sources (3 cold interpreters
each, 2026-11-26).

The mirror links everything of the installed package except ``python/lib``, whose zips are
copies holding a checked-hash ``.pyc`` beside each module. Python checks each against the
source in the zip and compiles the source as before where they differ; another Python
version ignores them (its magic number differs).
"""

from __future__ import annotations

import os
import py_compile
import shutil
import tempfile
import warnings
import zipfile
from pathlib import Path

from support.spark_home import (
    KEEP_ZIP_VARIABLE,
    LAYOUT_VARIABLE,
    link_all_but_python_lib,
    locked,
)

MIRROR_NAME = "spark-home-compiled-zips"


def cluster_spark_home() -> Path | None:
    """The mirror in this run's layout folder, built on first use; None outside a layout."""
    folder = os.environ.get(LAYOUT_VARIABLE)
    if folder is None or os.environ.get(KEEP_ZIP_VARIABLE) == "1":
        return None
    from benchmarks.cluster import spark_home

    root = Path(folder)
    with locked(root / ".lock"):
        return compiled_zip_spark_home(spark_home(), root)


def compiled_zip_spark_home(installed: Path, root: Path) -> Path:
    """``root/spark-home-compiled-zips`` for ``installed`` (built unless it exists)."""
    mirror = root / MIRROR_NAME
    if mirror.is_dir():
        return mirror
    partial = root / f"{MIRROR_NAME}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    link_all_but_python_lib(installed, partial)
    (partial / "python" / "lib").mkdir()
    for entry in (installed / "python" / "lib").iterdir():
        target = partial / "python" / "lib" / entry.name
        if entry.suffix == ".zip":
            _compile_zip(entry, target, shown_as=mirror / "python" / "lib" / entry.name)
        else:
            target.symlink_to(entry)
    partial.rename(mirror)
    return mirror


def _compile_zip(source: Path, target: Path, shown_as: Path) -> None:
    """Copy ``source`` to ``target`` with ``module.pyc`` beside each ``module.py``.

    ``shown_as`` is the zip's final path, which tracebacks name as Python would.
    """
    with (
        tempfile.TemporaryDirectory() as scratch,
        zipfile.ZipFile(source) as original,
        zipfile.ZipFile(target, "w") as compiled,
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")  # PySpark's own tests carry SyntaxWarnings
        for info in original.infolist():
            data = original.read(info)
            compiled.writestr(info, data)
            if info.is_dir() or not info.filename.endswith(".py"):
                continue
            module = Path(scratch) / info.filename
            module.parent.mkdir(parents=True, exist_ok=True)
            module.write_bytes(data)
            try:
                py_compile.compile(
                    str(module),
                    cfile=str(module.with_suffix(".pyc")),
                    dfile=f"{shown_as}/{info.filename}",
                    doraise=True,
                    invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
                )
            except py_compile.PyCompileError:
                continue  # left to the import, which reports it as it would from Spark's zip
            compiled.write(module.with_suffix(".pyc"), info.filename[:-3] + ".pyc")
