"""The install command a fix names. pysparksources is not on a package index, so a bare
``pip install pysparksources[extra]`` fails; the hint names the checkout's folder (or the built
wheel) as the README's Install section does."""

from __future__ import annotations

__all__ = ["pip_install"]

_FOLDERS = {
    "pysparksources": "./packages/pysparksources",
    "pysparksources-emulator": "./packages/pysparksources-emulator",
}


def pip_install(distribution: str = "pysparksources", extra: str = "") -> str:
    """``pip install "./packages/<distribution>[extra]"`` in a clone, or the wheel (README)."""
    suffix = f"[{extra}]" if extra else ""
    return (
        f'pip install "{_FOLDERS[distribution]}{suffix}" in a clone of the repository, or its '
        f"wheel{suffix and ' with ' + suffix} (README: Install)"
    )
