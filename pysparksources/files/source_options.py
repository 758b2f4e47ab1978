"""pyfile source options, validated once when the query starts.

Everything a planner or a task needs ends up in one frozen :class:`SourceConfig`, so an
option typo or an unsupported reader option fails the query at its start, naming the option,
instead of failing inside a task later.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pysparksources._options import Options
from pysparksources.files.filesystem import FileLocation, resolve

__all__ = [
    "CSV_OPTIONS",
    "FORMATS",
    "JSON_OPTIONS",
    "OPTIONS",
    "TEXT_OPTIONS",
    "ReaderOptions",
    "SourceConfig",
    "parse_source_options",
]

SOURCE = "pyfile"
FORMATS = ("parquet", "csv", "json", "text", "orc")

# name -> (default shown in the docs, meaning). docs/pyfile-source.md is checked against this.
OPTIONS: dict[str, tuple[str, str]] = {
    "path": ("required", "any fsspec URL or local path; globs allowed (the argument of load())"),
    "format": ("parquet", "parquet, csv, json (JSON Lines), text or orc"),
    "sourceLogLocation": (
        "required for streams",
        "fsspec URL of the source's own batch -> files log (one per query)",
    ),
    "maxFilesPerTrigger": ("unset", "at most this many new files per micro-batch"),
    "maxBytesPerTrigger": ("unset", "at most this many bytes per micro-batch (first file always)"),
    "latestFirst": ("false", "process the newest files first"),
    "maxFileAge": ("7d", "ignore files older than this, relative to the newest file seen"),
    "fileNameOnly": ("false", "identify files by name only (not by full path)"),
    "maxCachedFiles": ("10000", "unread listed files kept for the next batch (0 disables)"),
    "discardCachedInputRatio": (
        "0.2",
        "drop the leftover cache when smaller than this share of the limit",
    ),
    "cleanSource": ("off", "off, archive or delete files after their batch is committed"),
    "sourceArchiveDir": ("unset", "where cleanSource=archive moves files (same filesystem)"),
    "pathGlobFilter": ("unset", "only read files whose name matches this glob"),
    "recursiveFileLookup": ("false", "true: no partition columns from col=value folders"),
    "ignoreCorruptFiles": ("false", "skip (and log) files that cannot be parsed"),
    "ignoreMissingFiles": ("false", "skip files deleted between listing and reading"),
    "maxPartitionBytes": ("128m", "target bytes per input partition (task)"),
    "openCostInBytes": ("4m", "estimated cost of opening a file, in bytes, when packing"),
    "sourceLogLeaseTimeout": (
        "60s",
        "a log lease not renewed for this long is taken over by a new query",
    ),
}
# Spark's csv/json/text reader options that pyfile maps onto pyarrow.
CSV_OPTIONS: dict[str, tuple[str, str]] = {
    "header": ("false", "csv: skip the first line of each file (columns map by position)"),
    "sep": (",", "csv: field separator (one character); alias delimiter"),
    "delimiter": (",", "csv: alias of sep"),
    "quote": ('"', "csv: quote character; empty string turns quoting off"),
    "escape": ("\\", "csv: escape character inside quoted values"),
    "nullValue": ("", "csv: the text that means null"),
    "encoding": ("UTF-8", "csv/json/text: character set of the files; alias charset"),
    "charset": ("UTF-8", "alias of encoding"),
    "multiLine": ("false", "csv: quoted values may span lines (json: only false)"),
    "dateFormat": ("yyyy-MM-dd", "csv/json: pattern of DATE values"),
    "timestampFormat": ("ISO 8601", "csv/json: pattern of TIMESTAMP values"),
    "mode": ("FAILFAST", "only FAILFAST: a malformed record fails its file"),
    "timeZone": (
        "session time zone",
        "csv/json: zone of timestamps written without an offset (IANA name or +hh:mm)",
    ),
}
JSON_OPTIONS = (
    "encoding",
    "charset",
    "multiLine",
    "dateFormat",
    "timestampFormat",
    "mode",
    "timeZone",
)
TEXT_OPTIONS: dict[str, tuple[str, str]] = {
    "wholetext": ("false", "text: one row per file instead of one per line"),
    "lineSep": ("\\n, \\r\\n or \\r", "text: line separator"),
}
_KNOWN_BY_FORMAT: dict[str, tuple[str, ...]] = {
    "csv": tuple(CSV_OPTIONS),
    "json": JSON_OPTIONS,
    "text": ("encoding", "charset", *TEXT_OPTIONS),
    "parquet": (),
    "orc": (),
}
# Spark options pyfile knows but cannot honor: an error beats a silent difference.
_UNSUPPORTED = {
    "inferSchema": "pyfile needs a schema (.schema(...)); it does not infer one",
    "comment": "pyarrow's csv reader has no comment lines",
    "columnNameOfCorruptRecord": "malformed records fail their file (see ignoreCorruptFiles)",
    "mergeSchema": "columns are read by the given schema",
    "samplingRatio": "pyfile does not infer schemas",
    "primitivesAsString": "columns are cast to the given schema",
}
_SIZE = re.compile(r"^\s*(\d+)\s*([kmgt]?)b?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_GLOB_CHARS = re.compile(r"[*?\[{]")


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


def _size(opts: Options, name: str, default: int | None) -> int | None:
    text = opts.raw(name)
    if text is None:
        return default
    match = _SIZE.match(text)
    if match is None or int(match.group(1)) <= 0:
        raise opts.error(name, "expected a positive size such as 1048576, 512k, 128m or 1g")
    return int(match.group(1)) * _SIZE_UNITS[match.group(2).lower()]


def split_glob(path: str) -> tuple[str, str | None]:
    """The folder before the first glob character, and the glob (None without one)."""
    match = _GLOB_CHARS.search(path)
    if match is None:
        return path.rstrip("/") or "/", None
    base = path[: match.start()].rsplit("/", 1)[0]
    return base or "/", path


def _char(opts: Options, name: str, default: str, allow_empty: bool = False) -> str:
    value = opts.string(name, default)
    assert value is not None
    if value == "" and allow_empty:
        return value
    if len(value) != 1:
        raise opts.error(name, "expected exactly one character")
    return value


def _reader_options(opts: Options, fmt: str) -> ReaderOptions:
    allowed = set(o.lower() for o in _KNOWN_BY_FORMAT[fmt])
    for name in (*CSV_OPTIONS, *TEXT_OPTIONS):
        if opts.has(name) and name.lower() not in allowed:
            raise opts.error(name, f"this option does not apply to format {fmt}")
    sep = _char(opts, "delimiter", ",") if opts.has("delimiter") else _char(opts, "sep", ",")
    encoding = opts.string("encoding") or opts.string("charset") or "utf-8"
    try:
        "".encode(encoding)
    except LookupError:
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
        null_value=opts.string("nullValue", "") or "",
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


def _reject_unsupported(raw: Mapping[str, str]) -> None:
    from pysparksources._options import OptionError

    lowered = {str(k).lower(): v for k, v in raw.items()}
    for name, reason in _UNSUPPORTED.items():
        if name.lower() in lowered:
            raise OptionError(SOURCE, name, lowered[name.lower()], f"unsupported: {reason}")


def parse_source_options(raw: Mapping[str, str], streaming: bool) -> SourceConfig:
    """Validate pyfile's source options; raise :class:`OptionError` on the first bad one."""
    _reject_unsupported(raw)
    known = [*OPTIONS, *CSV_OPTIONS, *TEXT_OPTIONS]
    opts = Options(SOURCE, raw, known, prefixes=("fs.",))
    fmt = opts.choice("format", "parquet", FORMATS)
    path = opts.string("path")
    if not path:
        raise opts.error("path", "a path is required: .load('<fsspec URL or local path>')")
    storage = opts.with_prefix("fs.")
    location = resolve(path, storage)
    base, pattern = split_glob(location.path)
    log_location = None
    log_url = opts.string("sourceLogLocation")
    if log_url:
        log_location = resolve(log_url, storage if _same_fs(log_url, path) else {})
    elif streaming:
        raise opts.error(
            "sourceLogLocation",
            "required for streaming reads: an fsspec URL or local folder where pyfile keeps its "
            "batch -> files log (Spark does not give Python sources the checkpoint folder); use "
            "one per query, e.g. <checkpointLocation>/pyfile-source",
        )
    max_files = opts.integer("maxFilesPerTrigger", None, minimum=1)
    max_bytes = _size(opts, "maxBytesPerTrigger", None)
    if max_files is not None and max_bytes is not None:
        raise opts.error("maxBytesPerTrigger", "cannot be set together with maxFilesPerTrigger")
    ratio_text = opts.string("discardCachedInputRatio", "0.2")
    try:
        ratio = float(ratio_text or "")
    except ValueError:
        raise opts.error("discardCachedInputRatio", "expected a number between 0 and 1") from None
    if not 0 <= ratio <= 1:
        raise opts.error("discardCachedInputRatio", "expected a number between 0 and 1")
    clean = opts.choice("cleanSource", "off", ("off", "archive", "delete"))
    archive = None
    archive_url = opts.string("sourceArchiveDir")
    if clean == "archive":
        if not archive_url:
            raise opts.error("sourceArchiveDir", "required when cleanSource=archive")
        archive = resolve(archive_url, storage if _same_fs(archive_url, path) else {})
        _check_archive(opts, location, base, archive)
    max_age = opts.duration_seconds("maxFileAge", 7 * 86400)
    glob_filter = opts.string("pathGlobFilter")
    if glob_filter is not None and ("/" in glob_filter or not glob_filter):
        raise opts.error("pathGlobFilter", "expected a file-name glob such as *.csv (no '/')")
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
        max_cached_files=opts.integer("maxCachedFiles", 10_000, minimum=0) or 0,
        discard_cached_input_ratio=ratio,
        clean_source=clean,
        archive_location=archive,
        path_glob_filter=glob_filter,
        recursive_file_lookup=opts.boolean("recursiveFileLookup", False),
        max_partition_bytes=_size(opts, "maxPartitionBytes", 128 << 20) or 128 << 20,
        open_cost_bytes=_size(opts, "openCostInBytes", 4 << 20) or 4 << 20,
        lease_timeout_s=opts.duration_seconds("sourceLogLeaseTimeout", 60.0, minimum=1),
    )


def _same_fs(url: str, other: str) -> bool:
    from fsspec.core import split_protocol

    return (split_protocol(url)[0] or "file") == (split_protocol(other)[0] or "file")


def _check_archive(opts: Options, source: FileLocation, base: str, archive: FileLocation) -> None:
    """Spark's safety rules: same filesystem, and archived files never match the source."""
    if archive.protocol != source.protocol:
        raise opts.error("sourceArchiveDir", "must be on the same filesystem as the source path")
    arch = archive.path.rstrip("/") + "/"
    root = base.rstrip("/") + "/"
    # Archived files land at <archive>/<full source path>: under the source folder they would
    # be listed again (Spark rejects an archive folder that matches the source pattern).
    if arch.startswith(root):
        raise opts.error(
            "sourceArchiveDir",
            "must not be inside the source folder: archived files would be read again",
        )
