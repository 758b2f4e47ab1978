"""Hubs, partitions and the reader rules: routing sends, resolving addresses, epochs.

Everything here runs on the server's event loop thread; it knows nothing about frames.
"""

from __future__ import annotations

import itertools
import time
import uuid
from dataclasses import dataclass, field
from typing import Protocol

from pysparksources_emulator._config import EmulatorConfig, HubConfig
from pysparksources_emulator._partition_key import partition_for_key
from pysparksources_emulator._storage import PartitionLog

__all__ = ["Broker", "EntityError", "Hub", "ReaderSlot", "not_found", "parse_entity"]

NON_EPOCH_READER_LIMIT = 5
MAX_PARTITIONS = 1024
# The service's entity path for a consumer group carries an internal number after '~'
# ('<namespace>:eventhub:<hub>~32766|<group>' in a user's report); any number will do here.
_ENTITY_SUFFIX = "~32766"


def not_found(entity: str) -> EntityError:
    """``amqp:not-found`` for a hub or consumer group, worded as Event Hubs words it.

    The shape comes from the service's replies quoted in public reports (the condition is
    what clients act on; the text is for people): "The messaging entity '...' could not be
    found. To know more visit https://aka.ms/sbResourceMgrExceptions." then the tracking
    fields every service error ends with.
    """
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    return EntityError(
        "amqp:not-found",
        f"The messaging entity '{entity}' could not be found. To know more visit "
        f"https://aka.ms/sbResourceMgrExceptions.  TrackingId:{uuid.uuid4()}_G0, "
        f"SystemTracker:{entity}, Timestamp:{stamp}",
    )


class EntityError(Exception):
    """A request the service refuses; ``condition`` is the AMQP error condition it sends."""

    def __init__(self, condition: str, description: str) -> None:
        super().__init__(description)
        self.condition = condition
        self.description = description


class Evictable(Protocol):
    """A receiver link the broker may force off (epoch stealing)."""

    def evict(self, condition: str, description: str) -> None: ...


@dataclass
class ReaderSlot:
    """One attached receiver of a consumer group on a partition."""

    link: Evictable
    epoch: int | None
    name: str


@dataclass
class Hub:
    config: HubConfig
    partitions: list[PartitionLog]
    _round_robin: itertools.cycle[int] = field(init=False)

    def __post_init__(self) -> None:
        self._round_robin = itertools.cycle(range(len(self.partitions)))

    @property
    def name(self) -> str:
        return self.config.name

    def has_group(self, group: str) -> bool:
        return group.lower() in {g.lower() for g in self.config.consumer_groups}

    def grow(self, partitions: list[PartitionLog]) -> None:
        """Append new, empty partitions (ids continue from the last one); sends to the hub
        spread over the new count from now on, as after a Premium/Dedicated scale-up."""
        self.partitions.extend(partitions)
        self.config.partition_count = len(self.partitions)
        self._round_robin = itertools.cycle(range(len(self.partitions)))

    def route(self, partition_key: str | None) -> int:
        """Partition for a send to the hub itself: by key hash, else round-robin."""
        if partition_key is not None:
            return partition_for_key(partition_key, len(self.partitions))
        return next(self._round_robin)


@dataclass(frozen=True)
class Entity:
    """A parsed link address: hub, optional consumer group, optional partition text."""

    hub: str
    consumer_group: str | None
    partition: str | None


def parse_entity(address: str) -> Entity:
    """Parse ``amqps://host/hub[/ConsumerGroups/cg][/Partitions/n]`` (case-insensitive)."""
    path = address.split("://", 1)[1].split("/", 1)[1] if "://" in address else address
    parts = [p for p in path.split("/") if p]
    if not parts:
        raise EntityError("amqp:not-found", f"No entity in address '{address}'.")
    hub, rest = parts[0], parts[1:]
    group = partition = None
    while rest:
        kind = rest[0].lower()
        if len(rest) < 2 or kind not in ("consumergroups", "partitions"):
            raise EntityError("amqp:not-found", f"The messaging entity '{address}' was not found.")
        if kind == "consumergroups":
            group = rest[1]
        else:
            partition = rest[1]
        rest = rest[2:]
    return Entity(hub, group, partition)


