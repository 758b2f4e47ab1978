"""The formats: every module of this package whose name does not start with ``_``.

Each such module defines ``FORMAT``, its :class:`FileFormat`; they are found here at import, so
adding a format is adding its module. The ``_`` modules are what formats share.
"""

from __future__ import annotations

from pysparksources._core.module_plugins import declared_by_modules
from pysparksources.errors import OptionError
from pysparksources.files import NAME
from pysparksources.files.formats._file_format import FileFormat, WritableFormat

__all__ = ["FORMATS", "READ_FORMATS", "WRITE_FORMATS", "format_named", "writable_format_named"]


def _found() -> tuple[FileFormat, ...]:
    # The package is being imported (this module is imported from it), so its path is known.
    formats: list[FileFormat] = declared_by_modules(
        __package__, "FORMAT", FileFormat, lambda fmt: fmt.name, "a FileFormat named"
    )
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
