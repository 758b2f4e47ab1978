"""What a file format is to pyfile: :class:`FileFormat`, and what its methods are given.

A format is one module of this package (``csv.py``, ``parquet.py``...) that defines a subclass
and ``FORMAT = TheFormat()``; the registry (``_registry``) finds it there. Its class attributes
say what it is (name, extension, splittable, parse modes, options, codecs); its methods do the
work, on the side of Spark where it runs: checks at query start and inference on the driver,
reading and writing in tasks. Nothing outside this package asks which format it has: it asks
the format.
"""

from __future__ import annotations

import random
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import pyarrow as pa

from pysparksources._redact import scrubbed
from pysparksources.errors import CorruptFileError
from pysparksources.files import NAME
from pysparksources.files.formats._sample_text import Budget

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    from pysparksources._core.option_table import Option
    from pysparksources.files.config import (
        InferenceOptions,
        ReaderOptions,
        SinkConfig,
    )
    from pysparksources.files.storage.filesystem import FileLocation
    from pysparksources.files.storage.folder_listing import FileEntry
    from pysparksources.files.values.conversions import Parsing

__all__ = [
    "BATCH_ROWS",
    "BLOCK_BYTES",
    "CONVERSION_ERRORS",
    "STREAM_COMPRESSORS",
    "WHOLE_FILE_CODECS",
    "Assemble",
    "Batch",
    "FileFormat",
    "FileSplit",
    "Fitter",
    "PartWriter",
    "Sample",
    "WritableFormat",
]

_SEED = 42  # sampling is reproducible: the same files give the same schema on every start
BATCH_ROWS = 1 << 16
BLOCK_BYTES = 8 << 20
# Codec -> file-name suffix of a format compressed as a whole file: the suffix Hadoop (and so
# Spark's readers) tell the codec by. Its stream compressor, as pyarrow names it.
WHOLE_FILE_CODECS: Mapping[str, str] = {
    "none": "",
    "uncompressed": "",
    "gzip": ".gz",
    "bzip2": ".bz2",
    "zstd": ".zst",
}
STREAM_COMPRESSORS: Mapping[str, str] = {"gzip": "gzip", "bzip2": "bz2", "zstd": "zstd"}
# What a record that does not parse or convert raises, in pyarrow's readers and in conform.
CONVERSION_ERRORS = (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError, OverflowError)

# A batch as a format read it, and the file's column of each wanted column (name -> name).
Batch = tuple[Any, dict[str, str]]
# A format's batch made a batch of the query's schema (partition columns, types, nullability).
Assemble = Callable[[Any, dict[str, str]], pa.RecordBatch]


@dataclass(frozen=True)
class FileSplit:
    """A file, or a byte range of one (a splittable format's units starting in it), for one task."""

    path: str
    size: int
    start: int = 0
    length: int | None = None
    partition_values: dict[str, str] = field(default_factory=dict)

    @property
    def whole(self) -> bool:
        return self.start == 0 and (self.length is None or self.length >= self.size)

    def holds(self, position: int) -> bool:
        """Whether ``position`` (a byte offset of the file) falls in this split's range."""
        end = self.size if self.length is None else self.start + self.length
        return self.start <= position < end


@dataclass(frozen=True)
class Sample:
    """What inference reads with: where the files are, how they are parsed, how they are
    inferred, and what is left of the sample's bytes."""

    location: FileLocation
    reader: ReaderOptions
    inference: InferenceOptions
    budget: Budget

    @classmethod
    def of(
        cls, location: FileLocation, reader: ReaderOptions, inference: InferenceOptions
    ) -> Sample:
        """A sample with all of ``schemaSampleBytes`` still to read."""
        return cls(location, reader, inference, Budget(inference.sample_bytes))

    def open(self, entry: FileEntry) -> Any:
        return self.location.filesystem().open(entry.path, "rb")

    def sampler(self) -> random.Random:
        """What draws the records ``samplingRatio`` keeps: the same on every start."""
        return random.Random(_SEED)

    def skipped(self, sampler: random.Random) -> bool:
        """Whether ``samplingRatio`` leaves the next record out (a draw only below 1)."""
        ratio = self.inference.sampling_ratio
        return ratio < 1 and sampler.random() >= ratio

    def unreadable(self, entry: FileEntry, error: Exception) -> CorruptFileError:
        """The error for a sampled file that cannot be read, the storage options left out."""
        return CorruptFileError(
            NAME,
            f"cannot infer a schema from {self.location.url(entry.path)}: "
            f"{scrubbed(f'{type(error).__name__}: {error}')} (ignoreCorruptFiles=true skips "
            "such files)",
        )


class Fitter(Protocol):
    """Fits a file's own columns to the query's schema, rescuing what does not fit
    (``schema.rescue``). A format's :meth:`FileFormat.read_rescuing` hands it what it reads."""

    @property
    def reader(self) -> ReaderOptions: ...

    @property
    def split(self) -> FileSplit: ...

    @property
    def data(self) -> pa.Schema:
        """The schema's data columns (no partition, rescued or corrupt-record column)."""
        ...

    def columns(self, natural: dict[str, pa.Array], length: int) -> pa.RecordBatch:
        """``length`` rows given as the file's columns by name, fitted."""
        ...

    def new_columns(self, names: list[str]) -> list[str]:
        """The names the schema lacks; what the evolution mode says happens to them."""
        ...

    def rescues(self, name: str) -> bool:
        """Whether the file's column ``name``, not the schema's, goes to the rescued column."""
        ...

    def convert(
        self, name: str, column: pa.Array, rescued: list[dict[str, Any]], source: str
    ) -> pa.Array:
        """``column`` as the schema's column ``name``; values that do not convert are rescued
        under ``source`` (a row's entry in ``rescued``)."""
        ...

    def finish(
        self,
        arrays: dict[str, pa.Array],
        rescued: list[dict[str, Any]],
        length: int,
        texts: list[str | None] | None = None,
    ) -> pa.RecordBatch:
        """The batch of the query's schema: converted columns, rescued values per row, and
        malformed records' texts for the corrupt-record column."""
        ...


