"""Amazon SQS queues (``boto3``, the ``s3`` extra): S3 event notifications (direct, or through
EventBridge) for paths on S3 (``s3://``, ``s3a://``)."""

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

__all__ = ["BACKEND", "SQS_MAX_BATCH"]

SQS_MAX_BATCH = 10  # messages per SQS receive or delete batch, the service's maximum
# The system attributes each message comes with (QueueMessage's receive_count, enqueued_at).
_ATTRIBUTES = ["ApproximateReceiveCount", "SentTimestamp"]


def _number(attributes: Any, name: str) -> int | None:
    """An attribute SQS sends as decimal text, or None when it is absent or not a number."""
    text = attributes.get(name) if isinstance(attributes, dict) else None
    if not isinstance(text, str) or not text.isascii() or not text.isdigit() or len(text) > 19:
        return None
    return int(text)


def _message(message: dict[str, Any]) -> QueueMessage:
    attributes = message.get("Attributes")
    sent_ms = _number(attributes, "SentTimestamp")
    return QueueMessage(
        message["MessageId"],
        message["ReceiptHandle"],
        message.get("Body", ""),
        _number(attributes, "ApproximateReceiveCount"),
        None if sent_ms is None else datetime.fromtimestamp(sent_ms / 1000, timezone.utc),
    )


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
            MessageSystemAttributeNames=_ATTRIBUTES,
        )
        return [_message(m) for m in response.get("Messages", [])]

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


def _open(url: str, settings: Mapping[str, str]) -> NotificationQueue:
    return _SqsQueue(url, settings)


BACKEND = QueueBackend(
    kind="sqs",
    title="an SQS queue",
    serves="S3 (s3://, S3 event notifications in SQS)",
    protocols=("s3", "s3a"),
    settings=(
        "region_name",
        "endpoint_url",
        "aws_access_key_id",
        "aws_secret_access_key",
        "aws_session_token",
        "profile_name",
    ),
    client_module="boto3",
    extra="s3",
    scope="bucket",
    empty_may_miss=True,
    opener=_open,
)
