"""The Event Hubs checkpoint store (Azure Blob), both ways.

Teams that run EventProcessorClient watch a consumer group's position in its checkpoint
store: one empty blob per partition whose metadata names the last event processed (offset and
sequence number), in the layout of ``azure-eventhub-checkpointstoreblob``. A Spark query keeps
its positions in its own checkpoint, invisible to those dashboards and tools. This module
mirrors the query's committed positions into the store, and reads the store for a query that
takes a consumer group over from an EventProcessorClient.

Writes go through the official ``BlobCheckpointStore``, so the layout is the one Microsoft's
processors read, not a copy of it. Reads list the blobs themselves (azure-storage-blob) and
check each one (:mod:`_store_entries`): the official listing fails on the first malformed blob
without naming it.

A checkpoint names the last event processed, and a processor resumes *after its offset*,
ignoring the sequence number; pyeventhub's positions are the next sequence number to read. So
committed position ``n`` is written as event ``n - 1`` (its sequence number and offset); where
no event before ``n`` is retained (``n`` is 0, or the partition's first retained event) the
offset is ``-1``, the start of the stream, with sequence number ``n - 1``. Every partition the
query has a position for gets a checkpoint, those it read nothing from too: a processor that
finds none starts at ``starting_position``, ``"@latest"`` by default in
``EventHubConsumerClient.receive()``, past whatever the partition holds. Read back, a query
starts where a processor would, after the offset; the sequence number checks it.

Driver only. Only positions Spark has committed are written (see :class:`CommittedPositions`),
so the store is never ahead of the query: after a crash it may be behind, never ahead.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from typing import Any

from pysparksources.errors import ArgumentError, OptionError, ServiceError
from pysparksources.eventhubs import NAME
from pysparksources.eventhubs._metadata import HubMetadata, PartitionInfo
from pysparksources.eventhubs._positions import Position
from pysparksources.eventhubs._receivers import PositionedReceiver
from pysparksources.eventhubs._store_entries import (
    StoredCheckpoint,
    blob_prefix,
    parse_checkpoint,
    parse_claim,
    partition_of,
)
from pysparksources.eventhubs.config import CheckpointStoreConfig, SourceConfig

__all__ = ["START_OF_STREAM", "CheckpointStore", "CommittedPositions", "checkpoint_offset"]

log = logging.getLogger(__name__)
# EventProcessorClient renews its claims every load_balancing_interval (30 s by default) and
# a claim lapses after six of them: a claim younger than this is a processor still running.
_CLAIM_LIFETIME_S = 180.0
_STORE_RETRIES = 3  # azure-core's default is 10, minutes against a host that does not answer
START_OF_STREAM = "-1"  # the offset every SDK reads as "before the first retained event"


class CheckpointStore:
    """One consumer group's checkpoints and claims in the store; errors name the container."""

    def __init__(self, config: SourceConfig) -> None:
        if config.checkpoint_store is None:
            raise ArgumentError(NAME, "the options name no checkpoint store")
        self._config = config
        self._store_config: CheckpointStoreConfig = config.checkpoint_store
        self._client: Any = None
        self._container: Any = None
        self._lock = threading.Lock()

    def describe(self) -> str:
        return self._store_config.describe()

    def _blob_store(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = self._new_client()
            return self._client

    def _container_client(self) -> Any:
        with self._lock:
            if self._container is None:
                from azure.storage.blob import ContainerClient

                cfg = self._store_config
                if cfg.connection_string is not None:
                    self._container = ContainerClient.from_connection_string(
                        cfg.connection_string, cfg.container, **self._timeouts()
                    )
                else:
                    credential = self._config.connection.credential()
                    self._container = ContainerClient(
                        cfg.account_url or "", cfg.container, credential, **self._timeouts()
                    )
            return self._container

    def _timeouts(self) -> dict[str, Any]:
        return {
            "retry_total": _STORE_RETRIES,
            "connection_timeout": self._config.operation_timeout_s,
            "read_timeout": self._config.operation_timeout_s,
        }

    def _new_client(self) -> Any:
        from azure.eventhub.extensions.checkpointstoreblob import BlobCheckpointStore

        cfg = self._store_config
        if cfg.connection_string is not None:
            return BlobCheckpointStore.from_connection_string(
                cfg.connection_string, cfg.container, **self._timeouts()
            )
        credential = self._config.connection.credential()
        return BlobCheckpointStore(
            cfg.account_url or "", cfg.container, credential, **self._timeouts()
        )

    def _names(self) -> dict[str, str]:
        """The group's key in the store: namespace host as the SDK's client has it, hub, group."""
        connection = self._config.connection
        return {
            "fully_qualified_namespace": connection.namespace,
            "eventhub_name": connection.event_hub,
            "consumer_group": self._config.consumer_group,
        }

    def _blobs(self, kind: str, partition_ids: Iterable[str]) -> list[tuple[str, str, Any]]:
        """(name, partition id, blob properties) of the group's ``kind`` blobs for
        ``partition_ids``; other names under the prefix are not the store's to read."""
        names = self._names()
        prefix = blob_prefix(
            names["fully_qualified_namespace"],
            names["eventhub_name"],
            names["consumer_group"],
            kind,
        )
        wanted = set(partition_ids)
        doing = (
            "reading checkpoints from" if kind == "checkpoint" else "reading partition claims from"
        )
        try:
            listed = list(
                self._container_client().list_blobs(name_starts_with=prefix, include=["metadata"])
            )
        except Exception as error:
            raise self._failure(error, doing) from None
        found = []
        for blob in listed:
            name = getattr(blob, "name", None)
            pid = partition_of(name, prefix)
            if pid is not None and pid in wanted and isinstance(name, str):
                found.append((name, pid, blob))
        return found

    def checkpoints(self, partition_ids: Iterable[str]) -> dict[str, StoredCheckpoint]:
        """The checkpoints of ``partition_ids`` the store holds, each one checked."""
        where = self.describe()
        return {
            pid: parse_checkpoint(where, name, pid, getattr(blob, "metadata", None))
            for name, pid, blob in self._blobs("checkpoint", partition_ids)
        }

    def starting_positions(
        self, meta: HubMetadata, partition_ids: Iterable[str]
    ) -> dict[str, Position]:
        """Where a query taking the group over starts, in each of ``partition_ids`` that has a
        checkpoint: where an EventProcessorClient would resume, just after its offset.

        The sequence number checks that: where the events after it have expired since, the
        query starts there anyway, and its first batch reports the loss as failOnDataLoss
        says (a processor would skip them without a word); where it disagrees otherwise, the
        offset wins, with a warning naming the blob.
        """
        found = self.checkpoints(partition_ids)
        after_offset = meta.resolve({pid: c.resume_position() for pid, c in found.items()})
        infos = meta.partitions()
        starts = {}
        for pid, checkpoint in found.items():
            at, after = after_offset[pid], checkpoint.sequence_number + 1
            beginning = infos[pid].beginning
            if at != after and after < beginning and at == beginning:
                at = after  # expired since the checkpoint: _clamp_expired reports it
            elif at != after:
                log.warning(
                    "%s: checkpoint blob %r in the %s names offset %s and sequence number %d, "
                    "but the first event after that offset is %d; starting there, where an "
                    "EventProcessorClient resumes",
                    NAME,
                    checkpoint.blob,
                    self.describe(),
                    checkpoint.offset,
                    checkpoint.sequence_number,
                    at,
                )
            starts[pid] = Position("seqNo", seq_no=at)
        return starts

    def live_claims(self, partition_ids: list[str]) -> dict[str, float]:
        """Partitions an EventProcessorClient holds now -> seconds since its last renewal."""
        where = self.describe()
        now = time.time()
        live = {}
        for name, pid, blob in self._blobs("ownership", partition_ids):
            metadata, modified = (
                getattr(blob, "metadata", None),
                getattr(blob, "last_modified", None),
            )
            claim = parse_claim(where, name, pid, metadata, modified)
            if claim.owner and claim.last_modified is not None:
                age = max(0.0, now - claim.last_modified.timestamp())
                if age < _CLAIM_LIFETIME_S:
                    live[pid] = age
        return live

    def check_no_processor(self, partition_ids: list[str]) -> None:
        """A query that writes the store must be the group's only writer: fail while an
        EventProcessorClient still claims any partition it reads."""
        live = self.live_claims(partition_ids)
        if not live:
            return
        shown = ", ".join(f"{pid} ({age:.0f}s ago)" for pid, age in sorted(live.items()))
        raise OptionError(
            NAME,
            "checkpointStore.container",
            f"an EventProcessorClient of consumer group '{self._config.consumer_group}' "
            f"still claims partition(s) {shown} in the {self.describe()}: two readers would "
            "both move the group's checkpoints. Stop it (close() gives its partitions up at "
            f"once; a crashed one's claims lapse {_CLAIM_LIFETIME_S:.0f}s after their last "
            "renewal), or set checkpointStore.update=false",
        )

    def write(self, partition_id: str, sequence_number: int, offset: str) -> None:
        """Record event ``sequence_number`` (at ``offset``) as the last one processed."""
        checkpoint = {
            **self._names(),
            "partition_id": partition_id,
            "sequence_number": sequence_number,
            "offset": offset,
        }
        try:
            self._blob_store().update_checkpoint(checkpoint)
        except Exception as error:
            raise self._failure(error, "writing a checkpoint to") from None

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
            container, self._container = self._container, None
        if client is not None:
            client.close()
        if container is not None:
            container.close()

    def _failure(self, error: BaseException, doing: str) -> Exception:
        """The error to raise: what failed, where, and the service's reason. The service's
        message is not quoted (a request URL there may carry a SAS token)."""
        code = getattr(error, "error_code", None) or getattr(error, "reason", None)
        status = getattr(error, "status_code", None)
        reason = type(error).__name__ + "".join(
            f", {label} {value}" for label, value in (("status", status), ("code", code)) if value
        )
        where = self.describe()
        if status == 404 or str(code) == "ContainerNotFound":
            return OptionError(
                NAME,
                "checkpointStore.container",
                f"{doing} the {where} failed ({reason}): the container does not exist; "
                "create it (az storage container create) or name another one",
            )
        if status in (401, 403):
            option = (
                "checkpointStore.connectionString"
                if self._store_config.connection_string is not None
                else "checkpointStore.accountUrl"
            )
            return OptionError(
                NAME,
                option,
                f"{doing} the {where} was refused ({reason}): check the credential in "
                f"option '{option}' (an Entra ID identity needs the Storage Blob Data "
                "Contributor role on the container)",
            )
        return ServiceError(NAME, f"{doing} the {where} failed ({reason})")


def checkpoint_offset(
    config: SourceConfig, partition_id: str, position: int, info: PartitionInfo | None
) -> str | None:
    """The offset to store so that a processor resumes at ``position`` (the next event to
    read): event ``position - 1``'s, or :data:`START_OF_STREAM` when no event before
    ``position`` is retained; None when it was not found in time.

    The partition's properties answer for a query that keeps up (the last event) and for one
    at the partition's start; else one receive finds the event.
    """
    last = position - 1
    if position <= 0 or (info is not None and last < info.beginning):
        return START_OF_STREAM
    if info is not None and info.latest == position and _is_offset(info.last_offset):
        return info.last_offset
    receiver = PositionedReceiver(config, partition_id, last, sdk_retries=True)
    try:
        event = receiver.first_event(config.operation_timeout_s)
    finally:
        receiver.close()
    if event is None:
        return None
    if int(event.sequence_number) > last:
        return START_OF_STREAM  # expired since the properties were read
    offset = str(event.offset)
    return offset if _is_offset(offset) else None


def _is_offset(value: str | None) -> bool:
    return value is not None and value.isascii() and value.isdigit()


class CommittedPositions:
    """Writes the positions Spark committed to the store, on a thread of its own.

    Spark calls a source's ``commit(end)`` only while it plans the next batch, so the reader
    also posts the start of every ``latestOffset`` call: Spark asks for the next batch only
    after the previous one is in its commit log (an unfinished batch found at restart is run
    again before anything is asked). Writing off the query thread keeps a slow store out of
    the trigger; only the newest post is written, and a position is written once.

    A store that refuses the first write (a read-only credential, say) fails the query at its
    next trigger; once a write succeeded, failures are logged and retried with the next post.
    """

    def __init__(self, store: CheckpointStore, config: SourceConfig) -> None:
        self._store = store
        self._config = config
        self._cond = threading.Condition()
        self._pending: tuple[dict[str, int], dict[str, PartitionInfo]] | None = None
        self._busy = False
        self._written: dict[str, int] = {}
        self._succeeded = False
        self._failure: Exception | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"{NAME}-store")
        self._thread.start()

    def post(self, positions: dict[str, int], infos: dict[str, PartitionInfo]) -> None:
        """Committed next-to-read positions, and the partitions' properties known now."""
        with self._cond:
            if self._failure is not None:
                failure, self._failure = self._failure, None
                raise failure
            if all(self._written.get(pid) == n for pid, n in positions.items()):
                return
            self._pending = (dict(positions), dict(infos))
            self._cond.notify_all()

    def flush(self, timeout: float) -> bool:
        """Wait until every post is written (or ``timeout``); whether it was. Raises what
        refused the first write."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._pending is not None or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            if self._failure is not None:
                failure, self._failure = self._failure, None
                raise failure
        return True

    def close(self, timeout: float) -> None:
        if not self.flush(timeout):
            log.warning(
                "%s: the last committed positions were not written to the %s within %gs",
                NAME,
                self._store.describe(),
                timeout,
            )
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._pending is None and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                assert self._pending is not None
                (positions, infos), self._pending = self._pending, None
                self._busy = True
            try:
                self._write(positions, infos)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _write(self, positions: dict[str, int], infos: dict[str, PartitionInfo]) -> None:
        for pid, position in sorted(positions.items(), key=lambda item: int(item[0])):
            if self._written.get(pid) == position:
                continue
            try:
                offset = checkpoint_offset(self._config, pid, position, infos.get(pid))
            except Exception as error:
                offset, reason = None, type(error).__name__
            else:
                reason = "none arrived within operationTimeout"
            if offset is None:
                log.warning(
                    "%s: the offset of event %d of partition %s was not found (%s); the next "
                    "batch's commit writes its checkpoint",
                    NAME,
                    position - 1,
                    pid,
                    reason,
                )
                continue
            try:
                self._store.write(pid, position - 1, offset)
            except Exception as error:
                if not self._succeeded:
                    with self._cond:
                        self._failure = error
                    return
                log.warning("%s: %s; the next batch's commit writes it", NAME, error)
                continue
            self._succeeded = True
            self._written[pid] = position
