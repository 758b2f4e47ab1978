"""pyfile's options: the one declaration the parser, the defaults and the docs come from.

One table for the format: the source's options (``spark.readStream``, ``spark.read``) and the
sink's (``df.writeStream``, ``df.write``). Names the two share but read differently (``path``,
``format``, ``header``, ``sep``, ``timeZone``) are declared once for each side. The csv, json
and text reader options apply to some read formats only: each format names them (its
``read_options``, in ``files/formats/<format>.py``), :data:`READ_FORMAT_OPTIONS` collects them,
and the parser refuses the others ("this option does not apply to format parquet");
:data:`WRITE_FORMAT_OPTIONS` does the same for the sink. The formats, their codecs and the
options a format declares itself come from the formats' registry.

:data:`TABLE` holds every option declared here, in this order (the docs' order), then the
formats' own options. An option whose value a config of ``config.py`` holds as parsed names its
field (``config_field``), and the parser copies it there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pysparksources._core.option_table import (
    Choice,
    Duration,
    Flag,
    Integer,
    Number,
    Option,
    OptionFamily,
    OptionTable,
    Size,
    Text,
    Use,
)
from pysparksources.files import NAME
from pysparksources.files.formats import (
    FORMATS,
    READ_FORMATS,
    WRITE_FORMATS,
    FileFormat,
    WritableFormat,
)

_WRITABLE = tuple(fmt for fmt in FORMATS if isinstance(fmt, WritableFormat))
INT_MAX = 2**31 - 1


# -- values with a grammar of their own -------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class Char(Option[str]):
    """One character (``allow_empty``: or none, which turns quoting or escaping off)."""

    allow_empty: bool = False
    forbidden: str = ""
    accepted: str = "expected exactly one character"

    def parse(self, text: str) -> str:
        if text == "" and self.allow_empty:
            return text
        if len(text) != 1 or text in self.forbidden:
            raise ValueError(self.accepted)
        return text


@dataclass(frozen=True, kw_only=True)
class NonEmptyText(Option[str]):
    """Text that must not be empty."""

    accepted: str

    def parse(self, text: str) -> str:
        if text == "":
            raise ValueError(self.accepted)
        return text


@dataclass(frozen=True, kw_only=True)
class Encoding(Option[str]):
    """A character set Python can decode (``UTF-8``, ``ISO-8859-1``, ``UTF-16``...)."""

    def parse(self, text: str) -> str:
        try:
            "".encode(text)
        except (LookupError, ValueError):
            raise ValueError("expected a character set Python knows") from None
        return text


@dataclass(frozen=True, kw_only=True)
class DatetimePattern(Option[str]):
    """A Spark datetime pattern pyfile can parse (``yyyy-MM-dd HH:mm:ss.SSS``...)."""

    def parse(self, text: str) -> str:
        from pysparksources.files.values.conversions import check_datetime_pattern

        if not check_datetime_pattern(text):
            raise ValueError(
                "expected a Spark datetime pattern made of yyyy, MM, dd, HH, mm, ss, "
                "SSS..., XXX and literal separators"
            )
        return text


@dataclass(frozen=True, kw_only=True)
class Zone(Option[str]):
    """A time zone id; the value is the zone in the form Arrow takes (``+05:30``, ``UTC``)."""

    def parse(self, text: str) -> str:
        from pysparksources.files.values.zones import check_zone

        zone = check_zone(text)
        if zone is None:
            raise ValueError("expected a time zone id such as America/Los_Angeles, UTC or +05:30")
        return zone


@dataclass(frozen=True, kw_only=True)
class FileNameGlob(Option[str]):
    """A Hadoop glob for file names only (``*.csv``, ``part-[0-9]*``): no folder."""

    def parse(self, text: str) -> str:
        from pysparksources.errors import ArgumentError
        from pysparksources.files.storage.folder_listing import check_glob

        if "/" in text or not text:
            raise ValueError("expected a file-name glob such as *.csv (no '/')")
        try:
            check_glob(text)
        except ArgumentError as error:  # what Hadoop would refuse, as the accepted-values text
            raise ValueError(error.detail) from None
        return text


@dataclass(frozen=True, kw_only=True)
class Codec(Option[str]):
    """A compression codec among those of the output format; ``uncompressed`` means ``none``.

    ``codecs`` maps each format to its codec names (to file-name suffixes), ``defaults`` each
    format to its default codec. Which codecs are valid depends on the ``format`` option, so
    the parser calls :meth:`for_format`; :meth:`parse` accepts a codec of any format.
    """

    codecs: Mapping[str, Mapping[str, str]]
    defaults: Mapping[str, str] = field(default_factory=dict)

    def parse(self, text: str) -> str:
        names = dict.fromkeys(name for codecs in self.codecs.values() for name in codecs)
        return self._pick(text, tuple(names))

    def for_format(self, fmt: str, text: str | None) -> str:
        """The codec of ``fmt`` named by ``text`` (None: the format's default), canonical."""
        chosen = self.defaults[fmt] if text is None else self._pick(text, tuple(self.codecs[fmt]))
        return "none" if chosen == "uncompressed" else chosen

    @staticmethod
    def _pick(text: str, names: tuple[str, ...]) -> str:
        canonical = {name.lower(): name for name in names}
        try:
            return canonical[text.strip().lower()]
        except KeyError:
            raise ValueError("expected one of " + ", ".join(names)) from None


# -- what the docs say of the formats, from the formats --------------------------------------
def _listed(names: list[str]) -> str:
    """``a, b or c``."""
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]