class Broker:
    """The emulator's data: one :class:`Hub` per configured event hub."""

    def __init__(self, config: EmulatorConfig, host: str = "127.0.0.1") -> None:
        self.config = config
        self.host = host
        self.hubs: dict[str, Hub] = {}
        self.readers: dict[tuple[str, str, int], list[ReaderSlot]] = {}
        for hub_config in config.hubs:
            self.add_hub(hub_config)

    def add_hub(self, hub_config: HubConfig) -> Hub:
        # A hub grown in an earlier run left more partition folders than its configuration
        # names: keep them all (partitions are never removed).
        stored = self._stored_partitions(hub_config.name)
        hub_config.partition_count = max(hub_config.partition_count, stored)
        hub = Hub(hub_config, self._logs(hub_config.name, 0, hub_config.partition_count))
        self.hubs[hub_config.name.lower()] = hub
        return hub

    def add_partitions(self, name: str, partition_count: int) -> Hub:
        """Grow hub ``name`` to ``partition_count`` partitions; the count never shrinks (as
        on Event Hubs Premium/Dedicated). Existing partitions keep their events."""
        hub = self.hub(name)
        current = len(hub.partitions)
        if not current <= partition_count <= MAX_PARTITIONS:
            raise ValueError(
                f"hub {hub.name!r} has {current} partitions: the count can only grow, "
                f"up to {MAX_PARTITIONS} (asked for {partition_count})"
            )
        hub.grow(self._logs(hub.name, current, partition_count))
        return hub

    def _logs(self, hub: str, first: int, end: int) -> list[PartitionLog]:
        logs = []
        for i in range(first, end):
            directory = None
            if self.config.data_dir is not None:
                directory = self.config.data_dir / hub.lower() / str(i)
            logs.append(
                PartitionLog(
                    directory, fsync=self.config.fsync, segment_bytes=self.config.segment_bytes
                )
            )
        return logs

    def _stored_partitions(self, hub: str) -> int:
        if self.config.data_dir is None:
            return 0
        folder = self.config.data_dir / hub.lower()
        ids = {p.name for p in folder.iterdir() if p.is_dir()} if folder.is_dir() else set()
        count = 0
        while str(count) in ids:
            count += 1
        return count

    def close(self) -> None:
        for hub in self.hubs.values():
            for partition in hub.partitions:
                partition.close()

    def sync(self) -> None:
        for hub in self.hubs.values():
            for partition in hub.partitions:
                partition.sync()

    def apply_retention(self, now_ms: int) -> int:
        dropped = 0
        for hub in self.hubs.values():
            age = hub.config.retention_seconds
            max_age_ms = None if age is None else int(age * 1000)
            for partition in hub.partitions:
                dropped += partition.apply_retention(now_ms, max_age_ms, hub.config.retention_bytes)
        return dropped

    # -- resolving addresses -----------------------------------------------------------------

    def hub(self, name: str, path: str = "") -> Hub:
        """The hub named ``name``; else ``amqp:not-found`` naming ``sb://<host>/<name><path>``
        (``path``: the rest of the link's address, as the service names it)."""
        hub = self.hubs.get(name.lower())
        if hub is None:
            raise not_found(f"sb://{self.host}/{name}{path}")
        return hub

    def partition_index(self, hub: Hub, text: str) -> int:
        count = len(hub.partitions)
        try:
            index = int(text)
        except ValueError:
            index = -1
        if not 0 <= index < count or str(index) != text.strip():
            raise EntityError(
                "com.microsoft:argument-out-of-range",
                "The specified partition is invalid for an EventHub partition sender or "
                f"receiver. It should be between 0 and {count - 1}.",
            )
        return index

    def resolve_sender(self, address: str) -> tuple[Hub, int | None]:
        entity = parse_entity(address)
        hub = self.hub(entity.hub)
        if entity.consumer_group is not None:
            raise EntityError("amqp:not-implemented", "Cannot send to a consumer group.")
        if entity.partition is None:
            return hub, None
        return hub, self.partition_index(hub, entity.partition)

    def resolve_receiver(self, address: str) -> tuple[Hub, str, int]:
        entity = parse_entity(address)
        if entity.consumer_group is None or entity.partition is None:
            raise EntityError(
                "amqp:not-found",
                f"Receivers need '<hub>/ConsumerGroups/<group>/Partitions/<id>', got '{address}'.",
            )
        path = f"/consumergroups/{entity.consumer_group}/partitions/{entity.partition}"
        hub = self.hub(entity.hub, path)
        if not hub.has_group(entity.consumer_group):
            namespace = self.config.namespace
            raise not_found(
                f"{namespace}:eventhub:{hub.name}{_ENTITY_SUFFIX}|{entity.consumer_group}"
            )
        group = next(
            g for g in hub.config.consumer_groups if g.lower() == entity.consumer_group.lower()
        )
        return hub, group, self.partition_index(hub, entity.partition)

    # -- reader rules --------------------------------------------------------------------

    def add_reader(
        self, key: tuple[str, str, int], link: Evictable, epoch: int | None, name: str
    ) -> None:
        """Admit a receiver or raise; a higher-or-equal epoch evicts the others."""
        slots = self.readers.setdefault(key, [])
        epochs = [s.epoch for s in slots if s.epoch is not None]
        hub, group, partition = key
        where = f"partition '{partition}' of consumer group '{group}' in '{hub}'"
        if epoch is None:
            if epochs:
                raise EntityError(
                    "amqp:link:stolen",
                    f"Receiver '{name}' cannot be created on {where}: a receiver with epoch "
                    f"'{max(epochs)}' already exists.",
                )
            if len(slots) >= NON_EPOCH_READER_LIMIT:
                raise EntityError(
                    "amqp:resource-limit-exceeded",
                    f"Exceeded the maximum number of allowed receivers per partition in a "
                    f"consumer group which is {NON_EPOCH_READER_LIMIT}: {where}.",
                )
        else:
            if epochs and max(epochs) > epoch:
                raise EntityError(
                    "amqp:link:stolen",
                    f"Receiver '{name}' with epoch '{epoch}' cannot be created on {where}: a "
                    f"receiver with a higher epoch '{max(epochs)}' exists.",
                )
            for slot in list(slots):
                slots.remove(slot)
                slot.link.evict(
                    "amqp:link:stolen",
                    f"New receiver '{name}' with higher epoch of '{epoch}' is created hence "
                    f"current receiver '{slot.name}' with epoch '{slot.epoch}' is getting "
                    "disconnected. If you are recreating the receiver, make sure a higher epoch "
                    "is used.",
                )
        slots.append(ReaderSlot(link, epoch, name))

    def remove_reader(self, key: tuple[str, str, int], link: Evictable) -> None:
        slots = self.readers.get(key, [])
        for slot in list(slots):
            if slot.link is link:
                slots.remove(slot)
