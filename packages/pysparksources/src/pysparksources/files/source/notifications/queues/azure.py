"""Azure Storage queues (``azure-storage-queue``, the ``azure`` extra): Event Grid's blob
events for paths on Azure storage (``abfs://``, ``abfss://``, ``az://``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

from pysparksources.files.source.notifications.queues._queue import (
    NotificationQueue,
    QueueBackend,
    QueueMessage,
)

__all__ = ["AZURE_MAX_BATCH", "BACKEND", "azure_queue_account"]

AZURE_MAX_BATCH = 32  # messages per Azure receive, the service's maximum


def azure_queue_account(url: str) -> str:
    """The storage account of an Azure queue URL: ``https://<account>.queue.core.windows.net/q``,
    or path-style ``http://127.0.0.1:10001/<account>/q`` (Azurite, other emulators)."""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    if len(segments) >= 2:
        return segments[0]
    return (parts.hostname or "").split(".", 1)[0]


def _message(message: Any) -> QueueMessage:
    count = message.dequeue_count
    inserted = message.inserted_on
    return QueueMessage(
        message.id,
        message.pop_receipt,
        str(message.content or ""),
        count if isinstance(count, int) and not isinstance(count, bool) else None,
        inserted.astimezone(timezone.utc) if isinstance(inserted, datetime) else None,
    )


class _AzureQueue:
    def __init__(self, url: str, settings: Mapping[str, str]) -> None:
        from azure.storage.queue import QueueClient

        if "connection_string" in settings:
            name = urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1]
            self._client: Any = QueueClient.from_connection_string(
                settings["connection_string"], name
            )
        else:
            credential: Any = settings.get("sas_token")
            if "account_key" in settings:
                # The account comes from the URL here: asking the SDK (a client built without
                # a credential) fails for http URLs, which emulators use.
                from azure.core.credentials import AzureNamedKeyCredential

                account = azure_queue_account(url)
                credential = AzureNamedKeyCredential(account, settings["account_key"])
            self._client = QueueClient.from_queue_url(url, credential=credential)

    def receive(self, visibility_timeout_s: int, wait_s: int) -> list[QueueMessage]:
        # Azure has no long polling (wait_s is SQS's): an empty receive returns at once.
        pages = self._client.receive_messages(
            messages_per_page=AZURE_MAX_BATCH,
            max_messages=AZURE_MAX_BATCH,
            visibility_timeout=visibility_timeout_s,
        )
        return [_message(m) for m in pages]

    def delete(self, messages: Sequence[QueueMessage]) -> int:
        from azure.core.exceptions import ResourceNotFoundError

        refused = 0
        for message in messages:
            try:
                self._client.delete_message(message.id, message.receipt)
            except ResourceNotFoundError:
                # Deleted already, or delivered again since (a new pop receipt): it comes back
                # and is acknowledged then.
                refused += 1
        return refused

    def hide(self, message: QueueMessage, seconds: int) -> None:
        self._client.update_message(message.id, message.receipt, visibility_timeout=seconds)

    def close(self) -> None:
        self._client.close()


def _open(url: str, settings: Mapping[str, str]) -> NotificationQueue:
    return _AzureQueue(url, settings)


BACKEND = QueueBackend(
    kind="azure",
    title="an Azure Storage queue",
    serves="Azure storage (abfs://, events from Event Grid in a Storage queue)",
    protocols=("abfs", "abfss", "az"),
    settings=("connection_string", "account_key", "sas_token"),
    client_module="azure.storage.queue",
    extra="azure",
    scope="account",
    empty_may_miss=False,
    opener=_open,
)
