"""Plug-ins that are modules: every public module of a package declares one, under one name.

pyfile's formats and its notification queues are found this way, so adding one is adding its
module; a module that forgets the declaration, or declares one named otherwise, fails the
import naming itself.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Callable
from typing import TypeVar, cast

__all__ = ["declared_by_modules"]

T = TypeVar("T")


def declared_by_modules(
    package: str, attribute: str, kind: type[object], name_of: Callable[[T], str], what: str
) -> list[T]:
    """The ``attribute`` of each module of ``package`` (already being imported) whose name does
    not start with ``_``: an instance of ``kind`` whose ``name_of`` is the module's name.

    ``what`` names the declaration in the error (``"a FileFormat named"``)."""
    found: list[T] = []
    for module in pkgutil.iter_modules(sys.modules[package].__path__):
        if module.name.startswith("_"):
            continue
        value = getattr(importlib.import_module(f"{package}.{module.name}"), attribute, None)
        # ``kind`` may be abstract (FileFormat), which mypy refuses as a type[T].
        if not isinstance(value, kind) or name_of(cast(T, value)) != module.name:
            raise TypeError(
                f"{package}.{module.name} must define {attribute}, {what} {module.name!r} "
                f"(modules of {package.rsplit('.', 1)[-1]}/ are {attribute.lower()}s; "
                "helpers start with '_')"
            )
        found.append(cast(T, value))
    return found
