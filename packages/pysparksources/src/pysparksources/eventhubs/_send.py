"""Rows to Event Hubs: EventDataBatches per target, sent with retries, on pooled producers.

The Scala connector sent one event per call and did not handle throttling; here each task
groups its rows by target (a partition id, a partition key, or the service's round-robin),
fills EventDataBatches up to the hub's message size and retries a failed send with
exponential backoff. A retried send can duplicate events the service did store before the
failure reached us: delivery is at least once. Producers are pooled per executor process
(Python workers are reused across batches) in the process cache ``eventhubs.producers``, keyed
by the connection, and closed at exit.

A task keeps one open batch per target, and targets are as many as the distinct partition
keys of its rows; so the open batches are bounded in bytes: past the bound, the fullest are
sent early (a key's events still leave in order: its open batch goes before its next one).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from pysparksources._core.process_caches import PROCESS, ProcessCache
from pysparksources.errors import MalformedRecordError, OptionError, ServiceError
from pysparksources.eventhubs import NAME
from pysparksources.eventhubs._refusals import CONFIRM, no_such_name, refusal
from pysparksources.eventhubs.avro.encode import encode_bodies
from pysparksources.eventhubs.config import SinkConfig

__all__ = ["SendStats", "send_record_batches"]

log = logging.getLogger(__name__)
# Connections a process sends to at most: the least recently used producer beyond is closed.
_MAX_CONNECTIONS = 64


def _close_producer(client: Any) -> None:
    client.close()


# (pool key, first contact) -> the producer; a producer of a connection's first contact
# retries nothing (``first_contact`` below), one made after has the SDK's retries.
_PRODUCERS = PROCESS.cache(
    "eventhubs.producers", _MAX_CONNECTIONS, close=_close_producer, close_at_exit=True
)
# Connections (pool keys) a send succeeded on in this process. Until then a refused
# connection or a host name that does not exist fails the task at once, named (a wrong
# namespace); afterwards they are retried (an emulator restarting, a resolver hiccup).
_REACHED: ProcessCache[str, bool] = PROCESS.cache("eventhubs.reached", _MAX_CONNECTIONS)
# Connections whose first contact is over in this process: a send succeeded, or an error that
# names nothing came, which retries may mend. Until then the pooled producer is one that
# retries nothing (``first_contact``), so that a hub or namespace that does not exist fails
# the task at once; afterwards producers have the SDK's retries. (Forgotten beyond
# ``_MAX_CONNECTIONS``: a connection then starts a first contact again, which only fails
# sooner.)
_SETTLED: ProcessCache[str, bool] = PROCESS.cache("eventhubs.settled", _MAX_CONNECTIONS)
_MAX_BACKOFF_S = 30.0
_OPEN_BATCHES_BYTES = 64 * 1024 * 1024
# An event in an EventDataBatch is held twice (the EventData and its encoded copy) plus about
# 1.6 KB of Python objects (measured with tracemalloc on azure-eventhub 5.15).
_BATCH_EVENT_OVERHEAD = 1600


@dataclass
class SendStats:
    """What one task sent: events, EventDataBatches and retried sends."""

    events: int = 0
    batches: int = 0
    retries: int = 0


def _producer(config: SinkConfig) -> Any:
    first_contact = _first_contact(config)
    return _PRODUCERS.get_or_make(
        (config.connection.pool_key(), first_contact),
        lambda: config.connection.producer_client(first_contact=first_contact),
    )


def _first_contact(config: SinkConfig) -> bool:
    return config.connection.pool_key() not in _SETTLED


def _settle(config: SinkConfig) -> None:
    """End the connection's first contact: the next producer has the SDK's retries."""
    key = config.connection.pool_key()
    if key in _SETTLED:
        return
    _SETTLED.put(key, True)
    _PRODUCERS.discard((key, True))


def _refused(config: SinkConfig, error: BaseException, first_contact: bool) -> OptionError | None:
    """The error naming a hub or namespace that does not exist, when ``error`` says so (a
    refused connection only before the first send succeeded, and a host name only once the
    resolver said it does not exist or retries did not mend it); else None."""
    refused = config.connection.refused(error)
    found = refusal(error)
    if refused is None or found == "not-found":
        return refused
    if config.connection.pool_key() in _REACHED:
        return None
    if found == "unresolved" and first_contact and not no_such_name(error):
        return None
    return refused


def _evict(config: SinkConfig) -> None:
    """Close the connection's producers (closing a broken one is best effort)."""
    key = config.connection.pool_key()
    _PRODUCERS.discard((key, True))
    _PRODUCERS.discard((key, False))


