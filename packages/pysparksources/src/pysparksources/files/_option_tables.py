"""pyfile's option tables: every name with the default and meaning the docs show.

The README and docs/pyfile-*.md are checked against these; ``options`` validates with them.
"""

from __future__ import annotations

__all__ = [
    "ALIASES",
    "COMPRESSIONS",
    "CSV_OPTIONS",
    "DEFAULT_COMPRESSION",
    "JSON_OPTIONS",
    "KNOWN_BY_FORMAT",
    "READ_FORMATS",
    "SINK_ALIASES",
    "SINK_OPTIONS",
    "SOURCE_OPTIONS",
    "TEXT_OPTIONS",
    "UNSUPPORTED",
    "WRITE_FORMATS",
]

# -- the source ---------------------------------------------------------------------------
READ_FORMATS = ("parquet", "csv", "json", "text", "orc")

# name -> (default shown in the docs, meaning). docs/pyfile-source.md is checked against this.
SOURCE_OPTIONS: dict[str, tuple[str, str]] = {
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
    "recursiveFileLookup": ("false", "true: read every subfolder, with no partition columns"),
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
# Spark's other names of reader options: the same option (giving both is an error).
ALIASES = {"delimiter": "sep", "charset": "encoding"}
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
KNOWN_BY_FORMAT: dict[str, tuple[str, ...]] = {
    "csv": tuple(CSV_OPTIONS),
    "json": JSON_OPTIONS,
    "text": ("encoding", "charset", *TEXT_OPTIONS),
    "parquet": (),
    "orc": (),
}
# Spark options pyfile knows but cannot honor: an error beats a silent difference.
UNSUPPORTED = {
    "inferSchema": "pyfile needs a schema (.schema(...)); it does not infer one",
    "comment": "pyarrow's csv reader has no comment lines",
    "columnNameOfCorruptRecord": "malformed records fail their file (see ignoreCorruptFiles)",
    "mergeSchema": "columns are read by the given schema",
    "samplingRatio": "pyfile does not infer schemas",
    "primitivesAsString": "columns are cast to the given schema",
}


# -- the sink -----------------------------------------------------------------------------
WRITE_FORMATS = ("parquet", "csv", "json", "text")

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

SINK_ALIASES = {"delimiter": "sep"}
# name -> (default shown in the docs, meaning). docs/pyfile-sink.md is checked against this.
SINK_OPTIONS: dict[str, tuple[str, str]] = {
    "path": (
        "required",
        "output folder: any fsspec URL or local path (the argument of start()), taken literally "
        "as Spark's sink does (`out[1]` is a folder named so)",
    ),
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
    "queryName": ("unset", "Spark passes writeStream.queryName(...) as an option (not read here)"),
    "header": ("false", "csv: write a header line in each file"),
    "sep": (",", "csv: field separator (one character); alias delimiter"),
    "delimiter": (",", "csv: alias of sep"),
    "ignoreNullFields": ("true", "json: leave null fields out of the objects, like Spark"),
    "timeZone": (
        "unset (UTC, with Z)",
        "csv/json: write timestamps as wall times in this zone with their offset, as Spark does",
    ),
    "parquetRowGroupRows": ("1048576", "parquet: at most this many rows per row group"),
    "minBatchesToRetain": (
        "100",
        "manifest files of the last this many batches are kept (Spark's "
        "spark.sql.streaming.minBatchesToRetain); older ones superseded by a compact file go",
    ),
    "logCleanupDelay": (
        "10m",
        "a superseded manifest file is deleted only once this old, so readers that listed "
        "it can still open it (spark.sql.streaming.fileSink.log.cleanupDelay)",
    ),
    "logDeletion": (
        "true",
        "false keeps every manifest file (spark.sql.streaming.fileSink.log.deletion)",
    ),
    "fs.<name>": ("unset", "storage option <name> passed to the fsspec filesystem (secrets ok)"),
}
