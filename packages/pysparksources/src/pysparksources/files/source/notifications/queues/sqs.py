"""The queues notification discovery reads, behind one small interface.

An Azure Storage queue (``azure-storage-queue``, the ``azure`` extra) or an Amazon SQS queue
(``boto3``, the ``s3`` extra), both read the same way: receive a few messages, which stay
invisible to other readers for a visibility timeout, and delete each one later with the
receipt of its latest delivery. The clients are imported only when a queue is opened, so a
listing-mode query never needs them.

The queue URL and the ``queue.*`` settings may hold credentials (a SAS token in the URL, an
account key, an AWS secret): nothing here prints them, and the client libraries' own errors
name neither (they are logged by type and message only by the caller).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

__all__ = [
    "AZURE_SETTINGS",
    "SQS_SETTINGS",
    "NotificationQueue",
    "QueueMessage",
    "azure_queue_account",
    "open_queue",
    "queue_kind",
]

log = logging.getLogger(__name__)

# What ``queue.<name>`` may set, per kind of queue (anything else is refused at start).
AZURE_SETTINGS = ("connection_string", "account_key", "sas_token")
SQS_SETTINGS = (
    "region_name",
    "endpoint_url",
    "aws_access_key_id",
    "aws_secret_access_key",
    "aws_session_token",
    "profile_name",
)
# Which queue serves which source filesystem (fsspec protocols).
_KINDS = {"abfs": "azure", "abfss": "azure", "az": "azure", "s3": "sqs", "s3a": "sqs"}
AZURE_MAX_BATCH = 32  # messages per Azure receive, the service's maximum
SQS_MAX_BATCH = 10  # messages per SQS receive or delete batch, the service's maximum


def queue_kind(protocol: str) -> str | None:
    """``azure`` or ``sqs`` for a source on that filesystem; None when none applies."""
    return _KINDS.get(protocol)


@dataclass(frozen=True)
class QueueMessage:
    """One delivery of a message: ``receipt`` deletes it (only the latest delivery's works)."""

    id: str
    receipt: str
    body: str


class NotificationQueue(Protocol):
    def receive(self, visibility_timeout_s: int, wait_s: int) -> list[QueueMessage]:
        """Up to one service batch of messages, hidden for ``visibility_timeout_s``."""

    def delete(self, messages: Sequence[QueueMessage]) -> int:
        """Delete ``messages``; returns how many the service refused (they come back later)."""

    def hide(self, message: QueueMessage, seconds: int) -> None:
        """Keep ``message`` (not deleted) invisible for ``seconds`` from now."""

    def close(self) -> None: ...


def open_queue(kind: str, url: str, settings: Mapping[str, str]) -> NotificationQueue:
    """The queue at ``url`` (validated by the option parser) with ``queue.*`` settings."""
    if kind == "azure":
        return _AzureQueue(url, settings)
    return _SqsQueue(url, settings)


def azure_queue_account(url: str) -> str:
    """The storage account of an Azure queue URL: ``https://<account>.queue.core.windows.net/q``,
    or path-style ``http://127.0.0.1:10001/<account>/q`` (Azurite, other emulators)."""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    if len(segments) >= 2:
        return segments[0]
    return (parts.hostname or "").split(".", 1)[0]


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
        return [QueueMessage(m.id, m.pop_receipt, str(m.content or "")) for m in pages]

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


class _SqsQueue:
    def __init__(self, url: str, settings: Mapping[str, str]) -> None:
        import boto3  # type: ignore[import-untyped]

        self._url = url
        options = dict(settings)
        session = boto3.session.Session(profile_name=options.pop("profile_name", None))
        host = urlsplit(url).hostname or ""
        if "endpoint_url" not in options and not host.endswith(".amazonaws.com"):
            # botocore sends SQS requests to the client's endpoint, not the queue URL's host:
            # an S3/SQS-compatible server (moto, LocalStack) is reached through the URL.
            parts = urlsplit(url)
            options["endpoint_url"] = f"{parts.scheme}://{parts.netloc}"
        if "region_name" not in options:
            labels = host.split(".")
            # sqs.<region>.amazonaws.com; anything else needs queue.region_name (or the
            # environment's AWS_DEFAULT_REGION, which boto3 reads itself).
            if len(labels) >= 4 and labels[0] == "sqs":
                options["region_name"] = labels[1]
            elif session.region_name is None:
                options["region_name"] = "us-east-1"
        self._client: Any = session.client("sqs", **options)

    def receive(self, visibility_timeout_s: int, wait_s: int) -> list[QueueMessage]:
        response = self._client.receive_message(
            QueueUrl=self._url,
            MaxNumberOfMessages=SQS_MAX_BATCH,
            VisibilityTimeout=visibility_timeout_s,
            WaitTimeSeconds=wait_s,
        )
        return [
            QueueMessage(m["MessageId"], m["ReceiptHandle"], m.get("Body", ""))
            for m in response.get("Messages", [])
        ]

    def delete(self, messages: Sequence[QueueMessage]) -> int:
        refused = 0
        for start in range(0, len(messages), SQS_MAX_BATCH):
            chunk = messages[start : start + SQS_MAX_BATCH]
            entries = [{"Id": str(i), "ReceiptHandle": m.receipt} for i, m in enumerate(chunk)]
            response = self._client.delete_message_batch(QueueUrl=self._url, Entries=entries)
            refused += len(response.get("Failed", []))
        return refused

    def hide(self, message: QueueMessage, seconds: int) -> None:
        self._client.change_message_visibility(
            QueueUrl=self._url, ReceiptHandle=message.receipt, VisibilityTimeout=seconds
        )

    def close(self) -> None:
        self._client.close()
