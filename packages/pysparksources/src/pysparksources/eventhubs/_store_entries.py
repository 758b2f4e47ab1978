"""What the Event Hubs checkpoint store holds, read back with every value checked.

The store is a Blob container that other programs write too (EventProcessorClient, tools that
reset a group, people), so what comes back is hostile until checked: a blob under the group's
prefix whose name is not a partition id is not a checkpoint (an official processor never looks
it up either); a checkpoint blob of a partition the query reads must carry ``offset`` and
``sequencenumber`` metadata, each ``-1`` or a decimal 64-bit number, or the query fails with a
:class:`CheckpointError` that names the blob. ``-1`` is what pyeventhub writes for a partition
where nothing before its position is retained (see ``_checkpoint_store``): as an offset it is
"the start of the stream" to every SDK.

The layout is ``azure-eventhub-checkpointstoreblob``'s: ``<namespace>/<hub>/<group>/checkpoint/
<partition>`` and ``.../ownership/<partition>``, the whole name lower-cased; metadata
``offset`` and ``sequencenumber`` on checkpoints, ``ownerid`` on claims.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from pysparksources.errors import CheckpointError
from pysparksources.eventhubs import NAME
from pysparksources.eventhubs._positions import START, Position

__all__ = [
    "Claim",
    "StoredCheckpoint",
    "blob_prefix",
    "parse_checkpoint",
    "parse_claim",
    "partition_of",
]

_NUMBER = re.compile(r"-1|0|[1-9][0-9]{0,18}")  # as SDKs write an int64 (and -1)
_PARTITION = re.compile(r"0|[1-9][0-9]{0,8}")
_ACCEPTED = (
    "a checkpoint holds metadata offset and sequencenumber, each -1 or a decimal number "
    "(as azure-eventhub-checkpointstoreblob writes them)"
)


@dataclass(frozen=True)
class StoredCheckpoint:
    """One partition's checkpoint: the last event processed (sequence number -1 and offset
    "-1": none, the partition is read from the start of what it retains)."""

    blob: str
    partition_id: str
    sequence_number: int
    offset: str

    def resume_position(self) -> Position:
        """Where an EventProcessorClient resumes: after the offset (it ignores the rest)."""
        if self.offset == "-1":
            return START
        return Position("offset", offset=self.offset, inclusive=False)


@dataclass(frozen=True)
class Claim:
    """A processor's claim on a partition: empty ``owner`` means given up."""

    partition_id: str
    owner: str
    last_modified: datetime | None


def blob_prefix(namespace: str, hub: str, group: str, kind: str) -> str:
    """Where the store keeps the group's ``checkpoint`` or ``ownership`` blobs."""
    return f"{namespace}/{hub}/{group}/{kind}/".lower()


def partition_of(name: object, prefix: str) -> str | None:
    """The partition a blob under ``prefix`` is for; None if its name is no partition id."""
    if not isinstance(name, str) or not name.startswith(prefix):
        return None
    rest = name[len(prefix) :]
    return rest if _PARTITION.fullmatch(rest) else None


def parse_checkpoint(
    where: str, name: str, partition_id: str, metadata: object
) -> StoredCheckpoint:
    """The checkpoint in blob ``name`` (of ``partition_id``) of the store ``where`` describes;
    CheckpointError naming the blob when its metadata is not one."""
    if not isinstance(metadata, Mapping):
        problem = f"metadata of type {type(metadata).__name__}, not names and values"
        raise _not_a_checkpoint(where, name, problem)
    values = {}
    for key in ("offset", "sequencenumber"):
        value = metadata.get(key)
        if value is None:
            raise _not_a_checkpoint(where, name, f"no '{key}' metadata")
        if not isinstance(value, str) or _NUMBER.fullmatch(value) is None:
            problem = f"'{key}' {_shown(value)}, not -1 or a decimal number"
            raise _not_a_checkpoint(where, name, problem)
        if int(value) >= 2**63:
            problem = f"'{key}' {_shown(value)}, beyond a 64-bit number"
            raise _not_a_checkpoint(where, name, problem)
        values[key] = value
    return StoredCheckpoint(name, partition_id, int(values["sequencenumber"]), values["offset"])


def parse_claim(
    where: str, name: str, partition_id: str, metadata: object, last_modified: object
) -> Claim:
    """The claim in blob ``name``; a blob without ``ownerid`` claims nothing (a processor that
    gives a partition up empties it, which the storage client reads back as None)."""
    owner = metadata.get("ownerid") if isinstance(metadata, Mapping) else None
    if owner is None:
        owner = ""
    if not isinstance(owner, str):
        raise CheckpointError(
            NAME,
            f"blob {_shown(name, 1024)} in the {where} is not a partition claim: its 'ownerid' is "
            f"{_shown(owner)}, not text. Delete it (a running EventProcessorClient claims the "
            "partition again)",
        )
    modified = last_modified if isinstance(last_modified, datetime) else None
    return Claim(partition_id, owner, modified)


def _shown(value: object, limit: int = 40) -> str:
    """A value for a message: one line, at most ``limit`` characters of it, its type when it
    is not text."""
    if not isinstance(value, str):
        return f"of type {type(value).__name__}"
    return repr(value) if len(value) <= limit else repr(value[:limit]) + "..."


def _not_a_checkpoint(where: str, name: str, problem: str) -> CheckpointError:
    return CheckpointError(
        NAME,
        f"blob {_shown(name, 1024)} in the {where} is not a checkpoint: it has {problem}; "
        f"{_ACCEPTED}. An EventProcessorClient cannot resume from it either: delete it (the "
        "partition then starts at its first retained event) or write a checkpoint there",
    )
