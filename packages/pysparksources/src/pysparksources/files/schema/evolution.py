"""Schemas that survive change: the schema location, hints, and what columns a schema lacks do.

Driver, at ``load()``: :func:`read_schema_of` infers the schema (or reads the latest version
from ``schemaLocation``, recording version 0 at the first start), applies ``schemaHints`` and
adds the rescued-data column. Executors: :func:`read_evolving` reads a file by its own columns
and fits them to the query's schema (see ``rescue``); columns the schema lacks then do what
``schemaEvolutionMode`` says:

- ``addNewColumns``: the columns (typed by inference on that file) are appended to the latest
  version as a new version, written durably first; then the task fails with
  :class:`~pysparksources.errors.SchemaChangedError`, which stops the query. Spark has not
  committed the batch, so the restart replays it, reading the new version at ``load()``.
- ``failOnNewColumns``: the query stops; nothing is recorded.
- ``rescue`` (and ``none`` with ``rescuedDataColumn``): the values go to the rescued column.
- ``none``: they are ignored; when that is only the default (a stream with an inferred schema
  and no ``schemaLocation``), the files are still read on the fast path, but each new file's
  columns are inferred (its sample: one more open) and a warning names the file, the columns
  and the option that keeps them (:func:`warn_if_new_columns`), once per set of columns in
  each Python worker.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Literal

from pyspark.sql.types import StringType, StructField, StructType

from pysparksources._core.hooks import HookPoint
from pysparksources.errors import SchemaChangedError, SchemaError
from pysparksources.files import NAME
from pysparksources.files.config import InferenceOptions, ReaderOptions, SourceConfig
from pysparksources.files.formats import format_named
from pysparksources.files.schema.hints import apply_hints, parse_hints
from pysparksources.files.schema.inference import infer_files, infer_schema
from pysparksources.files.schema.store import SchemaStore
from pysparksources.files.storage.filesystem import FileLocation
from pysparksources.files.storage.folder_listing import FileEntry

__all__ = [
    "SCHEMA_CHANGE_STEP",
    "Evolution",
    "SchemaChangeStep",
    "effective_schema",
    "evolution_of",
    "read_schema_of",
    "warn_if_new_columns",
    "warn_new_columns",
]

log = logging.getLogger(__name__)

# new_columns: a task first meets columns the schema lacks; before_version / after_version:
# around recording them as a new schema version (addNewColumns).
SchemaChangeStep = Literal["new_columns", "before_version", "after_version"]


def _no_pause(step: SchemaChangeStep) -> None:
    """Nothing: crash tests install a pause here (tests/support/evolution_hooks.py)."""


SCHEMA_CHANGE_STEP: HookPoint[[SchemaChangeStep], None] = HookPoint(
    "pyfile.schema_change_step",
    "each step of a schema change, in the task that meets new columns; crash tests stop the "
    "task there and kill its process",
    _no_pause,
)


@dataclass(frozen=True)
class Evolution:
    """What a task needs to fit files to the schema (travels in each partition)."""

    mode: str
    rescued_column: str | None
    store_location: FileLocation | None
    location: FileLocation
    reader: ReaderOptions
    inference: InferenceOptions
    # mode none by default, on a stream with an inferred schema: read on the fast path, and the
    # columns that ignores are warned of (warn_if_new_columns)
    warns_new_columns: bool = False

    @property
    def rescues_new_columns(self) -> bool:
        return self.rescued_column is not None and self.mode in ("rescue", "none")

    def infer(self, path: str) -> StructType:
        """The types of one file's columns, as inference gives them."""
        return infer_files(self.location, self.reader, self.inference, [FileEntry(path, 0, 0)])


def read_schema_of(config: SourceConfig) -> StructType:
    """The schema of a read without ``.schema(...)`` (see the module docstring)."""
    policy = config.schema_policy
    if policy.location is None:
        data = infer_schema(config)
    else:
        store = SchemaStore(policy.location)
        latest = store.latest()
        if latest is None:
            latest = store.record(
                0, infer_schema(config), "inferred from the first files at the first start"
            )
        data = latest.schema
    return effective_schema(data, config, inferred=True)


def effective_schema(data: StructType, config: SourceConfig, inferred: bool) -> StructType:
    """``data`` with the hints applied and the rescued-data column added."""
    policy = config.schema_policy
    schema = apply_hints(data, parse_hints(policy.hints)) if policy.hints else data
    rescued = policy.rescued_column(inferred)
    if rescued is not None:
        if rescued.lower() in (name.lower() for name in schema.names):
            raise SchemaError(
                NAME,
                f"the files have a column named {rescued!r}, the rescued-data column's name: "
                "set rescuedDataColumn to another name",
            )
        schema = StructType([*schema.fields, StructField(rescued, StringType())])
    return schema


