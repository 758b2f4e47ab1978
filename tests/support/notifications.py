"""Storage + event queue pairs for pyfile's discovery=notifications, each real servers on
127.0.0.1 reached through the official clients.

- Azure: blobs in Azurite (adlfs), events in an Azurite Storage queue (azure-storage-queue).
  Azurite raises no Event Grid events, so :meth:`AzureNotifications.upload` publishes what
  Event Grid writes into a Storage queue for the upload (``Microsoft.Storage.BlobCreated`` in
  the Event Grid schema, base64-encoded), with a growing sequencer; tests can publish
  duplicates, out of order, deletions, or nothing at all (a dropped notification).
- S3: objects and SQS in one moto server (boto3, s3fs): moto itself delivers the bucket's
  notifications to the queue (``QueueConfigurations``), as S3 does. A dropped notification is
  taken off the queue by the test; a duplicate is the same body sent again, as S3's
  at-least-once delivery may.

Both expose ``options`` (what a user gives pyfile: queueUrl and queue.*, plus fs.*),
``secrets`` (what must never appear in anything the query writes) and ``depth()``, the messages
still in the queue, hidden ones included.
"""

from __future__ import annotations

import base64
import io
import itertools
import json
import time
import uuid
from datetime import datetime, timezone
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from support.azurite import Azurite, AzuriteQueue
from support.moto_s3 import MotoS3

__all__ = ["AzureNotifications", "S3Notifications", "parquet_bytes"]

_SEQUENCE = itertools.count(1)


def parquet_bytes(ids: range) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(pa.table({"id": list(ids), "name": [f"n{i}" for i in ids]}), buffer)
    return buffer.getvalue()


def _iso(ms: int) -> str:
    moment = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond:06d}0Z"  # 7 digits


class AzureNotifications:
    """A container in Azurite's blob service and a queue in its queue service."""

    protocol = "abfs"

    def __init__(self, blob: Azurite, queue: AzuriteQueue, container: str) -> None:
        import fsspec
        from azure.storage.queue import QueueClient

        self.container = self.root = container
        self.fs: Any = fsspec.filesystem("abfs", connection_string=blob.connection_string)
        self.fs.invalidate_cache()
        if not self.fs.exists(container):
            self.fs.mkdir(container)
        name = f"q{uuid.uuid4().hex[:12]}"
        self.queue: Any = QueueClient.from_connection_string(queue.connection_string, name)
        self.queue.create_queue()
        self._account = blob.account_name
        self.options = {
            "fs.connection_string": blob.connection_string,
            "queueUrl": queue.queue_url(name),
            "queue.connection_string": queue.connection_string,
        }
        self.secrets = (blob.account_key, blob.account_key[:20])

    def url(self, path: str) -> str:
        return f"abfs://{path}"

    # -- events, as Event Grid writes them into a Storage queue ---------------------------
    def event(self, path: str, created: bool = True, size: int = 0, api: str = "") -> Any:
        container, _, blob = path.partition("/")
        now = int(time.time() * 1000)
        data: dict[str, Any] = {
            "api": api or ("PutBlob" if created else "DeleteBlob"),
            "clientRequestId": str(uuid.uuid4()),
            "requestId": str(uuid.uuid4()),
            "contentType": "application/octet-stream",
            "blobType": "BlockBlob",
            "url": f"https://{self._account}.blob.core.windows.net/{path}",
            "sequencer": f"{next(_SEQUENCE):032X}",
            "storageDiagnostics": {"batchId": str(uuid.uuid4())},
        }
        if created:
            data.update(eTag=f'"0x8D{uuid.uuid4().hex[:13].upper()}"', contentLength=size)
        return {
            "topic": f"/subscriptions/{uuid.uuid4()}/resourceGroups/rg/providers/"
            f"Microsoft.Storage/storageAccounts/{self._account}",
            "subject": f"/blobServices/default/containers/{container}/blobs/{blob}",
            "eventType": "Microsoft.Storage.BlobCreated"
            if created
            else "Microsoft.Storage.BlobDeleted",
            "eventTime": _iso(now),
            "id": str(uuid.uuid4()),
            "data": data,
            "dataVersion": "",
            "metadataVersion": "1",
        }

    def publish(self, *events: Any, as_array: bool = False) -> None:
        """One queue message per event (or one for all, as an array), base64-encoded."""
        bodies = [list(events)] if as_array else list(events)
        for body in bodies:
            text = base64.b64encode(json.dumps(body).encode()).decode()
            self.queue.send_message(text)

    # -- what a producer does -------------------------------------------------------------
    def upload(self, path: str, data: bytes, notify: bool = True) -> Any:
        self.fs.pipe_file(path, data)
        event = self.event(path, size=len(data))
        if notify:
            self.publish(event)
        return event

    def delete(self, path: str, notify: bool = True) -> Any:
        self.fs.rm(path)
        event = self.event(path, created=False)
        if notify:
            self.publish(event)
        return event

    def depth(self) -> int:
        return int(self.queue.get_queue_properties().approximate_message_count)

    def close(self) -> None:
        self.queue.close()


