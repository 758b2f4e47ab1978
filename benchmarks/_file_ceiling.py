"""``pyfile_ceiling``: the best any Python file source can reach at pyfile's batch shape.

It plans exactly like pyfile, but its tasks yield batches already parsed (one file of the same
format, parsed once per Python worker and repeated for every file of the task). Kept apart from
``_reference`` because it is built on pyfile's reader: only ``files-source`` imports it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pyspark.sql.datasource import DataSource, InputPartition

from pysparksources._core.option_table import Use
from pysparksources.files.options import parse_options
from pysparksources.files.planning import FilePartition
from pysparksources.files.reader import FileStreamReader, read_partition

__all__ = ["CeilingFileSource"]

_PARSED: dict[str, list[Any]] = {}


class _CeilingReader(FileStreamReader):
    def read(self, partition: InputPartition) -> Iterator[Any]:
        assert isinstance(partition, FilePartition)
        first = partition.splits[0].path
        key = f"{partition.context.reader.format}:{Path(first).parent}"
        if key not in _PARSED:
            one = FilePartition(0, partition.splits[:1], partition.context)
            _PARSED[key] = list(read_partition(one))
        for _ in partition.splits:
            yield from _PARSED[key]


class CeilingFileSource(DataSource):  # type: ignore[misc]
    @classmethod
    def name(cls) -> str:
        return "pyfile_ceiling"

    def streamReader(self, schema: Any) -> Any:
        return _CeilingReader(parse_options(dict(self.options), Use.STREAM_READ, schema), schema)