def _codecs_doc(formats: tuple[WritableFormat, ...]) -> str:
    """``parquet: none, snappy, ...; csv/json/text: none, gzip, ...``: formats with the same
    codecs named together."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for fmt in formats:
        codecs = tuple(codec for codec in fmt.codecs if codec != "uncompressed")
        groups.setdefault(codecs, []).append(fmt.name)
    return "; ".join(f"{'/'.join(names)}: {', '.join(codecs)}" for codecs, names in groups.items())


def _default_codecs_doc(formats: tuple[WritableFormat, ...]) -> str:
    r"""``\`snappy\` (parquet), \`none\` (others)``: the most common default last."""
    groups: dict[str, list[str]] = {}
    for fmt in formats:
        groups.setdefault(fmt.default_codec, []).append(fmt.name)
    if len(groups) == 1:
        return f"`{next(iter(groups))}`"
    common = max(groups, key=lambda codec: len(groups[codec]))
    shown = [
        f"`{codec}` ({', '.join(names)})" for codec, names in groups.items() if codec != common
    ]
    return ", ".join([*shown, f"`{common}` (others)"])


# -- the source: spark.readStream and spark.read -----------------------------------------------
PATH = Text(
    name="path",
    doc="Any fsspec URL or local path; globs allowed, `\\` escapes a glob character (the "
    "argument of load()); a folder or a single file; one that does not exist is an error at "
    "query start, as in Spark (a glob may match nothing yet).",
    shown_default="required",
    uses=Use.READ,
)
FORMAT = Choice(
    name="format",
    doc=_listed([fmt.title for fmt in FORMATS]) + ".",
    default="parquet",
    choices=READ_FORMATS,
    uses=Use.READ,
    config_field="ReaderOptions.format",
)
SOURCE_LOG_LOCATION = Text(
    name="sourceLogLocation",
    doc="fsspec URL of the source's own batch -> files log: one per checkpoint, kept for its "
    "life (a fresh checkpoint on a used log, or a checkpoint on another log, is refused at "
    "start). With ignoreCorruptFiles the skipped files are recorded under it.",
    shown_default="required for streams",
    uses=Use.READ,
)
MAX_FILES_PER_TRIGGER = Integer(
    name="maxFilesPerTrigger",
    doc="At most this many new files per micro-batch.",
    minimum=1,
    uses=Use.READ,
    config_field="SourceConfig.max_files_per_trigger",
)
MAX_BYTES_PER_TRIGGER = Size(
    name="maxBytesPerTrigger",
    doc="At most this many bytes per micro-batch (the first file always); not together with "
    "maxFilesPerTrigger.",
    uses=Use.READ,
    config_field="SourceConfig.max_bytes_per_trigger",
)
LATEST_FIRST = Flag(
    name="latestFirst",
    doc="Process the newest files first.",
    default="false",
    uses=Use.READ,
    config_field="SourceConfig.latest_first",
)
MAX_FILE_AGE = Duration(
    name="maxFileAge",
    doc="Ignore files older than this, relative to the newest file seen (not applied with "
    "latestFirst plus a max option, as in Spark); a bare number is milliseconds, as in Spark.",
    default="7d",
    bare_unit="ms",
    uses=Use.READ,
)
FILE_NAME_ONLY = Flag(
    name="fileNameOnly",
    doc="Identify files by name only (not by full path).",
    default="false",
    uses=Use.READ,
    config_field="SourceConfig.file_name_only",
)
MAX_CACHED_FILES = Integer(
    name="maxCachedFiles",
    doc="Unread listed files kept for the next batch (0 disables the cache).",
    default="10000",
    minimum=0,
    maximum=INT_MAX,
    uses=Use.READ,
    config_field="SourceConfig.max_cached_files",
)
DISCARD_CACHED_INPUT_RATIO = Number(
    name="discardCachedInputRatio",
    doc="Drop the leftover cache when smaller than this share of the limit.",
    default="0.2",
    minimum=0.0,
    maximum=1.0,
    uses=Use.READ,
    config_field="SourceConfig.discard_cached_input_ratio",
)
CLEAN_SOURCE = Choice(
    name="cleanSource",
    doc="off, archive or delete the files of a batch once it is committed.",
    default="off",
    choices=("off", "archive", "delete"),
    uses=Use.READ,
    config_field="SourceConfig.clean_source",
)
SOURCE_ARCHIVE_DIR = Text(
    name="sourceArchiveDir",
    doc="Where cleanSource=archive moves files (same filesystem; must not match the source "
    "path in its first folder levels, Spark's rule).",
    uses=Use.READ,
)
PATH_GLOB_FILTER = FileNameGlob(
    name="pathGlobFilter",
    doc="Only read files whose name matches this glob.",
    uses=Use.READ,
    config_field="SourceConfig.path_glob_filter",
)
RECURSIVE_FILE_LOOKUP = Flag(
    name="recursiveFileLookup",
    doc="true: read every subfolder, with no partition columns.",
    default="false",
    uses=Use.READ,
    config_field="SourceConfig.recursive_file_lookup",
)
IGNORE_CORRUPT_FILES = Flag(
    name="ignoreCorruptFiles",
    doc="Skip (and log) files that cannot be parsed.",
    default="false",
    uses=Use.READ,
    config_field="ReaderOptions.ignore_corrupt_files",
)
IGNORE_MISSING_FILES = Flag(
    name="ignoreMissingFiles",
    doc="Skip files deleted between listing and reading.",
    default="false",
    uses=Use.READ,
    config_field="ReaderOptions.ignore_missing_files",
)
MAX_PARTITION_BYTES = Size(
    name="maxPartitionBytes",
    doc="Target bytes per input partition (task).",
    default="128m",
    uses=Use.READ,
    config_field="SourceConfig.max_partition_bytes",
)
OPEN_COST_IN_BYTES = Size(
    name="openCostInBytes",
    doc="Estimated cost of opening a file, in bytes, when packing files into partitions.",
    default="4m",
    uses=Use.READ,
    config_field="SourceConfig.open_cost_bytes",
)
SOURCE_LOG_LEASE_TIMEOUT = Duration(
    name="sourceLogLeaseTimeout",
    doc="A source log lease not renewed for this long is taken over by a new query.",
    default="60s",
    minimum=1.0,
    uses=Use.READ,
    config_field="SourceConfig.lease_timeout_s",
)
SOURCE_LOG_COMPACT_INTERVAL = Integer(
    name="sourceLogCompactInterval",
    doc="Every this many batches the source log writes a `<id>.compact` file holding the "
    "earlier batches, so start-up reads one compact file plus the batch files after it "
    "(Spark's spark.sql.streaming.fileSource.log.compactInterval). A log that already has "
    "compact files keeps the interval they were written with, as Spark does (logged as a "
    "warning).",
    default="10",
    minimum=1,
    maximum=INT_MAX,
    uses=Use.READ,
    config_field="SourceConfig.log_compact_interval",
)
SOURCE_LOG_CLEANUP_DELAY = Duration(
    name="sourceLogCleanupDelay",
    doc="A source log file superseded by a compact file is deleted (at a compaction) only "
    "once its modification time is this old, so a reader that listed the log just before "
    "can still open it (Spark's spark.sql.streaming.fileSource.log.cleanupDelay); a bare "
    "number is milliseconds, as in Spark.",
    default="10m",
    bare_unit="ms",
    uses=Use.READ,
)
SOURCE_LOG_DELETION = Flag(
    name="sourceLogDeletion",
    doc="false keeps every source log file (Spark's spark.sql.streaming.fileSource.log.deletion).",
    default="true",
    uses=Use.READ,
    config_field="SourceConfig.log_deletion",
)

# How a stream finds new files (docs/pyfile-discovery.md): listing, or storage events in a queue.
DISCOVERY = Choice(
    name="discovery",
    doc="How a stream finds new files: listing (list the path every trigger) or notifications "
    "(read storage events from queueUrl: Event Grid into an Azure Storage queue for abfs://, "
    "S3 event notifications into SQS for s3://).",
    default="listing",
    choices=("listing", "notifications"),
    uses=Use.STREAM_READ,
)
QUEUE_URL = Text(
    name="queueUrl",
    doc="discovery=notifications: URL of the queue the storage events arrive in "
    "(https://<account>.queue.core.windows.net/<queue>, or an SQS queue URL); treated as a "
    "secret (it may carry a SAS token).",
    shown_default="required with notifications",
    secret=True,
    uses=Use.STREAM_READ,
)
QUEUE_VISIBILITY_TIMEOUT = Duration(
    name="queueVisibilityTimeout",
    doc="discovery=notifications: how long a received message stays hidden from other "
    "readers; one still held then (its batch not committed yet) is received again and held "
    "again, never read twice.",
    default="5m",
    minimum=1.0,
    uses=Use.STREAM_READ,
)
BACKFILL_INTERVAL = Duration(
    name="backfillInterval",
    doc="discovery=notifications: list the path this often too, to find files whose "
    "notification never came (unset: never).",
    minimum=1.0,
    uses=Use.STREAM_READ,
    config_field="NotificationOptions.backfill_interval_s",
)
INCLUDE_EXISTING_FILES = Flag(
    name="includeExistingFiles",
    doc="discovery=notifications: list the path once when the stream starts fresh and read "
    "the files already there; false reads only files that arrive later (backfills too).",
    default="true",
    uses=Use.STREAM_READ,
    config_field="NotificationOptions.include_existing",
)
UNREADABLE_MESSAGES = Choice(
    name="unreadableMessages",
    doc="discovery=notifications: what becomes of a queue message this source does not read "
    "(not a storage event, or one of a type or shape it does not read): delete it, or leave it "
    "in the queue, hidden for an hour at each receipt, for the queue's dead-letter policy. "
    "Either way it is logged (rate-limited) and counted in the progress.",
    default="delete",
    choices=("delete", "leave"),
    uses=Use.STREAM_READ,
)

# Spark's csv/json/text reader options that pyfile maps onto pyarrow.
HEADER = Flag(
    name="header",
    doc="csv: skip the first line of each file (columns map by position).",
    default="false",
    uses=Use.READ,
    config_field="ReaderOptions.header",
)
SEP = Char(
    name="sep",
    doc="csv: field separator (one character).",
    default=",",
    aliases=("delimiter",),
    uses=Use.READ,
    config_field="ReaderOptions.sep",
)
QUOTE = Char(
    name="quote",
    doc="csv: quote character; an empty string turns quoting off.",
    default='"',
    allow_empty=True,
    uses=Use.READ,
    config_field="ReaderOptions.quote",
)
ESCAPE = Char(
    name="escape",
    doc="csv: escape character inside quoted values.",
    default="\\",
    allow_empty=True,
    uses=Use.READ,
    config_field="ReaderOptions.escape",
)
NULL_VALUE = Text(
    name="nullValue",
    doc="csv: the text that means null.",
    default="",
    uses=Use.READ,
    config_field="ReaderOptions.null_value",
)
ENCODING = Encoding(
    name="encoding",
    doc="csv/json/text: character set of the files.",
    default="UTF-8",
    aliases=("charset",),
    uses=Use.READ,
    config_field="ReaderOptions.encoding",
)
MULTI_LINE = Flag(
    name="multiLine",
    doc="csv: quoted values may span lines; json: each file is one JSON document (an object, "
    "or an array of objects: one row each) instead of JSON Lines.",
    default="false",
    uses=Use.READ,
    config_field="ReaderOptions.multi_line",
)
DATE_FORMAT = DatetimePattern(
    name="dateFormat",
    doc="csv/json: pattern of DATE values.",
    shown_default="`yyyy-MM-dd`",
    uses=Use.READ,
    config_field="ReaderOptions.date_format",
)
TIMESTAMP_FORMAT = DatetimePattern(
    name="timestampFormat",
    doc="csv/json: pattern of TIMESTAMP values.",
    shown_default="ISO 8601",
    uses=Use.READ,
    config_field="ReaderOptions.timestamp_format",
)
MODE = Choice(
    name="mode",
    doc="csv/json: what a malformed record does, as in Spark: PERMISSIVE keeps it (fields that "
    "do not parse are null, the record's text goes to the corrupt-record column), "
    "DROPMALFORMED drops it, FAILFAST fails its file.",
    default="PERMISSIVE",
    choices=("PERMISSIVE", "DROPMALFORMED", "FAILFAST"),
    uses=Use.READ,
    config_field="ReaderOptions.mode",
)
CORRUPT_RECORD_COLUMN = Text(
    name="columnNameOfCorruptRecord",
    doc="csv/json, mode PERMISSIVE: the STRING column of the schema that receives a malformed "
    "record's text (without it in the schema, the text is not kept).",
    default="_corrupt_record",
    uses=Use.READ,
    config_field="ReaderOptions.corrupt_column",
)
INFER_SCHEMA = Flag(
    name="inferSchema",
    doc="csv, reads without a schema: infer each column's type from the values (int, bigint, "
    "decimal, double, date, timestamp, boolean) as Spark does; false reads every column as "
    "STRING.",
    default="false",
    uses=Use.READ,
    config_field="InferenceOptions.infer_types",
)
SAMPLING_RATIO = Number(
    name="samplingRatio",
    doc="csv/json, reads without a schema: the fraction of records inference looks at "
    "(more than 0, at most 1).",
    default="1.0",
    minimum=0.0,
    maximum=1.0,
    uses=Use.READ,
    config_field="InferenceOptions.sampling_ratio",
)
PRIMITIVES_AS_STRING = Flag(
    name="primitivesAsString",
    doc="json, reads without a schema: infer numbers and booleans as STRING, as Spark does.",
    default="false",
    uses=Use.READ,
    config_field="InferenceOptions.primitives_as_string",
)
PREFERS_DECIMAL = Flag(
    name="prefersDecimal",
    doc="json, reads without a schema: infer numbers with a fraction as DECIMAL where one "
    "holds them exactly, DOUBLE otherwise, as Spark does.",
    default="false",
    uses=Use.READ,
    config_field="InferenceOptions.prefers_decimal",
)
MERGE_SCHEMA = Flag(
    name="mergeSchema",
    doc="parquet/orc, reads without a schema: merge the columns of every sampled file's footer "
    "(types must agree) instead of taking the first file's, as Spark does.",
    default="false",
    uses=Use.READ,
    config_field="InferenceOptions.merge_schema",
)
SCHEMA_SAMPLE_FILES = Integer(
    name="schemaSampleFiles",
    doc="Reads without a schema: inference reads at most this many files, the first by path.",
    default="1000",
    minimum=1,
    uses=Use.READ,
    config_field="InferenceOptions.sample_files",
)
SCHEMA_SAMPLE_BYTES = Size(
    name="schemaSampleBytes",
    doc="Reads without a schema: csv and json inference reads at most this many bytes, whole "
    "files by path and the last one up to here (whole records, always at least one); parquet "
    "and orc count the footers read.",
    default="256m",
    uses=Use.READ,
    config_field="InferenceOptions.sample_bytes",
)
SCHEMA_LOCATION = Text(
    name="schemaLocation",
    doc="Reads without a schema: fsspec URL of a folder where the inferred schema is kept as "
    "versions (_schemas/0, 1, ...): the first start infers and records it, every later start "
    "reads it; new columns add versions (schemaEvolutionMode). One per stream.",
    uses=Use.READ,
)
SCHEMA_HINTS = Text(
    name="schemaHints",
    doc="Reads without a schema: DDL of column types that override inference "
    "(`id BIGINT, amount DECIMAL(12,2), payload.ts TIMESTAMP`); a hinted column the files "
    "lack is added.",
    uses=Use.READ,
    config_field="SchemaPolicy.hints",
)
SCHEMA_EVOLUTION_MODE = Choice(
    name="schemaEvolutionMode",
    doc="What columns the schema lacks do: addNewColumns records them as a new schema version "
    "and stops the query (a restart reads them), rescue keeps them in the rescued-data column, "
    "failOnNewColumns stops the query, none ignores them.",
    shown_default="`addNewColumns` with schemaLocation and no schema, else `none`",
    choices=("addNewColumns", "rescue", "failOnNewColumns", "none"),
    uses=Use.READ,
    config_field="SchemaPolicy.mode_option",
)
RESCUED_DATA_COLUMN = Text(
    name="rescuedDataColumn",
    doc="The STRING column that keeps what does not fit the schema (new columns, values of "
    "another type, names that differ by case) as a JSON object with the file's path; with a "
    "given schema, the schema must hold it.",
    shown_default="`_rescued_data` when rescuing",
    uses=Use.READ,
    config_field="SchemaPolicy.rescued_option",
)
TIME_ZONE = Zone(
    name="timeZone",
    doc="csv/json: zone of timestamps written without an offset (IANA name or +hh:mm), as "
    "Spark's reader option.",
    shown_default="session time zone",
    uses=Use.READ,
    config_field="ReaderOptions.time_zone",
)
WHOLETEXT = Flag(
    name="wholetext",
    doc="text: one row per file instead of one per line.",
    default="false",
    uses=Use.READ,
    config_field="ReaderOptions.wholetext",
)
LINE_SEP = NonEmptyText(
    name="lineSep",
    doc="text: line separator.",
    shown_default="`\\n`, `\\r\\n` or `\\r`",
    accepted="expected a non-empty separator",
    uses=Use.READ,
    config_field="ReaderOptions.line_sep",
)

# -- the sink: df.writeStream and df.write --------------------------------------------------
SINK_PATH = Text(
    name="path",
    doc="Output folder: any fsspec URL or local path (the argument of start() or save()), "
    "taken literally as Spark's sink does (`out[1]` is a folder named so).",
    shown_default="required",
    uses=Use.WRITE,
)
SINK_FORMAT = Choice(
    name="format",
    doc=_listed([fmt.written_title or fmt.title for fmt in _WRITABLE]) + ".",
    default="parquet",
    choices=WRITE_FORMATS,
    uses=Use.WRITE,
    config_field="SinkConfig.format",
)
COMPRESSION = Codec(
    name="compression",
    doc=_codecs_doc(_WRITABLE) + " (uncompressed is accepted as none).",
    shown_default=_default_codecs_doc(_WRITABLE),
    codecs={fmt.name: fmt.codecs for fmt in _WRITABLE},
    defaults={fmt.name: fmt.default_codec for fmt in _WRITABLE},
    uses=Use.WRITE,
)
PARTITION_BY = Text(
    name="partitionBy",
    doc="Comma-separated columns written as Hive folders col=value/ (not in the files).",
    uses=Use.WRITE,
)
MAX_RECORDS_PER_FILE = Integer(
    name="maxRecordsPerFile",
    doc="Start a new file after this many rows (0: no limit).",
    default="0",
    minimum=0,
    uses=Use.WRITE,
    config_field="SinkConfig.max_records_per_file",
)
CHECKPOINT_LOCATION = Text(
    name="checkpointLocation",
    doc=f"Spark's own option: the query's checkpoint (not read by {NAME}).",
    uses=Use.WRITE,
)
QUERY_NAME = Text(
    name="queryName",
    doc=f"Spark passes writeStream.queryName(...) as an option (not read by {NAME}).",
    uses=Use.WRITE,
)
SINK_HEADER = Flag(
    name="header",
    doc="csv: write a header line in each file.",
    default="false",
    uses=Use.WRITE,
    config_field="SinkConfig.csv_header",
)
SINK_SEP = Char(
    name="sep",
    doc="csv: field separator (one character).",
    default=",",
    aliases=("delimiter",),
    forbidden='\r\n"',
    accepted="expected one character (not a quote or a line break)",
    uses=Use.WRITE,
    config_field="SinkConfig.csv_sep",
)
IGNORE_NULL_FIELDS = Flag(
    name="ignoreNullFields",
    doc="json: leave null fields out of the objects, like Spark.",
    default="true",
    uses=Use.WRITE,
    config_field="SinkConfig.ignore_null_fields",
)
SINK_TIME_ZONE = Zone(
    name="timeZone",
    doc="csv/json: write timestamps as wall times in this zone with their offset, as Spark "
    "does in the session zone.",
    shown_default="unset (UTC, with Z)",
    uses=Use.WRITE,
    config_field="SinkConfig.time_zone",
)
PARQUET_ROW_GROUP_ROWS = Integer(
    name="parquetRowGroupRows",
    doc="parquet: at most this many rows per row group.",
    default="1048576",
    minimum=1,
    uses=Use.WRITE,
    config_field="SinkConfig.row_group_rows",
)
MIN_BATCHES_TO_RETAIN = Integer(
    name="minBatchesToRetain",
    doc="Manifest files of the last this many batches are kept; older ones superseded by a "
    "compact file are deleted (Spark's spark.sql.streaming.minBatchesToRetain).",
    default="100",
    minimum=1,
    uses=Use.WRITE,
    config_field="ManifestRetention.min_batches",
)
LOG_CLEANUP_DELAY = Duration(
    name="logCleanupDelay",
    doc="A superseded manifest file is deleted only once this old, so readers that listed it "
    "can still open it (Spark's spark.sql.streaming.fileSink.log.cleanupDelay).",
    default="10m",
    uses=Use.WRITE,
)
LOG_DELETION = Flag(
    name="logDeletion",
    doc="false keeps every manifest file (Spark's spark.sql.streaming.fileSink.log.deletion).",
    default="true",
    uses=Use.WRITE,
    config_field="ManifestRetention.enabled",
)
OUTPUT_RETENTION = Duration(
    name="retention",
    doc="Output files older than this (by the time they were written) leave the manifest at "
    "its next compaction, so readers no longer see them; the files stay on storage (Spark's "
    "file sink option; a bare number is milliseconds, as in Spark).",
    shown_default="unset (forever)",
    bare_unit="ms",
    uses=Use.WRITE,
)

FS = OptionFamily(
    "fs.",
    "Storage option `<name>` passed to the fsspec filesystem (fs.account_key, "
    "fs.connection_string, fs.anon...).",
)
QUEUE = OptionFamily(
    "queue.",
    "discovery=notifications: setting `<name>` of the queue client: for Azure "
    "connection_string, account_key or sas_token; for SQS region_name, endpoint_url, "
    "aws_access_key_id, aws_secret_access_key, aws_session_token or profile_name.",
    uses=Use.STREAM_READ,
)

# Spark options pyfile knows but cannot honor: an error beats a silent difference.
UNSUPPORTED = {
    "comment": "pyarrow's csv reader has no comment lines",
}

TABLE = OptionTable.declared(
    NAME,
    globals(),
    # What a format declares itself (files/formats/<format>.py).
    more=(option for fmt in FORMATS for option in fmt.declared_options),
    unsupported=UNSUPPORTED,
)


# Which format-specific options each format takes (the formats name them); given with another
# format they are an error ("this option does not apply to format parquet"), not ignored.
def _taken(fmt: FileFormat, names: tuple[str, ...], use: Use) -> tuple[Option[Any], ...]:
    """The options of ``use`` that ``fmt`` names, and those it declares itself."""
    declared = {option.name.lower(): option for option in TABLE.for_use(use)}
    missing = [name for name in names if name.lower() not in declared]
    if missing:
        raise ValueError(f"format {fmt.name} names options the table lacks: {missing}")
    own = tuple(option for option in fmt.declared_options if option.uses & use)
    return tuple(declared[name.lower()] for name in names) + own


READ_FORMAT_OPTIONS: Mapping[str, tuple[Option[Any], ...]] = {
    fmt.name: _taken(fmt, fmt.read_options, Use.READ) for fmt in FORMATS
}
WRITE_FORMAT_OPTIONS: Mapping[str, tuple[Option[Any], ...]] = {
    fmt.name: _taken(fmt, fmt.write_options, Use.WRITE) for fmt in _WRITABLE
}
