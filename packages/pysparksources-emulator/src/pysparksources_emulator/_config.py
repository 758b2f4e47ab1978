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

from pysparksources_emulator._jwt import JwtAuthority
from pysparksources_emulator._storage import FsyncPolicy

__all__ = [
    "DEFAULT_CONSUMER_GROUP",
    "DEFAULT_NAMESPACE",
    "EmulatorConfig",
    "HubConfig",
    "jwt_authority",
    "parse_hub_spec",
]

DEFAULT_CONSUMER_GROUP = "$Default"
# The namespace name the service puts in some error descriptions (an unknown consumer group
# names '<namespace>:eventhub:<hub>~<n>|<group>'); Microsoft's emulator's default Config.json
# calls its namespace emulatorNs1. A Config.json's NamespaceConfig Name replaces it.
DEFAULT_NAMESPACE = "emulatorns1"
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

    def add_consumer_groups(self, names: Iterable[str]) -> None:
        """Add consumer groups (one already there, in any case, is kept once)."""
        for name in names:
            if not name or "/" in name:
                raise ValueError(f"hub {self.name!r}: invalid consumer group name {name!r}")
            if name.lower() not in {g.lower() for g in self.consumer_groups}:
                self.consumer_groups.append(name)


def jwt_authority(spec: dict[str, Any]) -> JwtAuthority:
    """The ``"Jwt"`` object of a Config.json's ``"PySparkSources"``: ``Issuer`` (a string or a
    list), one of ``Jwks`` (the document), ``JwksFile`` or ``PublicKeyFile`` (PEM), and
    optionally ``Audiences`` and ``ClockSkewSeconds``."""
    issuers = spec.get("Issuer")
    if not issuers:
        raise ValueError("PySparkSources.Jwt needs an Issuer")
    extra: dict[str, Any] = {}
    if "Audiences" in spec:
        extra["audiences"] = tuple(spec["Audiences"])
    if "ClockSkewSeconds" in spec:
        extra["clock_skew"] = float(spec["ClockSkewSeconds"])
    if "Jwks" in spec:
        return JwtAuthority.from_jwks(spec["Jwks"], issuers, **extra)
    if "JwksFile" in spec:
        return JwtAuthority.from_jwks(Path(spec["JwksFile"]), issuers, **extra)
    if "PublicKeyFile" in spec:
        return JwtAuthority.from_pem(Path(spec["PublicKeyFile"]), issuers, **extra)
    raise ValueError("PySparkSources.Jwt needs Jwks, JwksFile or PublicKeyFile")


def parse_hub_spec(spec: str) -> HubConfig:
    """``NAME[:PARTITIONS[:GROUP,GROUP...]]`` (the command line's ``--hub``): a hub with that
    many partitions (2 when not given) and those consumer groups besides ``$Default``."""
    name, _, rest = spec.partition(":")
    count, _, groups = rest.partition(":")
    try:
        partitions = int(count) if count.strip() else 2
    except ValueError:
        raise ValueError(
            f"{spec!r}: expected NAME:PARTITIONS[:GROUP,...], e.g. orders:4:spark"
        ) from None
    hub = HubConfig(name.strip(), partitions)
    hub.add_consumer_groups(g.strip() for g in groups.split(",") if g.strip())
    return hub


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
    namespace:
        The namespace's name, as the service names it in some error descriptions.
    jwt:
        The token authority whose Entra ID-style JWTs (``TokenCredential``) are verified and
        accepted; links they authorized are detached once the token expires unrenewed.
        ``None``: JWTs are accepted unverified, and only when no keys are configured.
    """

    hubs: list[HubConfig] = field(default_factory=list)
    keys: dict[str, str] = field(default_factory=dict)
    data_dir: Path | None = None
    fsync: FsyncPolicy = "interval"
    fsync_interval: float = 1.0
    segment_bytes: int = 16 * 1024 * 1024
    retention_check_interval: float = 1.0
    clock: Callable[[], float] = time.time
    namespace: str = DEFAULT_NAMESPACE
    jwt: JwtAuthority | None = None

    def hub(self, name: str) -> HubConfig | None:
        for hub in self.hubs:
            if hub.name.lower() == name.lower():
                return hub
        return None

    def add_consumer_groups(self, names: Iterable[str]) -> None:
        """Add consumer groups to every hub (the command line's ``--consumer-group``)."""
        names = list(names)
        for hub in self.hubs:
            hub.add_consumer_groups(names)

    @classmethod
    def from_hub_specs(cls, specs: Iterable[str], **kwargs: Any) -> EmulatorConfig:
        """Build from ``name[:partitions[:group,...]]`` strings (the CLI's ``--hub``)."""
        return cls(hubs=[parse_hub_spec(spec) for spec in specs], **kwargs)

    @classmethod
    def from_file(cls, path: str | Path, **overrides: Any) -> EmulatorConfig:
        return cls.from_dict(json.loads(Path(path).read_text()), **overrides)

    @classmethod
    def from_dict(cls, data: dict[str, Any], **overrides: Any) -> EmulatorConfig:
        """Read Microsoft's shape: ``UserConfig.NamespaceConfig[].Entities[]``."""
        hubs: list[HubConfig] = []
        names: list[str] = []
        user = data.get("UserConfig", {})
        for namespace in user.get("NamespaceConfig", []):
            if str(namespace.get("Type", "EventHub")).lower() != "eventhub":
                continue
            if namespace.get("Name"):
                names.append(str(namespace["Name"]))
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
        if names:
            kwargs["namespace"] = names[0]
        if "SharedAccessKeys" in extra:
            kwargs["keys"] = dict(extra["SharedAccessKeys"])
        if "DataDir" in extra:
            kwargs["data_dir"] = Path(extra["DataDir"])
        if "Fsync" in extra:
            kwargs["fsync"] = extra["Fsync"]
        if "Jwt" in extra:
            kwargs["jwt"] = jwt_authority(extra["Jwt"])
        retention = extra.get("Retention", {})
        for hub in hubs:
            spec = retention.get(hub.name, retention.get("*", {}))
            hub.retention_seconds = spec.get("Seconds")
            hub.retention_bytes = spec.get("Bytes")
        kwargs.update(overrides)
        return cls(**kwargs)
