"""Group a batch's files into input partitions by size, the way Spark's file scan does.

Target bytes per partition = min(maxPartitionBytes, max(openCostInBytes, total / cores)); each
file costs its size plus openCostInBytes. Files of a splittable format (parquet) larger than
the target are split into byte ranges (a task reads the units that start in its range, as
Spark does); files of the other formats are read whole by one task.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql.datasource import InputPartition

from pysparksources.files.formats import FileSplit, format_named
from pysparksources.files.storage.filesystem import FileLocation
from pysparksources.files.storage.partition_folders import partition_values, relative_dir

if TYPE_CHECKING:
    import pyarrow as pa

    from pysparksources.files.config import ReaderOptions
    from pysparksources.files.schema.evolution import Evolution

__all__ = ["FilePartition", "ReadContext", "max_split_bytes", "plan_partitions"]


@dataclass(frozen=True)
class ReadContext:
    """What every task of a batch needs to parse its files (shared, pickled per partition)."""

    location: FileLocation
    target: pa.Schema
    reader: ReaderOptions
    corrupt_log: FileLocation | None = None
    batch_id: int = -1
    evolution: Evolution | None = None  # files fitted to the schema (see schema.evolution)

    def __repr__(self) -> str:
        return f"ReadContext({self.location!r}, {self.reader.format})"


@dataclass(frozen=True)
class FilePartition(InputPartition):  # type: ignore[misc]
    """One task: a few files or file ranges, and how to read them."""

    index: int
    splits: tuple[FileSplit, ...]
    context: ReadContext

    def __repr__(self) -> str:
        return f"FilePartition({self.index}, {len(self.splits)} splits)"


def max_split_bytes(
    sizes: list[int], max_partition_bytes: int, open_cost: int, cores: int | None = None
) -> int:
    total = sum(size + open_cost for size in sizes)
    per_core = total // max(1, cores or os.cpu_count() or 1)
    return min(max_partition_bytes, max(open_cost, per_core))


def _splits(
    path: str, size: int, values: dict[str, str], fmt: str, target_bytes: int
) -> list[FileSplit]:
    if not format_named(fmt).splittable or size <= target_bytes:
        return [FileSplit(path, size, 0, None, values)]
    return [
        FileSplit(path, size, start, min(target_bytes, size - start), values)
        for start in range(0, size, target_bytes)
    ]


def plan_partitions(
    files: list[tuple[str, int]],
    base: str,
    context: ReadContext,
    max_partition_bytes: int,
    open_cost: int,
    with_partition_values: bool = True,
    cores: int | None = None,
) -> list[FilePartition]:
    """``files`` are (path, size); returns partitions, biggest splits first, next-fit packed."""
    target = max_split_bytes([s for _, s in files], max_partition_bytes, open_cost, cores)
    splits: list[FileSplit] = []
    for path, size in files:
        values = partition_values(relative_dir(base, path)) if with_partition_values else {}
        splits.extend(_splits(path, size, values, context.reader.format, target))
    splits.sort(key=lambda s: (-(s.length if s.length is not None else s.size), s.path, s.start))
    groups: list[list[FileSplit]] = []
    current: list[FileSplit] = []
    current_bytes = 0
    for split in splits:
        length = split.length if split.length is not None else split.size
        if current and current_bytes + length > target:
            groups.append(current)
            current, current_bytes = [], 0
        current.append(split)
        current_bytes += length + open_cost
    if current:
        groups.append(current)
    return [FilePartition(i, tuple(group), context) for i, group in enumerate(groups)]
