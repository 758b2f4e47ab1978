"""The file formats pyfile reads and writes: one module each, found by the registry.

Every module here whose name does not start with ``_`` (``csv.py``, ``parquet.py``...) is a
format: it defines ``FORMAT``, a :class:`FileFormat` (``_file_format``): what the format is, and
how it is checked, inferred, read (plainly, past malformed records, by its own columns for
rescue) and written. The ``_``
modules are what formats share: reading one split (``_read_split``), reading past malformed
records (``_tolerant``), footers (``_columnar``), csv records, JSON values, sampled text, ORC's
internals. This package's face is what the rest of pyfile uses.
"""

from pysparksources.files.formats._file_format import (
    CONVERSION_ERRORS,
    STREAM_COMPRESSORS,
    FileFormat,
    FileSplit,
    Fitter,
    PartWriter,
    Sample,
    WritableFormat,
)
from pysparksources.files.formats._read_split import constant_column, read_split
from pysparksources.files.formats._registry import (
    FORMATS,
    READ_FORMATS,
    WRITE_FORMATS,
    format_named,
    writable_format_named,
)

__all__ = [
    "CONVERSION_ERRORS",
    "FORMATS",
    "READ_FORMATS",
    "STREAM_COMPRESSORS",
    "WRITE_FORMATS",
    "FileFormat",
    "FileSplit",
    "Fitter",
    "PartWriter",
    "Sample",
    "WritableFormat",
    "constant_column",
    "format_named",
    "read_split",
    "writable_format_named",
]
