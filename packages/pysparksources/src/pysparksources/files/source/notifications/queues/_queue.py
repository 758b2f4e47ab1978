"""What every queue backend is: one message, one queue, one backend's description.

A queue is read the same way whatever serves it: receive a few messages, which stay invisible
to other readers for a visibility timeout, and delete each one later with the receipt of its
latest delivery. A backend module (``azure.py``, ``sqs.py``) says which paths it serves, what
``queue.*`` settings it takes and which client it needs, and opens its queue; the client is
imported only then, so a listing-mode query never needs it.

The queue URL and the ``queue.*`` settings may hold credentials (a SAS token in the URL, an
account key, an AWS secret): nothing here prints them, and the client libraries' own errors
name neither (they are logged by type and message only by the caller).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

__all__ = ["NotificationQueue", "QueueBackend", "QueueMessage"]


@dataclass(frozen=True)
class QueueMessage:
    """One delivery of a message: ``receipt`` deletes it (only the latest delivery's works).

    ``receive_count`` (how many times the service has handed the message out, this delivery
    included) and ``enqueued_at`` (when it entered the queue, UTC) are the service's own
    attributes, None where it did not give them.
    """

    id: str
    receipt: str
    body: str
    receive_count: int | None = None
    enqueued_at: datetime | None = None


class NotificationQueue(Protocol):
    def receive(self, visibility_timeout_s: int, wait_s: int) -> list[QueueMessage]:
        """Up to one service batch of messages, hidden for ``visibility_timeout_s``."""

    def delete(self, messages: Sequence[QueueMessage]) -> int:
        """Delete ``messages``; returns how many the service refused (they come back later)."""

    def hide(self, message: QueueMessage, seconds: int) -> None:
        """Keep ``message`` (not deleted) invisible for ``seconds`` from now."""

    def close(self) -> None: ...


@dataclass(frozen=True)
class QueueBackend:
    """One kind of queue, as its module declares it (``BACKEND``)."""

    kind: str  # the module's name, and NotificationOptions.kind
    title: str  # "an SQS queue", in messages
    serves: str  # which paths, in the message refusing another path
    protocols: tuple[str, ...]  # the fsspec protocols of the paths whose events it carries
    settings: tuple[str, ...]  # what queue.<name> may set (anything else is refused at start)
    client_module: str  # imported when a queue is opened; checked when the query starts
    extra: str  # the pysparksources extra that installs it
    # What an event must name to be a file of the path: its storage account, or its bucket.
    scope: Literal["account", "bucket"]
    # An empty receive may be wrong while messages wait (SQS's short poll samples servers).
    empty_may_miss: bool
    opener: Callable[[str, Mapping[str, str]], NotificationQueue]

    def open(self, url: str, settings: Mapping[str, str]) -> NotificationQueue:
        """The queue at ``url`` (validated by the option parser) with ``queue.*`` settings."""
        return self.opener(url, settings)
