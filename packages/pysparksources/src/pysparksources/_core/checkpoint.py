"""Reading a Structured Streaming checkpoint's logs without Spark (any fsspec filesystem).

What Spark writes (3.x and 4.x; facts and source references in docs/pyeventhub-source.md):
``metadata`` holds the query id; ``offsets/<batchId>`` holds a version line, the batch's
metadata JSON line, then one line per source of the query in source order (the offset JSON,
or ``-`` for none); ``commits/<batchId>`` exists once that batch completed. Log files are named
by the batch id alone: anything else in those folders (``.0.crc``, temp files) is not a batch.
A V1 source may keep its own log under ``sources/<index>/`` (the Scala Event Hubs connector
stores its initial positions in ``sources/<index>/0``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import fsspec

from pysparksources.errors import CheckpointError

__all__ = ["Checkpoint", "OffsetEntry", "log_number"]

_SUPPORTED_VERSION = 1
# Scala checkpoints are read by the command line (eventhubs migrate-checkpoint) only.
TOOL = "pysparksources"
_NO_OFFSET = "-"
_LONG_DIGITS = 19  # a batch id is a 64-bit long in Spark


def log_number(name: str) -> int | None:
    """The batch id a log file named ``name`` stands for, None when the name is not one.

    Only the number as Spark writes it (``str(batch_id)``): ASCII digits, at most a long's 19,
    no leading zero. ``"²"`` and ``"٣"`` pass ``str.isdigit`` (the first then fails ``int``,
    the second becomes the number of file ``3``), ``"07"`` would be read as file ``7``, and
    ``int`` refuses strings of over 4,300 digits.
    """
    if name.isascii() and name.isdigit() and len(name) <= _LONG_DIGITS:
        number = int(name)
        return number if str(number) == name else None
    return None


@dataclass(frozen=True)
class OffsetEntry:
    """One ``offsets/<batchId>`` file: the batch's end offset of every source, by index."""

    batch_id: int
    metadata: str
    sources: tuple[str | None, ...]


def _version(first_line: str, path: str) -> None:
    text = first_line.strip()
    version = log_number(text[1:]) if text.startswith("v") else None
    if version is None:
        raise CheckpointError(TOOL, f"{path} does not start with a log version line such as 'v1'")
    if version > _SUPPORTED_VERSION:
        raise CheckpointError(
            TOOL,
            f"{path} is log version {text}, written by a newer Spark; "
            f"this command reads v{_SUPPORTED_VERSION} (Spark 2.x to 4.x)",
        )


class Checkpoint:
    """A checkpoint location, read lazily; ``location`` is a local path or an fsspec URL."""

    def __init__(self, location: str, **storage_options: Any) -> None:
        self.location = location
        try:
            self._fs, root = fsspec.core.url_to_fs(location, **storage_options)
        except (ValueError, ImportError) as error:
            raise CheckpointError(TOOL, f"cannot open {location}: {error}") from None
        self._root = root.rstrip("/")
        if not (self._fs.isdir(self._path("offsets")) or self._fs.isfile(self._path("metadata"))):
            raise CheckpointError(
                TOOL,
                f"{location} is not a Structured Streaming checkpoint "
                "(it has neither a 'metadata' file nor an 'offsets' folder)",
            )

    def _path(self, *parts: str) -> str:
        return "/".join((self._root, *parts))

    def _read_text(self, *parts: str) -> str:
        data: bytes = self._fs.cat_file(self._path(*parts))
        try:
            return data.lstrip(b"\x00").decode("utf-8")
        except UnicodeDecodeError:
            raise CheckpointError(TOOL, f"{self._path(*parts)} is not a UTF-8 text log") from None

    def batch_ids(self, folder: str) -> list[int]:
        """Numeric entry names of ``folder`` (batch ids of offsets/commits), ascending."""
        path = self._path(folder)
        if not self._fs.isdir(path):
            return []
        names = (str(p).rstrip("/").rsplit("/", 1)[-1] for p in self._fs.ls(path, detail=False))
        numbers = (log_number(name) for name in names)
        return sorted(number for number in numbers if number is not None)

    def last_committed(self) -> int | None:
        """The newest batch in both logs: its offsets are where the query's output stands."""
        done = set(self.batch_ids("offsets")) & set(self.batch_ids("commits"))
        return max(done) if done else None

    def offsets(self, batch_id: int) -> OffsetEntry:
        path = f"{self.location.rstrip('/')}/offsets/{batch_id}"
        lines = self._read_text("offsets", str(batch_id)).split("\n")
        if len(lines) > 2 and lines[-1] == "":
            lines.pop()  # Spark writes no final newline; tolerate a hand-edited file's one
        if len(lines) < 2:
            raise CheckpointError(TOOL, f"{path} is incomplete (no metadata line)")
        _version(lines[0], path)
        sources = tuple(None if line == _NO_OFFSET else line for line in lines[2:])
        return OffsetEntry(batch_id, lines[1], sources)

    def source_log_indexes(self) -> list[int]:
        """Source indexes that keep their own log under ``sources/``."""
        return self.batch_ids("sources")

    def source_initial_log(self, index: int) -> str | None:
        """Body of ``sources/<index>/0`` (a V1 source's own first log entry), if any.

        The Scala connector writes a zero byte, a version line and its initial offset JSON.
        """
        parts = ("sources", str(index), "0")
        if not self._fs.isfile(self._path(*parts)):
            return None
        text = self._read_text(*parts)
        first, _, body = text.partition("\n")
        _version(first, f"{self.location.rstrip('/')}/{'/'.join(parts)}")
        return body.strip()
