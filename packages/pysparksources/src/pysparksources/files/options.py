"""pyfile's options, validated once when the query starts: the source's, then the sink's.

Everything a planner, a task or a commit needs ends up in one frozen :class:`SourceConfig` or
:class:`SinkConfig`. Spark builds readers and writers on the driver before the first batch, so
an option typo, an unsupported reader option, or a sink option that does not fit the query's
columns fails the query at its start with an :class:`OptionError` naming the option, instead of
failing inside a task later. The names, defaults and meanings are in ``_option_tables``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pysparksources._core.legacy_options import Options
from pysparksources.errors import OptionError
from pysparksources.files._filesystem import FileLocation, exclusive_create_problem, resolve
from pysparksources.files._manifest import ManifestRetention
from pysparksources.files._option_tables import (
    ALIASES,
    COMPRESSIONS,
    CSV_OPTIONS,
    DEFAULT_COMPRESSION,
    KNOWN_BY_FORMAT,
    READ_FORMATS,
    SINK_ALIASES,
    SINK_OPTIONS,
    SOURCE_OPTIONS,
    TEXT_OPTIONS,
    UNSUPPORTED,
    WRITE_FORMATS,
)

__all__ = [
    "ReaderOptions",
    "SinkConfig",
    "SourceConfig",
    "parse_sink_options",
    "parse_source_options",
]

NAME = "pyfile"
# Hadoop's glob characters; a backslash escape also makes a path a glob, as in Spark.
_GLOB_CHARS = re.compile(r"[*?\[{\\]")


# -- the source ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ReaderOptions:
    """How tasks parse files; travels to executors inside each partition."""

    format: str
    header: bool = False
    sep: str = ","
    quote: str = '"'
    escape: str = "\\"
    null_value: str = ""
    encoding: str = "utf-8"
    multi_line: bool = False
    date_format: str | None = None
    timestamp_format: str | None = None
    wholetext: bool = False
    line_sep: str | None = None
    time_zone: str | None = None
    ignore_corrupt_files: bool = False
    ignore_missing_files: bool = False


@dataclass(frozen=True)
class SourceConfig:
    """Every validated option of one pyfile source; picklable, secrets only in locations."""

    location: FileLocation
    base: str
    pattern: str | None
    reader: ReaderOptions
    log_location: FileLocation | None = None
    max_files_per_trigger: int | None = None
    max_bytes_per_trigger: int | None = None
    latest_first: bool = False
    max_file_age_ms: int = 7 * 86_400_000
    file_name_only: bool = False
    max_cached_files: int = 10_000
    discard_cached_input_ratio: float = 0.2
    clean_source: str = "off"
    archive_location: FileLocation | None = None
    path_glob_filter: str | None = None
    recursive_file_lookup: bool = False
    max_partition_bytes: int = 128 << 20
    open_cost_bytes: int = 4 << 20
    lease_timeout_s: float = 60.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def effective_max_file_age_ms(self) -> int | None:
        """Spark ignores maxFileAge when latestFirst is combined with a max option."""
        limited = self.max_files_per_trigger is not None or self.max_bytes_per_trigger is not None
        return None if self.latest_first and limited else self.max_file_age_ms


def split_glob(path: str) -> tuple[str, str | None]:
    """The folder before the first glob character, and the glob (None without one)."""
    match = _GLOB_CHARS.search(path)
    if match is None:
        return path.rstrip("/") or "/", None
    base = path[: match.start()].rsplit("/", 1)[0]
    return base or "/", path


def _char(opts: Options, name: str, default: str, allow_empty: bool = False) -> str:
    value = opts.string(name, default)
    if value == "" and allow_empty:
        return value
    if len(value) != 1:
        raise opts.error(name, "expected exactly one character")
    return value


def _reader_options(opts: Options, fmt: str) -> ReaderOptions:
    allowed = set(o.lower() for o in KNOWN_BY_FORMAT[fmt])
    for name in (*CSV_OPTIONS, *TEXT_OPTIONS):
        if name in ALIASES:
            continue
        if opts.has(name) and name.lower() not in allowed:
            raise opts.error(name, f"this option does not apply to format {fmt}")
    sep = _char(opts, "sep", ",")
    encoding = opts.string("encoding", "utf-8")
    try:
        "".encode(encoding)
    except (LookupError, ValueError):
        raise opts.error("encoding", "expected a character set Python knows") from None
    mode = opts.choice("mode", "FAILFAST", ("FAILFAST", "PERMISSIVE", "DROPMALFORMED"))
    if mode != "FAILFAST":
        raise opts.error(
            "mode",
            "only FAILFAST is supported: a malformed record fails its file "
            "(ignoreCorruptFiles=true skips such files)",
        )
    multi_line = opts.boolean("multiLine", False)
    if multi_line and fmt == "json":
        raise opts.error("multiLine", "pyfile reads JSON Lines only (multiLine=false)")
    line_sep = opts.string("lineSep")
    if line_sep is not None and line_sep == "":
        raise opts.error("lineSep", "expected a non-empty separator")
    from pysparksources.files._conversions import check_datetime_pattern
    from pysparksources.files._zones import check_zone

    date_format = opts.string("dateFormat")
    timestamp_format = opts.string("timestampFormat")
    for name, pattern in (("dateFormat", date_format), ("timestampFormat", timestamp_format)):
        if pattern is not None and not check_datetime_pattern(pattern):
            raise opts.error(
                name,
                "expected a Spark datetime pattern made of yyyy, MM, dd, HH, mm, ss, "
                "SSS..., XXX and literal separators",
            )
    time_zone = opts.string("timeZone")
    if time_zone is not None and check_zone(time_zone) is None:
        raise opts.error(
            "timeZone", "expected a time zone id such as America/Los_Angeles, UTC or +05:30"
        )
    return ReaderOptions(
        format=fmt,
        header=opts.boolean("header", False),
        sep=sep,
        quote=_char(opts, "quote", '"', allow_empty=True),
        escape=_char(opts, "escape", "\\", allow_empty=True),
        null_value=opts.string("nullValue", ""),
        encoding=encoding,
        multi_line=multi_line,
        date_format=date_format,
        timestamp_format=timestamp_format,
        wholetext=opts.boolean("wholetext", False),
        line_sep=line_sep,
        time_zone=time_zone,
        ignore_corrupt_files=opts.boolean("ignoreCorruptFiles", False),
        ignore_missing_files=opts.boolean("ignoreMissingFiles", False),
    )


def parse_source_options(raw: Mapping[str, str], streaming: bool | None) -> SourceConfig:
    """Validate pyfile's source options; raise :class:`OptionError` on the first bad one.

    ``streaming`` is None when Spark asks for the schema at ``load()``, where a stream and a
    batch read look the same: the stream-only requirement waits for the reader.
    """
    known = [n for n in (*SOURCE_OPTIONS, *CSV_OPTIONS, *TEXT_OPTIONS) if n not in ALIASES]
    opts = Options(NAME, raw, known, aliases=ALIASES, prefixes=("fs.",), unsupported=UNSUPPORTED)
    fmt = opts.choice("format", "parquet", READ_FORMATS)
    path = opts.require("path", "the folder or glob to read: .load('<fsspec URL or local path>')")
    storage = opts.with_prefix("fs.")
    location = _resolve(opts, "path", path, storage)
    base, pattern = split_glob(location.path)
    _check_glob(opts, "path", pattern)
    log_location = None
    log_url = opts.string("sourceLogLocation")
    if log_url:
        log_location = _resolve(
            opts, "sourceLogLocation", log_url, storage if _same_fs(log_url, path) else {}
        )
    elif streaming is True:
        raise opts.required(
            "sourceLogLocation",
            "streaming reads need an fsspec URL or local folder where pyfile keeps its "
            "batch -> files log (Spark does not give Python sources the checkpoint folder); use "
            "one per query, e.g. <checkpointLocation>/pyfile-source",
        )
    max_files = opts.integer("maxFilesPerTrigger", minimum=1)
    max_bytes = opts.size("maxBytesPerTrigger", None)
    if max_files is not None and max_bytes is not None:
        raise opts.error("maxBytesPerTrigger", "cannot be set together with maxFilesPerTrigger")
    ratio = opts.number("discardCachedInputRatio", 0.2, minimum=0, maximum=1)
    clean = opts.choice("cleanSource", "off", ("off", "archive", "delete"))
    archive = None
    archive_url = opts.string("sourceArchiveDir")
    if clean == "archive":
        if not archive_url:
            raise opts.required("sourceArchiveDir", "cleanSource=archive moves files there")
        archive = _resolve(
            opts, "sourceArchiveDir", archive_url, storage if _same_fs(archive_url, path) else {}
        )
        _check_archive(opts, location, archive)
    max_age = opts.duration_seconds("maxFileAge", 7 * 86400)
    glob_filter = opts.string("pathGlobFilter")
    if glob_filter is not None and ("/" in glob_filter or not glob_filter):
        raise opts.error("pathGlobFilter", "expected a file-name glob such as *.csv (no '/')")
    _check_glob(opts, "pathGlobFilter", glob_filter)
    return SourceConfig(
        location=location,
        base=base,
        pattern=pattern,
        reader=_reader_options(opts, fmt),
        log_location=log_location,
        max_files_per_trigger=max_files,
        max_bytes_per_trigger=max_bytes,
        latest_first=opts.boolean("latestFirst", False),
        max_file_age_ms=int(max_age * 1000),
        file_name_only=opts.boolean("fileNameOnly", False),
        max_cached_files=opts.integer("maxCachedFiles", 10_000, minimum=0, maximum=2**31 - 1),
        discard_cached_input_ratio=ratio,
        clean_source=clean,
        archive_location=archive,
        path_glob_filter=glob_filter,
        recursive_file_lookup=opts.boolean("recursiveFileLookup", False),
        max_partition_bytes=opts.size("maxPartitionBytes", 128 << 20),
        open_cost_bytes=opts.size("openCostInBytes", 4 << 20),
        lease_timeout_s=opts.duration_seconds("sourceLogLeaseTimeout", 60.0, minimum=1),
    )


def _resolve(opts: Options, name: str, url: str, storage: dict[str, str]) -> FileLocation:
    try:
        return resolve(url, storage)
    except (ValueError, ImportError) as exc:
        # fsspec's message names the protocol or the missing package, never storage options.
        raise opts.error(name, f"not a usable fsspec URL ({exc})") from None


def _check_glob(opts: Options, name: str, pattern: str | None) -> None:
    from pysparksources.files._listing import check_glob

    if pattern is not None:
        try:
            check_glob(pattern)
        except ValueError as error:
            raise opts.error(name, str(error)) from None


def _same_fs(url: str, other: str) -> bool:
    from fsspec.core import split_protocol

    return (split_protocol(url)[0] or "file") == (split_protocol(other)[0] or "file")


def _check_archive(opts: Options, source: FileLocation, archive: FileLocation) -> None:
    """Spark's safety rules: same filesystem, and the archive folder must not match the source
    path (a glob pattern) in its first N folder levels, N being the smaller of the two depths.

    Archived files land at ``<archive>/<full source path>``; the rule keeps them away from
    whatever the source lists (it is Spark's, checked against Spark in the parity tests).
    """
    from pysparksources.files._listing import glob_regex

    if archive.protocol != source.protocol:
        raise opts.error("sourceArchiveDir", "must be on the same filesystem as the source path")
    pattern = [p for p in source.path.split("/") if p]
    folders = [p for p in archive.path.split("/") if p]
    depth = min(len(pattern), len(folders))
    if all(glob_regex(p).match(f) for p, f in zip(pattern[:depth], folders[:depth], strict=True)):
        raise opts.error(
            "sourceArchiveDir",
            f"must not match the source path in its first {depth} folder levels (Spark's rule): "
            "archived files could be listed again; pick a folder outside the source path",
        )


# -- the sink ---------------------------------------------------------------------------
@dataclass(frozen=True)
class SinkConfig:
    """Everything a task or a commit needs; picklable, storage options never printed."""

    location: FileLocation
    base_url: str
    format: str
    compression: str
    partition_by: tuple[str, ...] = ()
    max_records_per_file: int = 0
    # Spark's readers derive the interval from the log's file names and only agree with
    # its default, spark.sql.streaming.fileSink.log.compactInterval = 10: not an option.
    compact_interval: int = 10
    csv_header: bool = False
    csv_sep: str = ","
    ignore_null_fields: bool = True
    row_group_rows: int = 1 << 20
    time_zone: str | None = None
    retention: ManifestRetention = field(default_factory=ManifestRetention)
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def metadata(self) -> FileLocation:
        """Where the manifest lives: ``<path>/_spark_metadata``."""
        return self.location.child("_spark_metadata")

    def __repr__(self) -> str:
        return f"SinkConfig({self.base_url!r}, format={self.format!r})"


def parse_sink_options(
    raw: Mapping[str, str], column_names: list[str], overwrite: bool
) -> SinkConfig:
    """Validate ``raw`` against the query's columns; ``overwrite`` is what Spark passed."""
    known = [n for n in SINK_OPTIONS if not n.startswith("fs.") and n not in SINK_ALIASES]
    options = Options(NAME, raw, known, aliases=SINK_ALIASES, prefixes=("fs.",))
    if overwrite:
        raise OptionError.invalid(
            NAME,
            "outputMode",
            "pyfile only appends: use outputMode('append') for streams and mode('append') for "
            "batch writes (Spark passed overwrite=True, which complete mode and "
            "mode('overwrite') do)",
        )
    fmt = options.choice("format", "parquet", WRITE_FORMATS)
    codecs = COMPRESSIONS[fmt]
    compression = options.choice("compression", DEFAULT_COMPRESSION[fmt], codecs).lower()
    if compression == "uncompressed":
        compression = "none"
    location, base_url = _location(options)
    partition_by = _partition_columns(options, column_names)
    data_columns = [c for c in column_names if c not in partition_by]
    if not data_columns:
        raise options.error("partitionBy", "at least one column must stay in the data files")
    sep = options.string("sep", ",")
    if len(sep) != 1 or sep in '\r\n"':
        raise options.error("sep", "expected one character (not a quote or a line break)")
    time_zone = options.string("timeZone")
    if time_zone is not None:
        from pysparksources.files._zones import check_zone

        if fmt not in ("csv", "json"):
            raise options.error("timeZone", f"this option does not apply to format {fmt}")
        time_zone = check_zone(time_zone)
        if time_zone is None:
            raise options.error(
                "timeZone", "expected a time zone id such as America/Los_Angeles, UTC or +05:30"
            )
    return SinkConfig(
        location=location,
        base_url=base_url,
        format=fmt,
        compression=compression,
        partition_by=partition_by,
        max_records_per_file=options.integer("maxRecordsPerFile", 0, minimum=0),
        csv_header=options.boolean("header", False),
        csv_sep=sep,
        ignore_null_fields=options.boolean("ignoreNullFields", True),
        row_group_rows=options.integer("parquetRowGroupRows", 1 << 20, minimum=1),
        time_zone=time_zone,
        retention=ManifestRetention(
            enabled=options.boolean("logDeletion", True),
            min_batches=options.integer("minBatchesToRetain", 100, minimum=1),
            cleanup_delay_ms=int(1000 * options.duration_seconds("logCleanupDelay", 600.0)),
        ),
    )


def _location(options: Options) -> tuple[FileLocation, str]:
    url = options.require("path", "the output folder: .option('path', url) or .start(url)").strip()
    location = _resolve(options, "path", url, options.with_prefix("fs."))
    try:
        fs = location.filesystem()
    except ImportError as exc:
        raise options.error("path", f"its filesystem needs a missing package ({exc})") from None
    except Exception as exc:  # a backend refusing its options, e.g. a malformed account
        raise options.error(
            "path", f"its filesystem could not be created ({type(exc).__name__})"
        ) from None
    if fs.isfile(location.path):
        raise options.error("path", "this is an existing file; the sink needs a folder")
    problem = exclusive_create_problem(location)
    if problem is not None:
        # The manifest's exactly-once rests on create-if-absent: refuse rather than overwrite.
        raise options.error("path", problem)
    if location.protocol == "file":
        # Manifest entries are full URIs, as Spark's FileStreamSink writes them.
        return location, location.url()
    return location, url.rstrip("/")


def _partition_columns(options: Options, column_names: list[str]) -> tuple[str, ...]:
    text = options.string("partitionBy")
    if text is None or not text.strip():
        return ()
    names = tuple(name.strip() for name in text.split(","))
    lookup = {c.lower(): c for c in column_names}
    resolved = []
    for name in names:
        column = lookup.get(name.lower())
        if column is None:
            raise options.error(
                "partitionBy", f"column {name!r} is not in the data; columns: {column_names}"
            )
        if column in resolved:
            raise options.error("partitionBy", f"column {column!r} is listed twice")
        resolved.append(column)
    return tuple(resolved)
