"""Driver-side partition metadata, cached briefly because Spark polls latestOffset often."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from pysparksources.eventhubs.positions import Position
from pysparksources.eventhubs.receivers import PositionedReceiver
from pysparksources.eventhubs.source_options import SourceConfig

__all__ = ["HubMetadata", "PartitionInfo"]


@dataclass(frozen=True)
class PartitionInfo:
    beginning: int  # first retained sequence number
    latest: int  # last enqueued sequence number + 1: the next one to be written
    empty: bool


class HubMetadata:
    """Partition ids and properties through one consumer client, reused for a short interval."""

    def __init__(self, config: SourceConfig) -> None:
        self._config = config
        self._client: Any = None
        self._fetched_at = -1e18
        self._infos: dict[str, PartitionInfo] = {}

    def _consumer(self) -> Any:
        if self._client is None:
            self._client = self._config.connection.consumer_client(self._config.consumer_group)
        return self._client

    def partitions(self, fresh: bool = False) -> dict[str, PartitionInfo]:
        now = time.monotonic()
        if fresh or now - self._fetched_at >= self._config.info_cache_s:
            client = self._consumer()
            infos = {}
            for pid in client.get_partition_ids():
                props = client.get_partition_properties(pid)
                last = int(props["last_enqueued_sequence_number"])
                empty = bool(props["is_empty"])
                beginning = last + 1 if empty else int(props["beginning_sequence_number"])
                infos[str(pid)] = PartitionInfo(beginning, last + 1, empty)
            self._infos = dict(sorted(infos.items(), key=lambda kv: int(kv[0])))
            self._fetched_at = now
        return self._infos

    def resolve(self, pid: str, position: Position) -> int:
        """The next sequence number to read for ``position`` in partition ``pid``."""
        info = self.partitions()[pid]
        simple = position.resolve_simple(info.beginning, info.latest)
        if simple is not None:
            return simple
        start: str | Any = position.offset if position.kind == "offset" else position.enqueued_time
        receiver = PositionedReceiver(self._config, pid, start, position.inclusive)
        try:
            # Nothing at or after the position yet: start where the next event will be.
            first = receiver.first_event(min(5.0, self._config.receiver_timeout_s))
        finally:
            receiver.close()
        return info.latest if first is None else int(first.sequence_number)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
