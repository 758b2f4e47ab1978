"""``pysparksources eventhubs migrate-checkpoint``: continue a Scala-connector query elsewhere.

Reads the Scala connector's offset for the last committed batch of a checkpoint and turns it
into pyeventhub's ``startingPositions``. The connector's offset is ``{"<hub>": {"<partition>":
<next sequence number>}}`` (a batch read [start, end)), so the end of the last committed batch
is, per partition, the first sequence number that query had not yet delivered: starting there
inclusively reads no event twice and skips none. A batch planned but not committed is read
again, as Spark itself would on restart.

Imports neither Spark nor the Azure SDK: it only reads files (fsspec).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from typing import Any, TextIO

from pysparksources._core.checkpoint import Checkpoint, OffsetEntry
from pysparksources.errors import CheckpointError, MigrationError
from pysparksources.eventhubs import NAME

__all__ = ["Migration", "parse_connector_offset", "plan_migration", "run"]

PREFIX = "migrate-checkpoint"
HubSeqNos = dict[str, dict[str, int]]


def parse_connector_offset(text: str) -> HubSeqNos | None:
    """``{"<hub>": {"<partition id>": <seqNo>}}`` as dicts, or None for any other shape."""
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict) or not obj:
        return None
    result: HubSeqNos = {}
    for hub, partitions in obj.items():
        if not isinstance(partitions, dict) or not partitions:
            return None
        seq_nos: dict[str, int] = {}
        for pid, seq in partitions.items():
            valid_seq = isinstance(seq, int) and not isinstance(seq, bool) and seq >= 0
            digits = isinstance(pid, str) and pid.isascii() and pid.isdigit() and len(pid) < 20
            if not (digits and valid_seq):
                return None
            seq_nos[str(int(pid))] = seq
        result[hub] = seq_nos
    return result


def _ids(pids: Any) -> str:
    return ", ".join(str(p) for p in sorted(pids, key=int))


def _shorten(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


@dataclass
class Migration:
    """Where the old query stood for one hub, and what to tell the user about it."""

    hub: str
    source_index: int
    seq_nos: dict[str, int]
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def starting_positions(self) -> str:
        """The value for ``.option("startingPositions", ...)``: inclusive sequence numbers."""
        ordered = sorted(self.seq_nos, key=int)
        return json.dumps({pid: {"seqNo": self.seq_nos[pid]} for pid in ordered})


def _choose_index(entry: OffsetEntry, index: int | None) -> int:
    where = f"batch {entry.batch_id}"
    count = len(entry.sources)
    looks_like = [
        i for i, line in enumerate(entry.sources) if line and parse_connector_offset(line)
    ]
    if index is None:
        if len(looks_like) == 1:
            return looks_like[0]
        if not looks_like:
            shown = "; ".join(f"{i}: {_shorten(s or '-', 60)}" for i, s in enumerate(entry.sources))
            raise MigrationError(
                NAME,
                f"no source of {where} has an Event Hubs offset "
                f'{{"<hub>": {{"<partition>": <seqNo>}}}} (sources {shown})',
            )
        raise MigrationError(
            NAME,
            f"sources {_ids(looks_like)} of {where} all look like Event Hubs offsets "
            "(a Kafka source's offsets look the same); choose one with --source-index",
        )
    if not 0 <= index < count:
        raise MigrationError(
            NAME,
            f"--source-index {index}: the query of this checkpoint has {count} source(s) "
            f"(indexes 0..{count - 1})",
        )
    line = entry.sources[index]
    if line is None or parse_connector_offset(line) is None:
        hint = f"; sources that look like one: {_ids(looks_like)}" if looks_like else ""
        raise MigrationError(
            NAME,
            f"source {index} of {where} is not an Event Hubs offset "
            f'{{"<hub>": {{"<partition>": <seqNo>}}}}: {_shorten(line or "-")}{hint}',
        )
    return index


def _choose_hub(offset: HubSeqNos, hub: str | None, source: str) -> str:
    if hub is not None:
        if hub not in offset:
            raise MigrationError(
                NAME, f"hub {hub!r} is not in {source} (it names {', '.join(offset)})"
            )
        return hub
    if len(offset) > 1:
        raise MigrationError(
            NAME,
            f"{source} names several hubs ({', '.join(sorted(offset))}); choose one with --hub",
        )
    return next(iter(offset))


def _partition_warnings(migration: Migration, partition_count: int | None, hub_named: str) -> None:
    named = {int(p) for p in migration.seq_nos}
    if partition_count is not None:
        beyond = sorted(p for p in named if p >= partition_count)
        if beyond:
            raise MigrationError(
                NAME,
                f"the checkpoint names partition(s) {_ids(map(str, beyond))} of {hub_named} "
                f"but --partition-count is {partition_count}",
            )
        expected = set(range(partition_count))
    else:
        expected = set(range(max(named) + 1))
        migration.notes.append(
            f"the checkpoint names partitions {_ids(map(str, named))} of {hub_named}; "
            "partitions the hub gained later are not named (pass --partition-count to check)"
        )
    missing = sorted(expected - named)
    if missing:
        migration.warnings.append(
            f"the checkpoint does not name partition(s) {_ids(map(str, missing))} of "
            f"{hub_named}: {NAME} starts them at its startingPosition option "
            "(readStream default @latest: only events sent after the query starts; "
            "startingPosition=start reads them from their first retained event)"
        )


def _planned(planned: list[int]) -> str:
    return f"batch(es) {_ids(map(str, planned))} planned" if planned else "no batch planned"


def _index_without_commit(
    checkpoint: Checkpoint, planned: list[int], source_index: int | None, location: str
) -> int:
    """The source to read initial positions of, when no batch was committed."""
    if planned:
        return _choose_index(checkpoint.offsets(planned[-1]), source_index)
    if source_index is not None:
        return source_index
    candidates = [
        i
        for i in checkpoint.source_log_indexes()
        if parse_connector_offset(checkpoint.source_initial_log(i) or "")
    ]
    if len(candidates) == 1:
        return candidates[0]
    raise MigrationError(
        NAME,
        f"no committed batch in {location} (no batch planned) and "
        + (
            f"several sources kept initial positions ({_ids(map(str, candidates))}); "
            "choose one with --source-index"
            if candidates
            else "no source kept Event Hubs initial positions in sources/<index>/0"
        ),
    )


def plan_migration(
    location: str,
    source_index: int | None = None,
    hub: str | None = None,
    partition_count: int | None = None,
) -> Migration:
    """Read ``location`` and say where a pyeventhub query continues the Scala one."""
    if partition_count is not None and partition_count < 1:
        raise MigrationError(NAME, f"--partition-count {partition_count}: expected 1 or more")
    checkpoint = Checkpoint(location)
    planned = checkpoint.batch_ids("offsets")
    committed = checkpoint.last_committed()
    notes: list[str] = []
    if committed is not None:
        entry = checkpoint.offsets(committed)
        index = _choose_index(entry, source_index)
        text = entry.sources[index] or ""
        source = f"source {index} of batch {committed}"
        notes.append(f"batch {committed} is the last committed batch")
        later = [b for b in planned if b > committed]
        if later:
            notes.append(
                f"batch {later[-1]} was planned but not committed: its events are read again"
            )
    else:
        index = _index_without_commit(checkpoint, planned, source_index, location)
        initial = checkpoint.source_initial_log(index)
        if initial is None or parse_connector_offset(initial) is None:
            raise MigrationError(
                NAME,
                f"no committed batch in {location} ({_planned(planned)}) and no Event Hubs "
                f"initial positions in sources/{index}/0: start the {NAME} query with "
                "the startingPosition(s) the Scala query used",
            )
        text = initial
        source = f"the initial positions of source {index} (sources/{index}/0)"
        notes.append(
            "no batch was committed: these are the positions the Scala query started from, "
            "so its first batch is read again"
        )
    offset = parse_connector_offset(text) or {}
    chosen = _choose_hub(offset, hub, source)
    migration = Migration(chosen, index, offset[chosen], notes)
    _partition_warnings(migration, partition_count, f"hub {chosen!r}")
    return migration


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """The CLI handler: JSON on stdout, notes and warnings on stderr, errors without traceback."""
    stdout = out or sys.stdout
    stderr = err or sys.stderr
    try:
        migration = plan_migration(
            args.checkpoint,
            source_index=args.source_index,
            hub=args.hub,
            partition_count=args.partition_count,
        )
    except CheckpointError as error:  # MigrationError too; the command's prefix replaces ours
        print(f"{PREFIX}: error: {error.detail}", file=stderr)
        return 1
    except OSError as error:
        print(f"{PREFIX}: error: cannot read {args.checkpoint}: {error}", file=stderr)
        return 1
    for note in migration.notes:
        print(f"{PREFIX}: {note}", file=stderr)
    for warning in migration.warnings:
        print(f"{PREFIX}: warning: {warning}", file=stderr)
    print(
        f'{PREFIX}: use it as .option("startingPositions", ...) of a NEW query (new '
        f"checkpoint location) reading hub {migration.hub!r}",
        file=stderr,
    )
    print(migration.starting_positions(), file=stdout)
    return 0
