"""The queues notification discovery reads: one module per kind, found by the registry.

Every module here whose name does not start with ``_`` (``azure.py``, ``sqs.py``) is a
backend: it defines ``BACKEND``, a :class:`QueueBackend` (``_queue``) saying which paths it
serves, which ``queue.*`` settings and client it takes, and how its queue is opened. This
package's face is what the rest of pyfile uses.
"""

from pysparksources.files.source.notifications.queues._queue import (
    NotificationQueue,
    QueueBackend,
    QueueMessage,
)
from pysparksources.files.source.notifications.queues._registry import (
    BACKENDS,
    backend_for,
    backend_named,
    open_queue,
)

__all__ = [
    "BACKENDS",
    "NotificationQueue",
    "QueueBackend",
    "QueueMessage",
    "backend_for",
    "backend_named",
    "open_queue",
]
