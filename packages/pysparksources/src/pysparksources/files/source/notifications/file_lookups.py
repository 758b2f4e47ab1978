"""What storage says about the files notifications name: one ``info`` per file.

A queue message is trusted to name a file, not to say what it is: its size, its time and
whether it still exists come from the filesystem, as a listing would have given them. On an
async fsspec filesystem (adlfs, s3fs, gcsfs) the look-ups of one trigger run concurrently on
fsspec's event loop; on others, one after another.
"""

from __future__ import annotations

import asyncio
import posixpath
from collections.abc import Iterable
from typing import Any

from pysparksources._redact import NOT_SHOWN, showable
from pysparksources.errors import ServiceError
from pysparksources.files import NAME
from pysparksources.files.storage.filesystem import FileLocation
from pysparksources.files.storage.folder_listing import FileEntry, modification_ms

__all__ = ["CONCURRENCY", "look_up"]

CONCURRENCY = 32  # look-ups in flight at once on an async filesystem


def look_up(location: FileLocation, paths: Iterable[str]) -> dict[str, FileEntry | None]:
    """Each path's entry (size and modification time from storage), or None when it does not
    exist or is not a file. Any other failure is a :class:`ServiceError` naming the file."""
    wanted = list(dict.fromkeys(paths))
    if not wanted:
        return {}
    fs: Any = location.filesystem()
    # A cached listing of the folder would answer for a file created since (adlfs and s3fs
    # answer "directory" for a name missing from a cached listing): ask the service.
    for folder in {posixpath.dirname(p) for p in wanted}:
        fs.invalidate_cache(folder)
    if _is_async(fs):
        from fsspec.asyn import sync

        infos = sync(fs.loop, _gather, fs, wanted)
    else:
        infos = [_info(fs, p) for p in wanted]
    found: dict[str, FileEntry | None] = {}
    for path, info in zip(wanted, infos, strict=True):
        if isinstance(info, BaseException):
            if isinstance(info, FileNotFoundError):
                found[path] = None
                continue
            raise _failure(location, path, info) from None
        found[path] = _entry(path, info)
    return found


def _is_async(fs: Any) -> bool:
    """An async fsspec filesystem; a wrapper (DirFileSystem) only when what it wraps is."""
    inner = getattr(fs, "fs", None)
    wrapped_async = inner is None or bool(getattr(inner, "async_impl", False))
    return bool(getattr(fs, "async_impl", False)) and wrapped_async


async def _gather(fs: Any, paths: list[str]) -> list[Any]:
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(path: str) -> Any:
        async with gate:
            try:
                return await fs._info(path)
            except Exception as error:  # returned, then sorted out by the caller
                return error

    return list(await asyncio.gather(*(one(p) for p in paths)))


def _info(fs: Any, path: str) -> Any:
    try:
        return fs.info(path)
    except Exception as error:  # sorted out by the caller
        return error


def _entry(path: str, info: Any) -> FileEntry | None:
    if not isinstance(info, dict) or info.get("type", "file") != "file":
        return None  # a folder (or a placeholder blob for one): not a file to read
    size = info.get("size")
    return FileEntry(path, modification_ms(info), size if isinstance(size, int) else 0)


def _failure(location: FileLocation, path: str, error: BaseException) -> ServiceError:
    detail = showable(str(error)[:300]) or NOT_SHOWN
    return ServiceError(
        NAME,
        f"could not look up the notified file {location.url(path)}: "
        f"{type(error).__name__}: {detail}",
    )
