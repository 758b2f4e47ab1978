"""A pyfile sink that stops dead at a chosen point, so a test can SIGKILL its process there.

Set SINK_CRASH_AT (write | before_manifest | after_manifest), SINK_CRASH_BATCH and
SINK_CRASH_MARKER: on reaching the point, the writer creates the marker file and sleeps
until killed. Importable by Spark's Python workers through PYTHONPATH.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql.datasource import WriterCommitMessage

from pysparksources.files.datasource import FileDataSource
from pysparksources.files.writer import FileStreamWriter, FilesWritten


def _stop_here(stage: str, batch_id: int | None) -> None:
    if os.environ.get("SINK_CRASH_AT") != stage:
        return
    if batch_id != int(os.environ.get("SINK_CRASH_BATCH", "-1")):
        return
    Path(os.environ["SINK_CRASH_MARKER"]).write_text(stage)
    time.sleep(600)


class HookedWriter(FileStreamWriter):
    def write(self, iterator: Iterator[pa.RecordBatch]) -> FilesWritten:
        context = TaskContext.get()
        batch_id = int(context.getLocalProperty("streaming.sql.batchId"))

        def pausing() -> Iterator[pa.RecordBatch]:
            for batch in iterator:
                yield batch
                if context.partitionId() == 0:
                    _stop_here("write", batch_id)

        return super().write(pausing())

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        _stop_here("before_manifest", batchId)
        super().commit(messages, batchId)
        _stop_here("after_manifest", batchId)


class HookedSource(FileDataSource):
    """pyfile whose stream writer is :class:`HookedWriter` (options parsed as pyfile's)."""

    STREAM_WRITER = f"{__name__}:HookedWriter"

    @classmethod
    def name(cls) -> str:
        return "pyfile_hooked"