def _retryable(error: BaseException) -> bool:
    from azure.eventhub.exceptions import (
        ConnectError,
        ConnectionLostError,
        EventDataSendError,
        OperationTimeoutError,
    )

    return isinstance(
        error, (EventDataSendError, OperationTimeoutError, ConnectionLostError, ConnectError)
    )


def _refusals_seen(
    config: SinkConfig, error: BaseException, not_found: int, first_contact: bool
) -> int:
    """After ``error``, raise the error naming a hub or namespace that does not exist, an
    amqp:not-found only when it is the ``CONFIRM``-th (counting the ``not_found`` before it:
    passing trouble gets the same condition); else return the count of not-founds so far
    (and end the first contact when ``error`` names nothing: retries may mend it)."""
    refused = _refused(config, error, first_contact)
    if refused is None:
        if first_contact:
            _settle(config)
        return not_found
    if refusal(error) == "not-found" and not_found + 1 < CONFIRM:
        return not_found + 1
    _evict(config)
    raise refused.bare() from None


def _stale_partition_ids(error: BaseException) -> bool:
    """A producer refusing a partition id it did not know: it reads the hub's partition ids
    once, so after partitions were added to the hub (Premium/Dedicated) only a new one can
    send to them."""
    from azure.eventhub.exceptions import ConnectError

    return isinstance(error, ConnectError) and str(error).startswith("Invalid partition ")


def _send(config: SinkConfig, batch: Any, stats: SendStats) -> None:
    delay = config.retry_backoff_s
    attempt = not_found = 0
    renewed = False
    while True:
        first_contact = _first_contact(config)
        try:
            _producer(config).send_batch(batch, timeout=config.send_timeout_s)
            stats.batches += 1
            _REACHED.put(config.connection.pool_key(), True)
            _settle(config)
            return
        except Exception as error:
            if not renewed and _stale_partition_ids(error):
                renewed = True
                log.info("%s: %s; sending on a new producer", NAME, error)
                _evict(config)
                continue
            seen = _refusals_seen(config, error, not_found, first_contact)
            if seen > not_found:  # a first amqp:not-found: again at once, on a new link
                not_found = seen
                continue
            if first_contact:  # a client that retried nothing: now one with the SDK's retries
                continue
            if not _retryable(error) or attempt == config.max_retries:
                _evict(config)
                raise ServiceError(
                    NAME,
                    f"sending {len(batch)} events to {config.connection.describe()} failed "
                    f"after {attempt + 1} attempt(s): {type(error).__name__}: {error}",
                ) from None
            stats.retries += 1
            log.warning(
                "%s: send to %s failed (%s); retry %d of %d in %.1fs",
                NAME,
                config.connection.describe(),
                type(error).__name__,
                attempt + 1,
                config.max_retries,
                delay,
            )
            time.sleep(delay)
            delay = min(delay * 2, _MAX_BACKOFF_S)
            attempt += 1


