"""A file lent to one of pyarrow's streaming readers, taken back before anyone reads it again.

pyarrow's csv and json readers read ahead on threads of their own, and those reads go on for a
while after the reader has raised. Reading the file again from its start (the escape-character
and malformed-record paths do) while such a read is under way moves its position mid-way:
lines come out cut in two and rows go missing, a different few on every run. Every read goes
through a lock, and once the file is taken back pyarrow's reads find its end.
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["LentFile"]


class LentFile:
    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self._lock = threading.Lock()
        self._taken_back = False
        self.closed = False

    def read(self, size: int = -1) -> bytes:
        with self._lock:
            if self._taken_back:
                return b""
            data: bytes = self._raw.read(size)
            return data

    def take_back(self) -> None:
        """Wait for a read under way to end; later reads by pyarrow get nothing."""
        with self._lock:
            self._taken_back = True

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True
