"""A pyfile source that stops dead at a step of a schema change, so a test can SIGKILL it.

Set EVOLUTION_PAUSE_AT (new_columns | before_version | after_version) and EVOLUTION_MARKER:
a task that finds new columns creates the marker at that step and sleeps until killed. Importable by
Spark's Python workers through PYTHONPATH (see crash_drivers).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
from pyspark.sql.datasource import InputPartition

from pysparksources.files.datasource import FileDataSource
from pysparksources.files.reader import FileStreamReader
from pysparksources.files.schema import evolution as _evolution


def _pause(step: str) -> None:
    if os.environ.get("EVOLUTION_PAUSE_AT") == step:
        Path(os.environ["EVOLUTION_MARKER"]).write_text(step)
        time.sleep(600)


class PausingReader(FileStreamReader):
    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        _evolution.step_hook = _pause  # in this worker only
        return super().read(partition)


class PausingSource(FileDataSource):
    """pyfile whose stream reader pauses at EVOLUTION_PAUSE_AT (options parsed as pyfile's)."""

    STREAM_READER = f"{__name__}:PausingReader"

    @classmethod
    def name(cls) -> str:
        return "pyfile_pausing"
