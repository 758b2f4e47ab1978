"""What pyfile's planners, tasks and commits know of the options: frozen, picklable values.

``options.parse_options`` fills every field from the option table (defaults included); this
module imports neither, so executor-side code (format readers and writers, planning, the
manifest) sees only these values. Storage options travel inside the
:class:`~pysparksources.files.storage.filesystem.FileLocation` values and are never printed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pysparksources.files.storage.filesystem import FileLocation

if TYPE_CHECKING:
    from pysparksources._core.option_table import Option

__all__ = [
    "RESCUED_DEFAULT",
    "SINK_COMPACT_INTERVAL",
    "InferenceOptions",
    "ManifestRetention",
    "NotificationOptions",
    "ReaderOptions",
    "SchemaPolicy",
    "SinkConfig",
    "SourceConfig",
]

# Spark's readers derive the sink's compact interval from the manifest's file names and only
# agree with its default, spark.sql.streaming.fileSink.log.compactInterval = 10: not an option.
SINK_COMPACT_INTERVAL = 10
T = TypeVar("T")


# -- the source ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ReaderOptions:
    """How tasks parse files; travels to executors inside each partition."""

    format: str
    header: bool
    sep: str
    quote: str
    escape: str
    null_value: str
    encoding: str
    multi_line: bool
    date_format: str | None
    timestamp_format: str | None
    wholetext: bool
    line_sep: str | None
    time_zone: str | None
    ignore_corrupt_files: bool
    ignore_missing_files: bool
    mode: str  # formats with parse modes: PERMISSIVE, DROPMALFORMED or FAILFAST
    corrupt_column: str  # formats with parse modes: where PERMISSIVE puts a record's text
    # The values of the read options a format declares itself, by option name.
    format_options: Mapping[str, Any]

    def format_option(self, option: Option[T]) -> T | None:
        """The value of a read option the format declares itself (given, else its default)."""
        return cast("T | None", self.format_options[option.name])


@dataclass(frozen=True)
class InferenceOptions:
    """How a read without a schema infers one (driver only; see ``schema.inference``)."""

    infer_types: bool  # csv: inferSchema
    sampling_ratio: float
    primitives_as_string: bool
    prefers_decimal: bool
    merge_schema: bool
    sample_files: int
    sample_bytes: int


RESCUED_DEFAULT = "_rescued_data"


@dataclass(frozen=True)
class SchemaPolicy:
    """Where the schema is kept and what columns it lacks do (see ``schema.evolution``)."""

    location: FileLocation | None
    hints: str | None
    mode_option: str | None
    rescued_option: str | None
    inferred: bool  # pyfile inferred the schema (no .schema(...))

    def mode(self, inferred: bool | None = None) -> str:
        """schemaEvolutionMode: as given, else addNewColumns for an inferred, located schema."""
        if self.mode_option is not None:
            return self.mode_option
        inferred = self.inferred if inferred is None else inferred
        return "addNewColumns" if inferred and self.location is not None else "none"

    def rescued_column(self, inferred: bool | None = None) -> str | None:
        """The rescued-data column, or None when nothing is rescued."""
        if self.rescued_option:
            return self.rescued_option
        inferred = self.inferred if inferred is None else inferred
        mode = self.mode(inferred)
        if mode == "rescue" or (inferred and mode in ("addNewColumns", "failOnNewColumns")):
            return RESCUED_DEFAULT
        return None


@dataclass(frozen=True)
class NotificationOptions:
    """discovery=notifications: the queue the storage events arrive in, and how it is read.

    ``url`` and ``settings`` may hold credentials: never printed (``__repr__``).
    """

    kind: str  # a queue backend (source/notifications/queues/): azure, sqs
    url: str
    settings: dict[str, str]
    visibility_timeout_s: int
    backfill_interval_s: float | None
    include_existing: bool
    leave_unreadable: bool = False  # unreadableMessages=leave

    def __repr__(self) -> str:
        return f"NotificationOptions({self.kind!r})"


@dataclass(frozen=True)
class SourceConfig:
    """Every validated option of one pyfile source; picklable, secrets only in locations."""

    location: FileLocation
    base: str
    pattern: str | None
    reader: ReaderOptions
    log_location: FileLocation | None
    max_files_per_trigger: int | None
    max_bytes_per_trigger: int | None
    latest_first: bool
    max_file_age_ms: int
    file_name_only: bool
    max_cached_files: int
    discard_cached_input_ratio: float
    clean_source: str
    archive_location: FileLocation | None
    path_glob_filter: str | None
    recursive_file_lookup: bool
    max_partition_bytes: int
    open_cost_bytes: int
    lease_timeout_s: float
    inference: InferenceOptions
    schema_policy: SchemaPolicy
    notifications: NotificationOptions | None  # None: discovery=listing
    # The source log: sourceLogCompactInterval, sourceLogCleanupDelay, sourceLogDeletion.
    log_compact_interval: int
    log_cleanup_delay_ms: int
    log_deletion: bool

    def __repr__(self) -> str:
        # base and pattern are the path as given: an http(s) URL's query (a SAS) stays there.
        return f"SourceConfig({self.location.url()!r}, format={self.reader.format!r})"

    @property
    def effective_max_file_age_ms(self) -> int | None:
        """Spark ignores maxFileAge when latestFirst is combined with a max option."""
        limited = self.max_files_per_trigger is not None or self.max_bytes_per_trigger is not None
        return None if self.latest_first and limited else self.max_file_age_ms


# -- the sink -----------------------------------------------------------------------------
@dataclass(frozen=True)
class ManifestRetention:
    """When superseded manifest files are deleted: Spark's ``CompactibleFileStreamLog`` rules.

    After batch ``b`` commits, files of batches before the compact file that still covers batch
    ``b + 1 - min_batches`` are deleted once they are ``cleanup_delay_ms`` old (a reader that
    listed the folder just before a compaction can still open them). The options
    ``logDeletion``, ``minBatchesToRetain`` and ``logCleanupDelay`` mirror Spark's
    ``spark.sql.streaming.fileSink.log.deletion``, ``spark.sql.streaming.minBatchesToRetain``
    and ``spark.sql.streaming.fileSink.log.cleanupDelay``.
    """

    enabled: bool
    min_batches: int
    cleanup_delay_ms: int
    # Spark's file sink ``retention``: entries of output files older than this are left out
    # of the next compact file (None: kept forever).
    output_ttl_ms: int | None


@dataclass(frozen=True)
class SinkConfig:
    """Everything a task or a commit needs; picklable, storage options never printed."""

    location: FileLocation
    base_url: str
    format: str
    compression: str
    partition_by: tuple[str, ...]
    max_records_per_file: int
    csv_header: bool
    csv_sep: str
    ignore_null_fields: bool
    row_group_rows: int
    time_zone: str | None
    retention: ManifestRetention
    # The values of the write options a format declares itself, by option name.
    format_options: Mapping[str, Any]

    def format_option(self, option: Option[T]) -> T | None:
        """The value of a write option the format declares itself (given, else its default)."""
        return cast("T | None", self.format_options[option.name])

    @property
    def compact_interval(self) -> int:
        return SINK_COMPACT_INTERVAL

    @property
    def metadata(self) -> FileLocation:
        """Where the manifest lives: ``<path>/_spark_metadata``."""
        return self.location.child("_spark_metadata")

    def __repr__(self) -> str:
        return f"SinkConfig({self.base_url!r}, format={self.format!r})"
