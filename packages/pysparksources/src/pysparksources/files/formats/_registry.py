"""The formats: every module of this package whose name does not start with ``_``.

Each such module defines ``FORMAT``, its :class:`FileFormat`; they are found here at import, so
adding a format is adding its module. The ``_`` modules are what formats share.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

from pysparksources.errors import OptionError
from pysparksources.files import NAME
from pysparksources.files.formats._file_format import FileFormat, WritableFormat

__all__ = ["FORMATS", "READ_FORMATS", "WRITE_FORMATS", "format_named", "writable_format_named"]


def _found() -> tuple[FileFormat, ...]:
    # The package is being imported (this module is imported from it), so its path is known.
    package = sys.modules[__package__]
    formats = []
    for module in pkgutil.iter_modules(package.__path__):
        if module.name.startswith("_"):
            continue
        found = getattr(importlib.import_module(f"{__package__}.{module.name}"), "FORMAT", None)
        if not isinstance(found, FileFormat) or found.name != module.name:
            raise TypeError(
                f"{__package__}.{module.name} must define FORMAT, a FileFormat named "
                f"{module.name!r} (modules of formats/ are formats; helpers start with '_')"
            )
        formats.append(found)
    return tuple(sorted(formats, key=lambda fmt: (fmt.listed, fmt.name)))


FORMATS = _found()
READ_FORMATS = tuple(fmt.name for fmt in FORMATS)
WRITE_FORMATS = tuple(fmt.name for fmt in FORMATS if isinstance(fmt, WritableFormat))
_BY_NAME = {fmt.name: fmt for fmt in FORMATS}


def format_named(name: str) -> FileFormat:
    """The format a ``format`` option names (the parser has checked it is one)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        expected = "expected one of " + ", ".join(READ_FORMATS)
        raise OptionError.invalid(NAME, "format", expected, name) from None


def writable_format_named(name: str) -> WritableFormat:
    """The format a sink's ``format`` option names (the parser has checked it is one)."""
    found = _BY_NAME.get(name)
    if not isinstance(found, WritableFormat):
        expected = "expected one of " + ", ".join(WRITE_FORMATS)
        raise OptionError.invalid(NAME, "format", expected, name)
    return found
