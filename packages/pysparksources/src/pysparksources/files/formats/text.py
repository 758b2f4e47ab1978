"""text: one STRING column (``value``), a row per line, or one per file with ``wholetext``.

Lines are split on ``\\n``, ``\\r\\n`` and ``\\r`` (Spark's default) or on ``lineSep``, read a
block at a time; a file is read by one task. The sink writes one STRING column, a line per row.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.types import StringType, StructField, StructType

from pysparksources.errors import OptionError
from pysparksources.files import NAME
from pysparksources.files.formats._file_format import (
    BLOCK_BYTES,
    WHOLE_FILE_CODECS,
    Batch,
    FileSplit,
    Fitter,
    PartWriter,
    Sample,
    WritableFormat,
)
from pysparksources.files.values.rendering import concatenated

if TYPE_CHECKING:
    from pysparksources.files.config import ReaderOptions, SinkConfig
    from pysparksources.files.storage.folder_listing import FileEntry

__all__ = ["FORMAT", "Text"]


class Text(WritableFormat):
    name = "text"
    listed = 30
    title = "text"
    extension = ".txt"
    fixed_schema = "value STRING"
    read_options = ("encoding", "wholetext", "lineSep")
    codecs: ClassVar[Mapping[str, str]] = WHOLE_FILE_CODECS

    def check_read_schema(self, schema: StructType, target: pa.Schema) -> None:
        if not any(pa.types.is_string(f.type) for f in target):
            raise OptionError.invalid(
                NAME, "format", "the text format needs a STRING column (value)", "text"
            )

    def infer(self, sample: Sample, files: list[FileEntry]) -> StructType:
        return StructType([StructField("value", StringType())])  # fixed_schema: every file's

    # -- reading --------------------------------------------------------------------------
    def batches(
        self, f: Any, split: FileSplit, wanted: pa.Schema, opts: ReaderOptions
    ) -> Iterator[Batch]:
        name = wanted.names[0] if wanted.names else "value"
        for lines in _lines(f, opts):
            yield pa.record_batch([lines], [name]), {name: name}

    def read_rescuing(self, f: Any, fitter: Fitter) -> Iterator[pa.RecordBatch]:
        # A text file's one column of its own is its lines.
        for lines in _lines(f, fitter.reader):
            yield fitter.columns({"value": lines}, len(lines))

    # -- writing --------------------------------------------------------------------------
    def write_problem(self, data: list[pa.Field]) -> str | None:
        if len(data) != 1 or not pa.types.is_string(data[0].type):
            shown = ", ".join(f"{f.name} {f.type}" for f in data)
            return f"text writes exactly one string column besides partition columns; got {shown}"
        return None

    def open_writer(self, stream: Any, schema: pa.Schema, config: SinkConfig) -> PartWriter:
        return _TextWriter(stream)


def _lines(f: Any, opts: ReaderOptions) -> Iterator[pa.Array]:
    """The file's lines as STRING arrays, a block at a time (the whole text with wholetext)."""
    decoder = codecs.getincrementaldecoder(opts.encoding)(errors="strict")
    if opts.wholetext:
        text = "".join([decoder.decode(chunk) for chunk in iter(lambda: f.read(BLOCK_BYTES), b"")])
        yield pa.array([text + decoder.decode(b"", final=True)])
        return
    splitter: Callable[[str], list[str]]
    if opts.line_sep is None:
        splitter = _split_universal
    else:
        sep = opts.line_sep
        splitter = lambda s: s.split(sep)  # noqa: E731
    tail = ""
    while True:
        chunk = f.read(BLOCK_BYTES)
        final = not chunk
        text = tail + decoder.decode(chunk, final=final)
        carry = ""
        if not final and text.endswith("\r"):
            # "\r\n" may straddle two chunks: decide on the "\r" with the next chunk.
            text, carry = text[:-1], "\r"
        lines = splitter(text)
        if final:
            if lines and lines[-1] == "":
                lines.pop()
            if lines:
                yield pa.array(lines, pa.string())
            return
        tail = lines.pop() + carry
        if lines:
            yield pa.array(lines, pa.string())


def _split_universal(text: str) -> list[str]:
    """Split on \\n, \\r\\n and \\r (Spark's default text line separators)."""
    return re.split(r"\r\n|\r|\n", text)


class _TextWriter:
    """A line per row; a null row is an empty line."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, batch: pa.RecordBatch) -> None:
        column = batch.column(0)
        lines = pc.binary_join_element_wise(column.fill_null(""), "\n", "")
        self._stream.write(concatenated(lines))

    def close(self) -> None:
        pass  # nothing to finish: every line is written


FORMAT = Text()