class PartWriter(Protocol):
    """One part file's content being written to an open output stream."""

    def write(self, batch: pa.RecordBatch) -> None: ...

    def close(self) -> None:
        """Finish the content (footer, compression trailer); the stream stays open."""
        ...


class FileFormat(ABC):
    """One file format pyfile reads: what it is, and how it is checked, inferred and read."""

    name: ClassVar[str]
    """The value of the ``format`` option."""
    listed: ClassVar[int]
    """Where the format stands in lists users read (the accepted values of ``format``)."""
    title: ClassVar[str]
    """How the documentation of the ``format`` option names it: ``json (JSON Lines; ...)``."""
    extension: ClassVar[str]
    """The file-name extension of its files (``.csv``), before a whole-file codec's suffix."""
    splittable: ClassVar[bool] = False
    """A file larger than a task's share is read in byte ranges, by several tasks."""
    parse_modes: ClassVar[bool] = False
    """Records are parsed from text and can be malformed: Spark's parse modes (``mode``:
    PERMISSIVE, DROPMALFORMED, FAILFAST) and the corrupt-record column apply."""
    fixed_schema: ClassVar[str | None] = None
    """The schema of every file of the format (DDL), when it has one: nothing is inferred."""
    read_options: ClassVar[tuple[str, ...]] = ()
    """Names of the read options of the option table that apply to this format only (or to
    some formats): given with another format they are refused."""

    @property
    def declared_options(self) -> tuple[Option[Any], ...]:
        """Options only this format has: every ``Option`` its module declares, in order. The
        option table takes them in, the parser checks them, and their values reach the format
        in ``ReaderOptions.format_options`` (a read option) or ``SinkConfig.format_options``
        (a write option): ``opts.format_option(OPTION)``."""
        from pysparksources._core.option_table import Option, declared_in

        return declared_in(vars(sys.modules[type(self).__module__]), Option)

    # -- at query start, on the driver ----------------------------------------------------
    def option_problem(self, option: Option[Any], value: Any) -> str | None:
        """What is wrong with the value of one of its own options, saying what is accepted
        (None: nothing); the parser raises the OptionError naming the option."""
        return None

    def check_read_schema(self, schema: StructType, target: pa.Schema) -> None:
        """Refuse a schema the format cannot read, as Spark does when the query is defined."""
        return None  # most formats read any schema Spark's file source accepts

    # -- inference, on the driver ---------------------------------------------------------
    def sample(self, files: list[FileEntry], inference: InferenceOptions) -> list[FileEntry]:
        """The files inference reads, from the source's files sorted by path."""
        return files[: inference.sample_files]

    @abstractmethod
    def infer(self, sample: Sample, files: list[FileEntry]) -> StructType:
        """The data columns of ``files`` (no partition column), as Spark's reader infers them."""

    # -- reading, in tasks ----------------------------------------------------------------
    @abstractmethod
    def batches(
        self, f: Any, split: FileSplit, wanted: pa.Schema, opts: ReaderOptions
    ) -> Iterator[Batch]:
        """The split's rows with the ``wanted`` columns the file has; raises one of
        :data:`CONVERSION_ERRORS` at a record it cannot parse."""

    def read(
        self,
        f: Any,
        split: FileSplit,
        parsed: pa.Schema,
        opts: ReaderOptions,
        parsing: Parsing,
        corrupt_column: str | None,
        assemble: Assemble,
    ) -> Iterator[pa.RecordBatch]:
        """The split's rows as the query's batches. A format with parse modes goes on past
        malformed records (and fills ``corrupt_column``); others fail the file at one."""
        for batch, names in self.batches(f, split, parsed, opts):
            yield assemble(batch, names)

    @abstractmethod
    def read_rescuing(self, f: Any, fitter: Fitter) -> Iterator[pa.RecordBatch]:
        """The file read by its own columns, each batch fitted by ``fitter`` (schema evolution
        and the rescued-data column)."""


class WritableFormat(FileFormat):
    """A format the sink writes too."""

    written_title: ClassVar[str | None] = None
    """How the sink's documentation names it, when not as :attr:`title` does."""
    codecs: ClassVar[Mapping[str, str]]
    """Compression codec -> the suffix Spark's readers tell it by; ``none`` and
    ``uncompressed`` (its synonym) among them."""
    default_codec: ClassVar[str] = "none"
    codec_inside_file: ClassVar[bool] = False
    """The codec compresses parts of the file (parquet's pages); otherwise the sink compresses
    the whole file as a stream (:data:`STREAM_COMPRESSORS`)."""
    write_options: ClassVar[tuple[str, ...]] = ()
    """Names of the sink options of the option table that apply to this format only."""

    def file_suffix(self, codec: str) -> str:
        """``.csv.gz``, ``.json``...: the part file's name ends so for Spark's readers."""
        return self.extension + self.codecs[codec]

    def write_problem(self, data: list[pa.Field]) -> str | None:
        """Why the sink cannot write these data columns in this format (None: it can)."""
        return None

    @abstractmethod
    def open_writer(self, stream: Any, schema: pa.Schema, config: SinkConfig) -> PartWriter:
        """A part file's content, written to ``stream`` (an open Arrow output stream)."""
