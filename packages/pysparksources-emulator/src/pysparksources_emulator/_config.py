"""What the emulator serves: hubs, partitions, consumer groups, keys, storage and retention.

``EmulatorConfig.from_file`` reads Microsoft's Event Hubs emulator ``Config.json`` so one file
drives both emulators. Settings Microsoft's file has no place for (keys, retention, data
directory) may sit in an optional top-level ``"PySparkSources"`` object, which Microsoft's
emulator never reads.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pysparksources_emulator._storage import FsyncPolicy

__all__ = ["DEFAULT_CONSUMER_GROUP", "EmulatorConfig", "HubConfig"]

DEFAULT_CONSUMER_GROUP = "$Default"
MAX_MESSAGE_SIZE = 1024 * 1024


@dataclass
class HubConfig:
    """One event hub. ``$Default`` is always a consumer group, as on Azure."""

    name: str
    partition_count: int = 2
    consumer_groups: list[str] = field(default_factory=list)
    max_message_size: int = MAX_MESSAGE_SIZE
    retention_seconds: float | None = None
    retention_bytes: int | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.partition_count <= 1024:
            raise ValueError(f"hub {self.name!r}: partition count must be 1..1024")
        if not self.name or "/" in self.name:
            raise ValueError(f"invalid hub name {self.name!r}")
        groups = [DEFAULT_CONSUMER_GROUP]
        for group in self.consumer_groups:
            if group.lower() not in {g.lower() for g in groups}:
                groups.append(group)
        self.consumer_groups = groups


@dataclass
class EmulatorConfig:
    """Everything the server needs; the defaults suit a test: in memory, no keys.

    Parameters
    ----------
    hubs:
        The event hubs to serve.
    keys:
        Shared-access policy name -> key. Empty: any token and any SASL login is accepted.
    data_dir:
        Directory for the segment files; ``None`` keeps the events in memory only.
    fsync:
        ``always``, ``interval`` (every ``fsync_interval`` seconds) or ``never``.
    clock:
        Seconds since the epoch; inject a fake one to test retention.
    """

    hubs: list[HubConfig] = field(default_factory=list)
    keys: dict[str, str] = field(default_factory=dict)
    data_dir: Path | None = None
    fsync: FsyncPolicy = "interval"
    fsync_interval: float = 1.0
    segment_bytes: int = 16 * 1024 * 1024
    retention_check_interval: float = 1.0
    clock: Callable[[], float] = time.time

    def hub(self, name: str) -> HubConfig | None:
        for hub in self.hubs:
            if hub.name.lower() == name.lower():
                return hub
        return None

    @classmethod
    def from_hub_specs(cls, specs: Iterable[str], **kwargs: Any) -> EmulatorConfig:
        """Build from ``name:partitions`` strings (the CLI's ``--hub``)."""
        hubs = []
        for spec in specs:
            name, _, count = spec.partition(":")
            hubs.append(HubConfig(name, int(count) if count else 2))
        return cls(hubs=hubs, **kwargs)

    @classmethod
    def from_file(cls, path: str | Path, **overrides: Any) -> EmulatorConfig:
        return cls.from_dict(json.loads(Path(path).read_text()), **overrides)

    @classmethod
    def from_dict(cls, data: dict[str, Any], **overrides: Any) -> EmulatorConfig:
        """Read Microsoft's shape: ``UserConfig.NamespaceConfig[].Entities[]``."""
        hubs: list[HubConfig] = []
        user = data.get("UserConfig", {})
        for namespace in user.get("NamespaceConfig", []):
            if str(namespace.get("Type", "EventHub")).lower() != "eventhub":
                continue
            for entity in namespace.get("Entities", []):
                groups = [g["Name"] for g in entity.get("ConsumerGroups", [])]
                hubs.append(
                    HubConfig(
                        name=entity["Name"],
                        partition_count=int(entity.get("PartitionCount", 2)),
                        consumer_groups=groups,
                    )
                )
        extra = data.get("PySparkSources", {})
        kwargs: dict[str, Any] = {"hubs": hubs}
        if "SharedAccessKeys" in extra:
            kwargs["keys"] = dict(extra["SharedAccessKeys"])
        if "DataDir" in extra:
            kwargs["data_dir"] = Path(extra["DataDir"])
        if "Fsync" in extra:
            kwargs["fsync"] = extra["Fsync"]
        retention = extra.get("Retention", {})
        for hub in hubs:
            spec = retention.get(hub.name, retention.get("*", {}))
            hub.retention_seconds = spec.get("Seconds")
            hub.retention_bytes = spec.get("Bytes")
        kwargs.update(overrides)
        return cls(**kwargs)