def _rows(
    config: SinkConfig, batch: pa.RecordBatch, first_row: int
) -> Iterator[tuple[tuple[str, str], Any]]:
    """(target, EventData) per row; the target is ("id", p), ("key", k) or ("any", "")."""
    from azure.eventhub import EventData

    names = batch.schema.names
    lowered = {n.lower(): n for n in names}
    body_column = batch.column(names.index(lowered["body"]))
    content_type = None
    if config.body.avro:
        bodies, content_type = encode_bodies(config.body, body_column, first_row)
    else:
        bodies = body_column.to_pylist()
    count = len(bodies)
    parts = _column(batch, config.partition_column, count)
    keys = _column(batch, config.key_column, count)
    props = _column(batch, config.properties_column, count)
    stamp = _stamp() if config.stamp else None
    for i in range(count):
        row = first_row + i
        body, part, key = bodies[i], parts[i], keys[i]
        if body is None:
            raise MalformedRecordError(NAME, f"row {row} of the task has a null body")
        if part is not None and key is not None:
            raise MalformedRecordError(
                NAME,
                f"row {row} sets both partitionId ({part!r}) and partitionKey ({key!r}); an "
                "event goes either to a partition or by key, not both",
            )
        event = EventData(body)
        if content_type is not None:
            event.content_type = content_type
        properties: dict[str, Any] = dict(props[i]) if props[i] else {}
        if stamp is not None:
            properties.update({**stamp, "spark.row": row})
        if properties:
            event.properties = dict(properties.items())
        if part is not None:
            yield ("id", str(part)), event
        elif key is not None:
            yield ("key", str(key)), event
        else:
            yield ("any", ""), event


def _column(batch: pa.RecordBatch, name: str | None, count: int) -> list[Any]:
    if name is None:
        return [None] * count
    values: list[Any] = batch.column(batch.schema.names.index(name)).to_pylist()
    return values


def _stamp() -> dict[str, int]:
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:
        return {"spark.batchId": -1, "spark.partition": -1}
    batch_id = context.getLocalProperty("streaming.sql.batchId")
    return {
        "spark.batchId": int(batch_id) if batch_id is not None else -1,
        "spark.partition": context.partitionId(),
    }


def send_record_batches(
    config: SinkConfig,
    batches: Iterator[pa.RecordBatch],
    open_batches_bytes: int = _OPEN_BATCHES_BYTES,
) -> SendStats:
    """Send every row, batched per target; raises naming the hub when a send finally fails.

    The open batches hold at most about ``open_batches_bytes``: with many partition keys
    they would otherwise hold every row of the task until its end.
    """
    stats = SendStats()
    open_batches: dict[tuple[str, str], Any] = {}
    held: dict[tuple[str, str], int] = {}  # memory each open batch holds, estimated
    row = 0
    open_bytes = 0

    def send_fullest() -> None:
        """Send the fullest open batches until they hold at most half the bound."""
        total = sum(held.values())
        for target in sorted(held, key=held.__getitem__, reverse=True):
            if total <= open_batches_bytes // 2:
                break
            _send(config, open_batches.pop(target), stats)
            total -= held.pop(target)

    def new_batch(target: tuple[str, str]) -> Any:
        kwargs: dict[str, Any] = {}
        if config.max_batch_bytes is not None:
            kwargs["max_size_in_bytes"] = config.max_batch_bytes
        if target[0] == "id":
            kwargs["partition_id"] = target[1]
        elif target[0] == "key":
            kwargs["partition_key"] = target[1]
        not_found = 0
        while True:
            first_contact = _first_contact(config)
            try:  # the first one attaches a sender to the hub (to learn its message size)
                return _producer(config).create_batch(**kwargs)
            except Exception as error:
                seen = _refusals_seen(config, error, not_found, first_contact)
                if seen == not_found and not first_contact:
                    raise
                not_found = seen

    for record_batch in batches:
        for target, event in _rows(config, record_batch, row):
            batch = open_batches.get(target) or new_batch(target)
            size = batch.size_in_bytes
            try:
                batch.add(event)
            except ValueError:
                if len(batch) == 0:
                    raise MalformedRecordError(
                        NAME,
                        f"row {row} is larger than one message may be "
                        f"({batch.max_size_in_bytes} bytes)",
                    ) from None
                _send(config, batch, stats)
                open_bytes -= held.pop(target, 0)
                batch = new_batch(target)
                size = batch.size_in_bytes
                batch.add(event)
            open_batches[target] = batch
            cost = 2 * (batch.size_in_bytes - size) + _BATCH_EVENT_OVERHEAD
            held[target] = held.get(target, 0) + cost
            stats.events += 1
            row += 1
            open_bytes += cost
            if open_bytes > open_batches_bytes:
                send_fullest()
                open_bytes = sum(held.values())
    for batch in open_batches.values():
        if len(batch):
            _send(config, batch, stats)
    return stats
