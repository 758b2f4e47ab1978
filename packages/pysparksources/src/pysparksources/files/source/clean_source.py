"""cleanSource: archive or delete a batch's files once the batch is committed.

Runs on one background thread so commit() (on the query's planning path) never waits for
storage; a failure is logged and never fails the query, as in Spark. A file already gone (a
batch cleaned again after a restart) is skipped quietly. Archived files keep their
full path under sourceArchiveDir (``/in/a/f.csv`` -> ``<archive>/in/a/f.csv``).

Only files below the source's folder are ever deleted or moved (the rule of ``storage.safe_paths``):
the paths come from the source log, a file another process could have edited.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from pysparksources._redact import scrubbed
from pysparksources.files import NAME
from pysparksources.files.storage.filesystem import FileLocation
from pysparksources.files.storage.safe_paths import below

__all__ = ["SourceCleaner"]

log = logging.getLogger(__name__)


class SourceCleaner:
    def __init__(
        self, mode: str, source: FileLocation, archive: FileLocation | None, root: str
    ) -> None:
        self.mode = mode
        self._source = source
        self._root = root
        self._archive = archive
        self._pool: ThreadPoolExecutor | None = None
        self._pending: list[Future[None]] = []

    def submit(self, paths: Iterable[str], then: Callable[[], None] | None = None) -> None:
        """Clean ``paths`` in the background, then call ``then`` (e.g. record the progress)."""
        if self.mode == "off":
            return
        todo = list(paths)
        if not todo and then is None:
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix=f"{NAME}-clean")
        self._pending = [f for f in self._pending if not f.done()]
        self._pending.append(self._pool.submit(self._clean, todo, then))

    def _clean(self, paths: list[str], then: Callable[[], None] | None = None) -> None:
        for path in paths:
            if below(path, self._root) is None:
                log.warning(
                    "%s: cleanSource=%s skips %r: not a file below the source path (was the "
                    "source log edited?)",
                    NAME,
                    self.mode,
                    self._source.url(path),
                )
                continue
            try:
                fs: Any = self._source.filesystem()
                if self.mode == "delete":
                    fs.rm(path)
                elif self._archive is not None:  # always set with cleanSource=archive
                    target = self._archive.path.rstrip("/") + "/" + path.lstrip("/")
                    fs.makedirs(target.rsplit("/", 1)[0], exist_ok=True)
                    fs.mv(path, target)
            except FileNotFoundError:
                # Already cleaned: a batch cleaned just before a crash is cleaned again.
                log.debug("%s: cleanSource found %s gone already", NAME, self._source.url(path))
            except Exception as error:  # Spark logs cleanup failures and carries on
                log.warning(
                    "%s: cleanSource=%s failed for %s: %s",
                    NAME,
                    self.mode,
                    self._source.url(path),
                    scrubbed(str(error)),
                )
        if then is not None:
            try:
                then()
            except Exception as error:  # the record only saves work after a restart
                log.warning(
                    "%s: cleanSource could not record its progress: %s", NAME, scrubbed(str(error))
                )

    def wait(self, timeout: float | None = None) -> None:
        """Finish queued work (used by stop() and tests); a failure here never stops a query."""
        for future in self._pending:
            try:
                future.result(timeout)
            except Exception as error:
                log.warning(
                    "%s: cleanSource=%s did not finish: %s", NAME, self.mode, scrubbed(str(error))
                )
        self._pending = []

    def close(self) -> None:
        if self._pool is not None:
            self.wait(60)
            self._pool.shutdown(wait=True)
            self._pool = None