class S3Notifications:
    """A bucket and an SQS queue in one moto server, the bucket notifying the queue."""

    protocol = "s3"

    def __init__(self, server: MotoS3, bucket: str) -> None:
        import boto3
        import fsspec

        settings = {
            "endpoint_url": server.endpoint_url,
            "region_name": "us-east-1",
            "aws_access_key_id": server.key,
            "aws_secret_access_key": server.secret,
        }
        self.s3: Any = boto3.client("s3", **settings)
        self.sqs: Any = boto3.client("sqs", **settings)
        self.bucket = self.root = bucket
        self.s3.create_bucket(Bucket=bucket)
        self.queue_url = self.sqs.create_queue(QueueName=f"q{uuid.uuid4().hex[:12]}")["QueueUrl"]
        arn = self.sqs.get_queue_attributes(QueueUrl=self.queue_url, AttributeNames=["QueueArn"])
        self.s3.put_bucket_notification_configuration(
            Bucket=bucket,
            NotificationConfiguration={
                "QueueConfigurations": [
                    {
                        "QueueArn": arn["Attributes"]["QueueArn"],
                        "Events": ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"],
                    }
                ]
            },
        )
        self.fs: Any = fsspec.filesystem("s3", **server.storage_options)
        self.options = {
            **{f"fs.{k}": v for k, v in server.storage_options.items()},
            "queueUrl": self.queue_url,
            "queue.aws_access_key_id": server.key,
            "queue.aws_secret_access_key": server.secret,
            "queue.region_name": "us-east-1",
        }
        self.secrets = (server.key, server.secret, server.secret[:16])

    def url(self, path: str) -> str:
        return f"s3://{path}"

    def upload(self, path: str, data: bytes, notify: bool = True) -> None:
        self.fs.pipe_file(path, data)
        if not notify:
            self.drop(path)

    def delete(self, path: str, notify: bool = True) -> None:
        self.fs.rm(path)
        if not notify:
            self.drop(path)

    def drop(self, path: str) -> None:
        """Take the newest notification naming ``path`` off the queue (a lost notification)."""
        key = path.partition("/")[2]
        for _ in range(20):
            response = self.sqs.receive_message(
                QueueUrl=self.queue_url, MaxNumberOfMessages=10, VisibilityTimeout=0
            )
            for message in response.get("Messages", []):
                body = json.loads(message["Body"])
                keys = [r["s3"]["object"]["key"] for r in body.get("Records", []) if "s3" in r]
                from urllib.parse import unquote_plus

                if key in [unquote_plus(k) for k in keys]:
                    self.sqs.delete_message(
                        QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"]
                    )
                    return
        raise AssertionError(f"no notification for {path} to drop")

    def duplicate(self, path: str) -> None:
        """Send the notification of ``path`` once more (S3 delivers at least once)."""
        key = path.partition("/")[2]
        for _ in range(20):
            response = self.sqs.receive_message(
                QueueUrl=self.queue_url, MaxNumberOfMessages=10, VisibilityTimeout=0
            )
            for message in response.get("Messages", []):
                if key.replace("/", "%2F") in message["Body"] or key in message["Body"]:
                    self.sqs.send_message(QueueUrl=self.queue_url, MessageBody=message["Body"])
                    return
        raise AssertionError(f"no notification for {path} to duplicate")

    def depth(self) -> int:
        names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        attributes = self.sqs.get_queue_attributes(QueueUrl=self.queue_url, AttributeNames=names)
        return sum(int(attributes["Attributes"][n]) for n in names)

    def close(self) -> None:
        self.sqs.close()
        self.s3.close()
