"""A pyfile source that stops dead at a step of a schema change, so a test can SIGKILL it.

Set EVOLUTION_PAUSE_AT (new_columns | before_version | after_version) and EVOLUTION_MARKER:
a task that finds new columns creates the marker at that step and sleeps until killed. The
pause is installed at the product's hook point for those steps (``SCHEMA_CHANGE_STEP``), in
the worker that reads. Importable by Spark's Python workers through PYTHONPATH (see
crash_drivers).
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
from pysparksources.files.schema.evolution import SCHEMA_CHANGE_STEP, SchemaChangeStep


def _pause(step: SchemaChangeStep) -> None:
    if os.environ.get("EVOLUTION_PAUSE_AT") == step:
        Path(os.environ["EVOLUTION_MARKER"]).write_text(step)
        time.sleep(600)


class PausingReader(FileStreamReader):
    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        SCHEMA_CHANGE_STEP.install(_pause)  # in this worker only
        return super().read(partition)


class PausingSource(FileDataSource):
    """pyfile whose stream reader pauses at EVOLUTION_PAUSE_AT (options parsed as pyfile's)."""

    STREAM_READER = f"{__name__}:PausingReader"

    @classmethod
    def name(cls) -> str:
        return "pyfile_pausing"
