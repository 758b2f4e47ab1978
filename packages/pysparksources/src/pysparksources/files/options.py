"""pyfile's option parser: the raw options of one use in, a :class:`SourceConfig` (reads) or a
:class:`SinkConfig` (writes) out.

Only the driver imports this module (through the data source); readers, writers and their
tasks get the config. The names, defaults and meanings are in ``_option_table``; an option
that names a config field (``config_field``) is copied there by ``opts.fill``, so this module
holds only what needs more than that copy: checks across options, values resolved or computed.
An option typo, an option that does not apply to the format or to the use, an unsupported
Spark option, or a sink option that does not fit the query's columns fails the query at its
start with an :class:`OptionError` naming the option, instead of failing inside a task later.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, Literal, overload

from pysparksources._core.install_hint import pip_install
from pysparksources._core.option_table import Option, Use
from pysparksources._core.options import Options
from pysparksources._redact import public_url
from pysparksources.errors import ArgumentError, OptionError, SchemaError
from pysparksources.files import NAME
from pysparksources.files._option_table import (
    BACKFILL_INTERVAL,
    CLEAN_SOURCE,
    COMPRESSION,
    DISCOVERY,
    FORMAT,
    FS,
    INCLUDE_EXISTING_FILES,
    LOG_CLEANUP_DELAY,
    MAX_BYTES_PER_TRIGGER,
    MAX_FILE_AGE,
    MAX_FILES_PER_TRIGGER,
    OUTPUT_RETENTION,
    PARTITION_BY,
    PATH,
    QUEUE,
    QUEUE_URL,
    QUEUE_VISIBILITY_TIMEOUT,
    READ_FORMAT_OPTIONS,
    RESCUED_DATA_COLUMN,
    SAMPLING_RATIO,
    SCHEMA_EVOLUTION_MODE,
    SCHEMA_HINTS,
    SCHEMA_LOCATION,
    SINK_FORMAT,
    SINK_PATH,
    SINK_SEP,
    SOURCE_ARCHIVE_DIR,
    SOURCE_LOG_CLEANUP_DELAY,
    SOURCE_LOG_LOCATION,
    TABLE,
    UNREADABLE_MESSAGES,
    WRITE_FORMAT_OPTIONS,
)
from pysparksources.files.config import (
    InferenceOptions,
    ManifestRetention,
    NotificationOptions,
    ReaderOptions,
    SchemaPolicy,
    SinkConfig,
    SourceConfig,
)
from pysparksources.files.formats import FileFormat, format_named
from pysparksources.files.storage.filesystem import (
    FileLocation,
    credentials_kept_out,
    exclusive_create_problem,
    resolve,
)

__all__ = ["format_values", "parse_options", "read_schema", "split_glob"]

# Hadoop's glob characters; a backslash escape also makes a path a glob, as in Spark.
_GLOB_CHARS = re.compile(r"[*?\[{\\]")
_READS = Literal[Use.STREAM_READ, Use.BATCH_READ, Use.READ]
_WRITES = Literal[Use.STREAM_WRITE, Use.BATCH_WRITE, Use.WRITE]


@overload
def parse_options(
    raw: Mapping[str, str], use: _READS, schema: Any = None, schema_inferred: bool = False
) -> SourceConfig: ...
@overload
def parse_options(
    raw: Mapping[str, str], use: _WRITES, schema: Any, schema_inferred: bool = False
) -> SinkConfig: ...
@overload
def parse_options(
    raw: Mapping[str, str], use: Use, schema: Any = None, schema_inferred: bool = False
) -> SourceConfig | SinkConfig: ...
def parse_options(
    raw: Mapping[str, str], use: Use, schema: Any = None, schema_inferred: bool = False
) -> SourceConfig | SinkConfig:
    """Validate pyfile's options for ``use``; raise :class:`OptionError` on the first bad one.

    ``use`` is ``Use.READ`` when Spark asks for a read's schema at ``load()``, where a stream
    and a batch read look the same: the stream-only requirement (``sourceLogLocation``) waits
    for the reader. For writes, ``schema`` is the input's StructType (its column names).
    """
    opts = Options(TABLE, raw, use)
    if use & Use.WRITE:
        return _sink(opts, list(schema.names))
    return _source(opts, use, schema_inferred or schema is None)


def read_schema(config: SourceConfig) -> Any:
    """The schema of a read without ``.schema(...)``: a format's fixed schema (text), or inferred.

    Spark asks only for reads without a schema, at ``load()``: a missing folder, or one with
    no file to infer from, fails there. A stream and a batch read look the same here, so both
    infer (Spark's file stream source does so only with spark.sql.streaming.schemaInference).
    With a schemaLocation the schema is inferred once and read from there afterwards.
    """
    from pysparksources.files.schema.evolution import read_schema_of
    from pysparksources.files.source.file_index import require_folder

    require_folder(config)
    fixed = format_named(config.reader.format).fixed_schema
    return fixed if fixed is not None else read_schema_of(config)


# -- the source ---------------------------------------------------------------------------
def split_glob(path: str) -> tuple[str, str | None]:
    """The folder before the first glob character, and the glob (None without one)."""
    match = _GLOB_CHARS.search(path)
    if match is None:
        return path.rstrip("/") or "/", None
    base = path[: match.start()].rsplit("/", 1)[0]
    return base or "/", path


def _check_format_options(
    opts: Options, fmt: str, by_format: Mapping[str, tuple[Option[Any], ...]]
) -> None:
    """Refuse a format-specific option given with a format it does not apply to."""
    allowed = by_format[fmt]
    for options in by_format.values():
        for option in options:
            if opts.has(option) and option not in allowed:
                raise opts.error(option, f"this option does not apply to format {fmt}")


def format_values(opts: Options, fmt: FileFormat, use: Use) -> dict[str, Any]:
    """The values of the options ``fmt`` declares itself for ``use``, by name (given, or
    their defaults), for the format to read; each checked by the format first."""
    values = {}
    for option in fmt.declared_options:
        if option.uses & use:
            value = values[option.name] = opts.get(option)
            problem = None if value is None else fmt.option_problem(option, value)
            if problem is not None:
                raise opts.error(option, problem)
    return values


def _reader_options(opts: Options, fmt: str) -> ReaderOptions:
    _check_format_options(opts, fmt, READ_FORMAT_OPTIONS)
    return opts.fill(ReaderOptions, format_options=format_values(opts, format_named(fmt), Use.READ))


def _source(opts: Options, use: Use, schema_inferred: bool) -> SourceConfig:
    fmt = opts.value(FORMAT)
    path = opts.require(PATH, "the folder or glob to read: .load('<fsspec URL or local path>')")
    storage = opts.family(FS)
    location = _resolve(opts, PATH, path, storage)
    base, pattern = split_glob(location.path)
    _check_glob(opts, PATH, pattern)
    log_location = None
    log_url = opts.get(SOURCE_LOG_LOCATION)
    if log_url:
        log_location = _resolve(
            opts, SOURCE_LOG_LOCATION, log_url, storage if _same_fs(log_url, path) else {}
        )
    elif use == Use.STREAM_READ:
        raise opts.required(
            SOURCE_LOG_LOCATION,
            f"streaming reads need an fsspec URL or local folder where {NAME} keeps its "
            "batch -> files log (Spark does not give Python sources the checkpoint folder); use "
            f"one per query, e.g. <checkpointLocation>/{NAME}-source",
        )
    if opts.get(MAX_FILES_PER_TRIGGER) is not None and opts.get(MAX_BYTES_PER_TRIGGER) is not None:
        raise opts.error(MAX_BYTES_PER_TRIGGER, "cannot be set together with maxFilesPerTrigger")
    archive = None
    archive_url = opts.get(SOURCE_ARCHIVE_DIR)
    if opts.value(CLEAN_SOURCE) == "archive":
        if not archive_url:
            raise opts.required(SOURCE_ARCHIVE_DIR, "cleanSource=archive moves files there")
        archive = _resolve(
            opts, SOURCE_ARCHIVE_DIR, archive_url, storage if _same_fs(archive_url, path) else {}
        )
        _check_archive(opts, location, archive)
    return opts.fill(
        SourceConfig,
        location=location,
        base=base,
        pattern=pattern,
        reader=_reader_options(opts, fmt),
        log_location=log_location,
        max_file_age_ms=int(opts.value(MAX_FILE_AGE) * 1000),
        archive_location=archive,
        log_cleanup_delay_ms=int(1000 * opts.value(SOURCE_LOG_CLEANUP_DELAY)),
        inference=_inference_options(opts),
        schema_policy=_schema_policy(opts, storage, path, schema_inferred),
        notifications=_notifications(opts, location),
    )


_NOTIFICATION_ONLY = (
    QUEUE_URL,
    QUEUE_VISIBILITY_TIMEOUT,
    BACKFILL_INTERVAL,
    INCLUDE_EXISTING_FILES,
    UNREADABLE_MESSAGES,
)


def _notifications(opts: Options, location: FileLocation) -> NotificationOptions | None:
    """discovery=notifications: the queue and how to read it, checked before the query runs."""
    import importlib.util
    from urllib.parse import urlsplit

    from pysparksources.files.source.notifications.queues import BACKENDS, backend_for

    settings = opts.family(QUEUE)
    if opts.value(DISCOVERY) == "listing":
        for option in _NOTIFICATION_ONLY:
            if opts.has(option):
                raise opts.error(option, "applies only with discovery=notifications")
        if settings:
            raise OptionError.unknown(
                NAME,
                f"{QUEUE.prefix}{sorted(settings)[0]}",
                f"{QUEUE.shown_name} settings apply only with discovery=notifications",
            )
        return None
    backend = backend_for(location.protocol)
    if backend is None:
        raise opts.error(
            DISCOVERY,
            "notifications need a path on "
            + " or on ".join(b.serves for b in BACKENDS)
            + f", not {location.protocol}://",
        )
    url = opts.require(QUEUE_URL, "the URL of the queue the storage events arrive in")
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path.strip("/") == "":
        raise opts.error(QUEUE_URL, "expected an http(s) URL of a queue")
    for key in sorted(settings):
        if key not in backend.settings:
            raise OptionError.unknown(
                NAME,
                f"{QUEUE.prefix}{key}",
                f"{backend.title} takes "
                + ", ".join(f"{QUEUE.prefix}{k}" for k in backend.settings),
            )
    module, extra = backend.client_module, backend.extra
    if importlib.util.find_spec(module.split(".")[0]) is None or (
        importlib.util.find_spec(module) is None
    ):
        raise opts.error(
            DISCOVERY,
            f"notifications from this queue need {module}: {pip_install(extra=extra)}",
        )
    return opts.fill(
        NotificationOptions,
        kind=backend.kind,
        url=url.strip(),
        settings=settings,
        visibility_timeout_s=max(1, math.ceil(opts.value(QUEUE_VISIBILITY_TIMEOUT))),
        leave_unreadable=opts.value(UNREADABLE_MESSAGES) == "leave",
    )


def _schema_policy(
    opts: Options, storage: dict[str, str], path: str, inferred: bool
) -> SchemaPolicy:
    from pysparksources.files.schema.hints import parse_hints

    location = None
    url = opts.get(SCHEMA_LOCATION)
    if url:
        location = _resolve(opts, SCHEMA_LOCATION, url, storage if _same_fs(url, path) else {})
    hints = opts.get(SCHEMA_HINTS)
    if hints is not None:
        if not inferred:
            raise opts.error(
                SCHEMA_HINTS,
                "applies only when pyfile infers the schema: leave out .schema(...), or put "
                "the types in it",
            )
        try:
            parse_hints(hints)
        except SchemaError as error:
            raise opts.error(SCHEMA_HINTS, error.detail) from None
    if opts.get(RESCUED_DATA_COLUMN) == "":
        raise opts.error(RESCUED_DATA_COLUMN, "expected a column name")
    policy = opts.fill(SchemaPolicy, location=location, inferred=inferred)
    if policy.mode() == "addNewColumns" and (location is None or not inferred):
        raise opts.error(
            SCHEMA_EVOLUTION_MODE,
            "addNewColumns needs a schemaLocation, where new columns are recorded, and no "
            ".schema(...) (pyfile then infers the schema and keeps it there)",
        )
    return policy


def _inference_options(opts: Options) -> InferenceOptions:
    if opts.value(SAMPLING_RATIO) <= 0:
        raise opts.error(SAMPLING_RATIO, "expected a number more than 0 and at most 1")
    return opts.fill(InferenceOptions)


def _resolve(opts: Options, option: Option[Any], url: str, storage: dict[str, str]) -> FileLocation:
    try:
        return resolve(url, storage)
    except (ValueError, ImportError) as exc:
        # fsspec's message names the protocol or the missing package, never storage options.
        raise opts.error(option, f"not a usable fsspec URL ({exc})") from None


def _check_glob(opts: Options, option: Option[Any], pattern: str | None) -> None:
    from pysparksources.files.storage.folder_listing import check_glob

    if pattern is not None:
        try:
            check_glob(pattern)
        except ArgumentError as error:
            raise opts.error(option, error.detail) from None


def _same_fs(url: str, other: str) -> bool:
    from fsspec.core import split_protocol

    return (split_protocol(url)[0] or "file") == (split_protocol(other)[0] or "file")


def _check_archive(opts: Options, source: FileLocation, archive: FileLocation) -> None:
    """Spark's safety rules: same filesystem, and the archive folder must not match the source
    path (a glob pattern) in its first N folder levels, N being the smaller of the two depths.

    Archived files land at ``<archive>/<full source path>``; the rule keeps them away from
    whatever the source lists (it is Spark's, checked against Spark in the parity tests).
    """
    from pysparksources.files.storage.folder_listing import glob_regex

    if archive.protocol != source.protocol:
        raise opts.error(SOURCE_ARCHIVE_DIR, "must be on the same filesystem as the source path")
    pattern = [p for p in source.path.split("/") if p]
    folders = [p for p in archive.path.split("/") if p]
    depth = min(len(pattern), len(folders))
    if all(glob_regex(p).match(f) for p, f in zip(pattern[:depth], folders[:depth], strict=True)):
        raise opts.error(
            SOURCE_ARCHIVE_DIR,
            f"must not match the source path in its first {depth} folder levels (Spark's rule): "
            "archived files could be listed again; pick a folder outside the source path",
        )


# -- the sink ---------------------------------------------------------------------------
def _sink(opts: Options, column_names: list[str]) -> SinkConfig:
    """Validate the sink's options against the query's columns."""
    fmt = opts.value(SINK_FORMAT)
    try:
        compression = COMPRESSION.for_format(fmt, opts.raw(COMPRESSION))
    except ValueError as error:
        raise opts.error(COMPRESSION, str(error)) from None
    location, base_url = _location(opts)
    partition_by = _partition_columns(opts, column_names)
    data_columns = [c for c in column_names if c not in partition_by]
    if not data_columns:
        raise opts.error(PARTITION_BY, "at least one column must stay in the data files")
    opts.value(SINK_SEP)  # a bad sep is named as such even with a format that takes none
    _check_format_options(opts, fmt, WRITE_FORMAT_OPTIONS)
    return opts.fill(
        SinkConfig,
        location=location,
        base_url=base_url,
        compression=compression,
        partition_by=partition_by,
        retention=opts.fill(
            ManifestRetention,
            cleanup_delay_ms=int(1000 * opts.value(LOG_CLEANUP_DELAY)),
            output_ttl_ms=_millis(opts.get(OUTPUT_RETENTION)),
        ),
        format_options=format_values(opts, format_named(fmt), Use.WRITE),
    )


def _location(opts: Options) -> tuple[FileLocation, str]:
    url = opts.require(SINK_PATH, "the output folder: .option('path', url) or .start(url)")
    url = url.strip()
    location = _resolve(opts, SINK_PATH, url, opts.family(FS))
    try:
        fs = location.filesystem()
    except ImportError as exc:
        raise opts.error(SINK_PATH, f"its filesystem needs a missing package ({exc})") from None
    except Exception as exc:  # a backend refusing its options, e.g. a malformed account
        raise opts.error(
            SINK_PATH, f"its filesystem could not be created ({type(exc).__name__})"
        ) from None
    with credentials_kept_out("could not look at the sink's path"):
        if fs.isfile(location.path):
            raise opts.error(SINK_PATH, "this is an existing file; the sink needs a folder")
    problem = exclusive_create_problem(location)
    if problem is not None:
        # The manifest's exactly-once rests on create-if-absent: refuse rather than overwrite.
        raise opts.error(SINK_PATH, problem)
    if location.protocol == "file":
        # Manifest entries are full URIs, as Spark's FileStreamSink writes them.
        return location, location.url()
    # The URL the user gave, less any credential in it (user:password@, a SAS query): a
    # reader finds the files with the scheme, host and path; credentials are its own.
    return location, public_url(url.rstrip("/"))


def _partition_columns(opts: Options, column_names: list[str]) -> tuple[str, ...]:
    text = opts.get(PARTITION_BY)
    if text is None or not text.strip():
        return ()
    names = tuple(name.strip() for name in text.split(","))
    lookup = {c.lower(): c for c in column_names}
    resolved: list[str] = []
    for name in names:
        column = lookup.get(name.lower())
        if column is None:
            raise opts.error(
                PARTITION_BY, f"column {name!r} is not in the data; columns: {column_names}"
            )
        if column in resolved:
            raise opts.error(PARTITION_BY, f"column {column!r} is listed twice")
        resolved.append(column)
    return tuple(resolved)


def _millis(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1000)
