"""pyfile sink options, validated once when the query starts.

Spark builds the writer on the driver before the first batch, so every check here (format,
compression, path, partition columns against the schema, output mode) fails the query at its
start with an :class:`OptionError` naming the option, never inside a task later.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pysparksources._options import OptionError, Options
from pysparksources.files.filesystem import FileLocation, resolve

__all__ = [
    "COMPRESSIONS",
    "FORMATS",
    "OPTIONS",
    "SinkConfig",
    "parse_sink_options",
]

SINK = "pyfile"
FORMATS = ("parquet", "csv", "json", "text")

# Codec name -> file-name suffix. Parquet compresses inside the file; the text formats
# compress the whole file, with the suffix Hadoop (and so Spark's readers) use to detect it.
COMPRESSIONS: dict[str, dict[str, str]] = {
    "parquet": {
        "none": "",
        "uncompressed": "",
        "snappy": ".snappy",
        "gzip": ".gz",
        "zstd": ".zstd",
        "lz4": ".lz4raw",
    },
    "text": {"none": "", "uncompressed": "", "gzip": ".gz", "bzip2": ".bz2", "zstd": ".zst"},
}
COMPRESSIONS["csv"] = COMPRESSIONS["json"] = COMPRESSIONS["text"]
DEFAULT_COMPRESSION = {"parquet": "snappy", "csv": "none", "json": "none", "text": "none"}

# name -> (default shown in the docs, meaning). docs/pyfile-sink.md is checked against this.
OPTIONS: dict[str, tuple[str, str]] = {
    "path": ("required", "output folder: any fsspec URL or local path (the argument of start())"),
    "format": ("parquet", "parquet, csv, json (JSON Lines) or text"),
    "compression": (
        "snappy (parquet), none (others)",
        "parquet: none, snappy, gzip, zstd, lz4; csv/json/text: none, gzip, bzip2, zstd",
    ),
    "partitionBy": (
        "unset",
        "comma-separated columns written as Hive folders col=value/ (not in the files)",
    ),
    "maxRecordsPerFile": ("0", "start a new file after this many rows (0: no limit)"),
    "checkpointLocation": ("unset", "Spark's own option: the query's checkpoint (not read here)"),
    "header": ("false", "csv: write a header line in each file"),
    "sep": (",", "csv: field separator (one character); alias delimiter"),
    "delimiter": (",", "csv: alias of sep"),
    "ignoreNullFields": ("true", "json: leave null fields out of the objects, like Spark"),
    "timeZone": (
        "unset (UTC, with Z)",
        "csv/json: write timestamps as wall times in this zone with their offset, as Spark does",
    ),
    "parquetRowGroupRows": ("1048576", "parquet: at most this many rows per row group"),
    "fs.<name>": ("unset", "storage option <name> passed to the fsspec filesystem (secrets ok)"),
}
_KNOWN = [name for name in OPTIONS if not name.startswith("fs.")]


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
    options = Options(SINK, raw, _KNOWN, prefixes=("fs.",), secrets=())
    if overwrite:
        raise OptionError(
            SINK,
            "outputMode",
            "complete/overwrite",
            "pyfile only appends: use outputMode('append') for streams and mode('append') for "
            "batch writes (Spark passed overwrite=True, which complete mode and "
            "mode('overwrite') do)",
        )
    fmt = options.choice("format", "parquet", FORMATS)
    codecs = COMPRESSIONS[fmt]
    compression = options.choice("compression", DEFAULT_COMPRESSION[fmt], codecs).lower()
    if compression == "uncompressed":
        compression = "none"
    location, base_url = _location(options)
    partition_by = _partition_columns(options, column_names)
    data_columns = [c for c in column_names if c not in partition_by]
    if not data_columns:
        raise options.error("partitionBy", "at least one column must stay in the data files")
    sep = options.string("sep", options.string("delimiter", ","))
    if sep is None or len(sep) != 1 or sep in '\r\n"':
        name = "sep" if options.has("sep") else "delimiter"
        raise options.error(name, "expected one character (not a quote or a line break)")
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
        max_records_per_file=options.integer("maxRecordsPerFile", 0, minimum=0) or 0,
        csv_header=options.boolean("header", False),
        csv_sep=sep,
        ignore_null_fields=options.boolean("ignoreNullFields", True),
        row_group_rows=options.integer("parquetRowGroupRows", 1 << 20, minimum=1) or 1 << 20,
        time_zone=time_zone,
    )


def _location(options: Options) -> tuple[FileLocation, str]:
    url = (options.string("path") or "").strip()
    if not url:
        raise options.error(
            "path", "an output folder is required: .option('path', url) or .start(url)"
        )
    if any(ch in url for ch in "*?[]{}"):
        raise options.error("path", "the output folder cannot be a glob pattern")
    try:
        location = resolve(url, options.with_prefix("fs."))
    except (ValueError, ImportError) as exc:
        # The message names the protocol or the missing package, never storage options.
        raise options.error("path", f"not a usable fsspec URL ({exc})") from None
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
