"""Where things are in the repository, so no test counts ``parents[...]`` from its own folder."""

from __future__ import annotations

from pathlib import Path

__all__ = ["DOCS", "EMULATOR", "EXAMPLES", "PRODUCT", "README", "ROOT", "TESTS"]

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
PRODUCT = ROOT / "packages" / "pysparksources"  # the product distribution's project folder
EMULATOR = ROOT / "packages" / "pysparksources-emulator"
DOCS = ROOT / "docs"
EXAMPLES = ROOT / "examples"
README = ROOT / "README.md"
