"""Adds ``pysparksources-hint.pth`` at the root of the wheel; pyproject.toml says the rest.

The .pth file makes every start of an interpreter that has pysparksources import
``_pysparksources_hint``, which waits for PySpark to be imported before it wraps
``sys.excepthook``: when Spark fails because the Python it starts for its workers has no
pysparksources, the traceback ends with one line naming the fix
(src/_pysparksources_hint.py; ``PYSPARKSOURCES_NO_HINT=1`` turns it off). setuptools ships a
.pth at the root of the installation only through a build step, as its own
``distutils-precedence.pth`` does.
"""

from __future__ import annotations

import os

from setuptools import setup
from setuptools.command.build_py import build_py

PTH = "pysparksources-hint.pth"
# One line, run by the site module at start-up; guarded so that it never prints an error nor
# stops a start (even a Ctrl-C during the import ends only the hint).
PTH_LINE = 'import sys; exec("try: import _pysparksources_hint\\nexcept BaseException: pass")\n'


class BuildPyWithPth(build_py):
    """build_py, plus the .pth file (not in an editable install: a checkout's development
    environment runs without it; tests/core/test_cli_worker_python.py runs its line)."""

    def run(self) -> None:
        super().run()
        if not self.editable_mode:
            with open(os.path.join(self.build_lib, PTH), "w", encoding="utf-8") as file:
                file.write(PTH_LINE)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs: list[str] = super().get_outputs(include_bytecode)
        if self.editable_mode:
            return outputs
        return [*outputs, os.path.join(self.build_lib, PTH)]


setup(cmdclass={"build_py": BuildPyWithPth})
