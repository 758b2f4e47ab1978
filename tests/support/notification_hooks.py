"""A pyfile source that stops dead at a chosen moment of notification discovery, so a test can
SIGKILL it there.

NOTIFY_PAUSE_AT names the moment, NOTIFY_PAUSE_BATCH the batch, NOTIFY_MARKER the file created
when it is reached (the process then sleeps until killed):

- ``read``: a task of Spark batch NOTIFY_PAUSE_BATCH is reading. Its messages were received
  and its offset is in Spark's offset log, but the batch is not committed.
- ``committed``: the engine asks for the batch after log batch NOTIFY_PAUSE_BATCH, which is in
  Spark's commit log, and the source has not deleted that batch's messages yet.

Importable by Spark's Python workers through PYTHONPATH (see crash_drivers).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import InputPartition

from pysparksources.files.datasource import FileDataSource
from pysparksources.files.reader import FileStreamReader


def _pause(step: str) -> None:
    Path(os.environ["NOTIFY_MARKER"]).write_text(step)
    time.sleep(600)


def _at(step: str) -> bool:
    return os.environ.get("NOTIFY_PAUSE_AT") == step


class PausingNotificationReader(FileStreamReader):
    def latestOffset(self, start: dict[str, Any], limit: Any) -> dict[str, Any]:
        committed = int(start.get("logOffset", -1))
        if _at("committed") and committed >= int(os.environ["NOTIFY_PAUSE_BATCH"]):
            _pause("committed")
        return super().latestOffset(start, limit)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        context = TaskContext.get()
        batch = context.getLocalProperty("streaming.sql.batchId") if context else None
        if (
            _at("read")
            and batch is not None
            and int(batch) >= int(os.environ["NOTIFY_PAUSE_BATCH"])
        ):
            _pause("read")
        return super().read(partition)


class PausingNotificationSource(FileDataSource):
    """pyfile whose stream reader pauses at NOTIFY_PAUSE_AT (options parsed as pyfile's)."""

    STREAM_READER = f"{__name__}:PausingNotificationReader"

    @classmethod
    def name(cls) -> str:
        return "pyfile_notify_pausing"