def evolution_of(
    config: SourceConfig, schema: StructType, stream: bool = False
) -> Evolution | None:
    """The tasks' instructions, or None where files are read as before (mode none, no
    rescued column): Spark's own behaviour, on the fast path. A stream whose schema pyfile
    inferred, with no schemaLocation and no mode given, reads by the files' own columns so
    that the columns it ignores are warned of: a batch read infers from every file."""
    policy = config.schema_policy
    mode = policy.mode()
    rescued = policy.rescued_column()
    warns = stream and policy.inferred and policy.location is None and policy.mode_option is None
    if mode == "none" and rescued is None and not warns:
        return None
    if format_named(config.reader.format).fixed_schema is not None:
        return None  # every file has the format's one schema: nothing evolves
    if rescued is not None and rescued not in schema.names:
        raise SchemaError(
            NAME,
            f"schemaEvolutionMode={mode} keeps what does not fit in the rescued-data column "
            f"{rescued!r}, which the given schema lacks: add `{rescued} STRING` to it",
        )
    if rescued is not None and not isinstance(schema[rescued].dataType, StringType):
        raise SchemaError(NAME, f"the rescued-data column {rescued!r} must be a STRING column")
    return Evolution(
        mode,
        rescued,
        policy.location,
        config.location,
        config.reader,
        config.inference,
        warns_new_columns=warns and mode == "none" and rescued is None,
    )


def warn_if_new_columns(evolution: Evolution, path: str, url: str, known: list[str]) -> None:
    """Warn of the columns of file ``path`` (as inference on its sample finds them) that are
    not in ``known``. A file inference cannot read is left to the read, which reports it."""
    try:
        columns = evolution.infer(path).names
    except Exception:  # the read names the problem, with its own options (ignoreCorruptFiles)
        return
    lowered = {name.lower() for name in known}
    new = [name for name in columns if name.lower() not in lowered]
    if new:
        warn_new_columns(url, new)


# Sets of new columns (lower case) already warned of in this Python process.
_WARNED: set[frozenset[str]] = set()
_WARNED_LOCK = threading.Lock()


def warn_new_columns(url: str, new: list[str]) -> None:
    """Warn, once per set of columns in this process, that a file's columns the inferred
    schema lacks are dropped, and which options keep them."""
    key = frozenset(name.lower() for name in new)
    with _WARNED_LOCK:
        if key in _WARNED:
            return
        _WARNED.add(key)
    log.warning(
        "%s: file %s has columns the stream's inferred schema lacks, which are not read: %s "
        "(schemaEvolutionMode=none, the default without schemaLocation). To keep them, set "
        "schemaLocation: its default mode, addNewColumns, records them as a new schema "
        "version and stops the query once; a restart reads them",
        NAME,
        url,
        ", ".join(repr(name) for name in new),
    )


def new_columns_found(evolution: Evolution, path: str, url: str, new: list[str]) -> None:
    """Columns the schema lacks, in a file: record them (addNewColumns) and stop, or stop."""
    shown = ", ".join(repr(name) for name in new)
    if evolution.mode == "failOnNewColumns":
        raise SchemaChangedError(
            NAME,
            f"file {url} has columns the schema lacks: {shown} (schemaEvolutionMode="
            "failOnNewColumns): add them to the schema, change the mode, or remove the file",
        )
    assert evolution.store_location is not None
    store = SchemaStore(evolution.store_location)
    SCHEMA_CHANGE_STEP("before_version")
    latest = store.latest()
    number = 0 if latest is None else latest.number
    known = set() if latest is None else {n.lower() for n in latest.schema.names}
    missing = [name for name in new if name.lower() not in known]
    if missing and latest is not None:
        types = evolution.infer(path)
        added = [f for f in types.fields if f.name in missing]
        added += [StructField(n, StringType()) for n in missing if n not in types.names]
        number = latest.number + 1
        recorded = store.record(
            number,
            StructType([*latest.schema.fields, *added]),
            f"new columns {shown} in {url}",
        )
        number = recorded.number
    SCHEMA_CHANGE_STEP("after_version")
    raise SchemaChangedError(
        NAME,
        f"file {url} has new columns {shown}: recorded in schema version {number} in "
        f"{store.describe()}; restart the query to read them (schemaEvolutionMode="
        "addNewColumns)",
    )
