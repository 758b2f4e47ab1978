"""The queue backends: every module of this package whose name does not start with ``_``.

Each such module defines ``BACKEND``, its :class:`QueueBackend`, named as the module; they are
found here at import, so adding a kind of queue is adding its module.
"""

from __future__ import annotations

from collections.abc import Mapping

from pysparksources._core.module_plugins import declared_by_modules
from pysparksources.errors import ArgumentError
from pysparksources.files import NAME
from pysparksources.files.source.notifications.queues._queue import (
    NotificationQueue,
    QueueBackend,
)

__all__ = ["BACKENDS", "backend_for", "backend_named", "open_queue"]


def _found() -> tuple[QueueBackend, ...]:
    # The package is being imported (this module is imported from it), so its path is known.
    backends: list[QueueBackend] = declared_by_modules(
        __package__, "BACKEND", QueueBackend, lambda backend: backend.kind, "a QueueBackend of kind"
    )
    return tuple(sorted(backends, key=lambda backend: backend.kind))


BACKENDS = _found()
_BY_KIND = {backend.kind: backend for backend in BACKENDS}
_BY_PROTOCOL = {protocol: backend for backend in BACKENDS for protocol in backend.protocols}


def backend_for(protocol: str) -> QueueBackend | None:
    """The backend whose queues carry the events of paths on ``protocol``; None if none."""
    return _BY_PROTOCOL.get(protocol)


def backend_named(kind: str) -> QueueBackend:
    """The backend of ``kind`` (``NotificationOptions.kind``); an unknown kind is refused."""
    try:
        return _BY_KIND[kind]
    except KeyError:
        raise ArgumentError(
            NAME,
            f"no notification queue of kind {kind!r}: the kinds are "
            + ", ".join(backend.kind for backend in BACKENDS),
        ) from None


def open_queue(kind: str, url: str, settings: Mapping[str, str]) -> NotificationQueue:
    """The queue of ``kind`` at ``url`` (validated by the option parser)."""
    return backend_named(kind).open(url, settings)
