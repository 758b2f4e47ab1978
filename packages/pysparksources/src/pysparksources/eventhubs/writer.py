"""pyeventhub's writers: ``writeStream.format("pyeventhub")`` and ``write.format("pyeventhub")``.

Driver, query start: the data source parses the options and checks the input columns
(``options.parse_options``); the writer's constructor refuses overwrite and, with a schema
registry, looks the schema up (or registers it), so a missing schema fails the query there.
Executors, each task: ``write(record_batches)`` sends the rows (see :mod:`send`) and reports counts.
Driver, per batch: ``commit`` only logs — the events are already stored by Event Hubs, so
there is nothing left to make durable — and ``abort`` cannot recall events a failed batch
already sent. When Spark replays a batch after a failure, its events are sent again: the
sink is at least once, and ``stampBatchId`` lets consumers recognise the repeats.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage

from pysparksources._core.compat import DataSourceStreamArrowWriter
from pysparksources._core.worker_gc import freeze_imports
from pysparksources.errors import OptionError
from pysparksources.eventhubs import NAME
from pysparksources.eventhubs._send import send_record_batches
from pysparksources.eventhubs.avro.encode import with_schema_id
from pysparksources.eventhubs.config import SinkConfig

__all__ = ["EventHubBatchWriter", "EventHubStreamWriter", "EventsSent"]

log = logging.getLogger(__name__)


@dataclass
class EventsSent(WriterCommitMessage):  # type: ignore[misc]
    """What one task sent."""

    events: int
    batches: int
    retries: int


def _start(config: SinkConfig, overwrite: bool) -> SinkConfig:
    """The config the tasks get: refused for overwrite; with a registry, its schema id."""
    if overwrite:
        raise OptionError.invalid(
            NAME,
            "outputMode",
            f"{NAME} only appends events: use outputMode('append') for streams and "
            "mode('append') for df.write",
            "complete/overwrite",
        )
    if config.body.registry is not None:
        config = replace(config, body=with_schema_id(config.body))
    return config


def _totals(messages: Iterable[WriterCommitMessage | None]) -> tuple[int, int, int]:
    sent = [m for m in messages if isinstance(m, EventsSent)]
    return (
        sum(m.events for m in sent),
        sum(m.batches for m in sent),
        sum(m.retries for m in sent),
    )


class _Writer:
    def __init__(self, config: SinkConfig, schema: Any = None, overwrite: bool = False) -> None:
        self._config = _start(config, overwrite)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> EventsSent:
        freeze_imports()
        stats = send_record_batches(self._config, iterator)
        return EventsSent(stats.events, stats.batches, stats.retries)

    def _log_commit(self, messages: list[WriterCommitMessage | None], batch: str) -> None:
        events, batches, retries = _totals(messages)
        log.info(
            "%s: %s sent %d events in %d batches (%d retried sends) to %s",
            NAME,
            batch,
            events,
            batches,
            retries,
            self._config.connection.describe(),
        )

    def _log_abort(self, messages: list[WriterCommitMessage | None], batch: str) -> None:
        events, _, _ = _totals(messages)
        log.warning(
            "%s: %s aborted; %d events its finished tasks sent to %s stay in the hub "
            "(Event Hubs cannot recall events) and are sent again if the batch is retried",
            NAME,
            batch,
            events,
            self._config.connection.describe(),
        )


class EventHubStreamWriter(_Writer, DataSourceStreamArrowWriter):  # type: ignore[misc]
    """At-least-once streaming writes to one Event Hub."""

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        self._log_commit(messages, f"batch {batchId}")

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        self._log_abort(messages, f"batch {batchId}")


class EventHubBatchWriter(_Writer, DataSourceArrowWriter):  # type: ignore[misc]
    """``df.write.format("pyeventhub")``: every row sent once per successful job."""

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        self._log_commit(messages, "write job")

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        self._log_abort(messages, "write job")
