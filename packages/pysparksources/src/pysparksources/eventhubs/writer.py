"""pyeventhub's writers: ``writeStream.format("pyeventhub")`` and ``write.format("pyeventhub")``.

Driver, query start: the writer's constructor validates options and input columns. Executors,
each task: ``write(record_batches)`` sends the rows (see :mod:`send`) and reports counts.
Driver, per batch: ``commit`` only logs — the events are already stored by Event Hubs, so
there is nothing left to make durable — and ``abort`` cannot recall events a failed batch
already sent. When Spark replays a batch after a failure, its events are sent again: the
sink is at least once, and ``stampBatchId`` lets consumers recognise the repeats.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)

from pysparksources._core.arrow import spark_arrow_schema
from pysparksources._core.worker_gc import freeze_imports
from pysparksources.errors import OptionError
from pysparksources.eventhubs._avro_write import with_schema_id
from pysparksources.eventhubs._schema_registry import RegistryError
from pysparksources.eventhubs._send import send_record_batches
from pysparksources.eventhubs.options import NAME, SinkConfig, parse_sink_options

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

__all__ = ["EventHubBatchWriter", "EventHubStreamWriter", "EventsSent"]

log = logging.getLogger(__name__)


@dataclass
class EventsSent(WriterCommitMessage):  # type: ignore[misc]
    """What one task sent."""

    events: int
    batches: int
    retries: int


def _config(options: dict[str, str], schema: StructType, overwrite: bool) -> SinkConfig:
    try:
        if overwrite:
            raise OptionError.invalid(
                NAME, "outputMode", "pyeventhub only appends events", "complete/overwrite"
            )
        config = parse_sink_options(options, spark_arrow_schema(schema))
        if config.body.registry is not None:
            config = replace(config, body=with_schema_id(config.body))
        return config
    except (OptionError, RegistryError) as error:
        # Raised from here alone, so Spark's message shows our sentence, not a traceback.
        raise (error.bare() if isinstance(error, OptionError) else error) from None


def _totals(messages: Iterable[WriterCommitMessage | None]) -> tuple[int, int, int]:
    sent = [m for m in messages if isinstance(m, EventsSent)]
    return (
        sum(m.events for m in sent),
        sum(m.batches for m in sent),
        sum(m.retries for m in sent),
    )


class _Writer:
    def __init__(self, options: dict[str, str], schema: StructType, overwrite: bool) -> None:
        self._config = _config(options, schema, overwrite)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> EventsSent:
        freeze_imports()
        stats = send_record_batches(self._config, iterator)
        return EventsSent(stats.events, stats.batches, stats.retries)

    def _log_commit(self, messages: list[WriterCommitMessage | None], batch: str) -> None:
        events, batches, retries = _totals(messages)
        log.info(
            "pyeventhub: %s sent %d events in %d batches (%d retried sends) to %s",
            batch,
            events,
            batches,
            retries,
            self._config.connection.describe(),
        )

    def _log_abort(self, messages: list[WriterCommitMessage | None], batch: str) -> None:
        events, _, _ = _totals(messages)
        log.warning(
            "pyeventhub: %s aborted; %d events its finished tasks sent to %s stay in the hub "
            "(Event Hubs cannot recall events) and are sent again if the batch is retried",
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
