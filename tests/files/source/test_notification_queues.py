"""The queue backends of discovery=notifications: found by kind and by the path's protocol
(an unknown kind refused when the query starts), and each against a real queue (Azurite's,
reached over http as emulators are; moto's SQS): every ``queue.*`` credential, the requests
``unreadableMessages=leave`` makes, and the attributes each message comes with."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from pyspark.sql.types import LongType, StructField, StructType

from pysparksources._core.option_table import Use
from pysparksources.errors import ArgumentError
from pysparksources.files.options import parse_options
from pysparksources.files.source.notifications.discovery import NotificationDiscovery
from pysparksources.files.source.notifications.queues import (
    BACKENDS,
    backend_for,
    backend_named,
    open_queue,
)
from pysparksources.files.source.notifications.queues.azure import azure_queue_account
from support.azurite import azurite_queue  # noqa: F401  (a fixture)


def test_each_backend_is_found_by_its_kind_and_its_paths_protocols() -> None:
    assert [b.kind for b in BACKENDS] == ["azure", "sqs"]
    for protocol, kind in [("abfs", "azure"), ("abfss", "azure"), ("az", "azure")]:
        assert backend_for(protocol) is backend_named(kind)
    for protocol in ("s3", "s3a"):
        assert backend_for(protocol) is backend_named("sqs")
    # No queue carries the events of these paths: the parser refuses discovery=notifications.
    assert backend_for("gs") is None and backend_for("file") is None


def test_an_unknown_kind_of_queue_fails_when_the_query_starts() -> None:
    """Once, any kind but azure went to SQS; now a kind no backend has is refused by name,
    when discovery is built (the reader's first engine call), before any queue is opened."""
    with pytest.raises(ArgumentError, match="no notification queue of kind 'gs': the kinds are"):
        open_queue("gs", "https://queue.example/q", {})
    config = parse_options(
        {
            "path": "s3://bucket/in",
            "format": "json",
            "sourceLogLocation": "memory://unknown-kind/log",
            "discovery": "notifications",
            "queueUrl": "https://sqs.us-east-1.amazonaws.com/000000000000/q",
        },
        Use.STREAM_READ,
        StructType([StructField("id", LongType())]),
    )
    assert config.notifications is not None and config.notifications.kind == "sqs"
    unknown = replace(config, notifications=replace(config.notifications, kind="pubsub"))
    with pytest.raises(ArgumentError, match="'pubsub': the kinds are azure, sqs"):
        NotificationDiscovery(unknown, None, [], None)  # type: ignore[arg-type]


def test_the_account_of_a_queue_url() -> None:
    assert azure_queue_account("https://acct.queue.core.windows.net/q?sv=1&sig=x") == "acct"
    assert azure_queue_account("http://127.0.0.1:10001/devstoreaccount1/q") == "devstoreaccount1"


@pytest.mark.parametrize("credential", ["account_key", "sas_token"])
def test_queue_credentials_work_on_an_http_queue_url(
    azurite_queue: Any,  # noqa: F811
    credential: str,
) -> None:
    from azure.storage.queue import QueueClient, QueueSasPermissions, generate_queue_sas

    name = f"q{uuid.uuid4().hex[:12]}"
    admin = QueueClient.from_connection_string(azurite_queue.connection_string, name)
    admin.create_queue()
    admin.send_message("hello")
    url = azurite_queue.queue_url(name)
    assert url.startswith("http://")
    if credential == "account_key":
        settings = {"account_key": azurite_queue.account_key}
    else:
        expiry = datetime.now(timezone.utc) + timedelta(hours=1)
        permission = QueueSasPermissions(read=True, process=True, update=True)
        sas = generate_queue_sas(
            azurite_queue.account_name, name, azurite_queue.account_key, permission, expiry
        )
        settings = {"sas_token": sas}
    queue = open_queue("azure", url, settings)
    [message] = queue.receive(30, 0)
    assert message.body == "hello"
    assert message.receive_count == 1
    assert message.enqueued_at is not None and message.enqueued_at.tzinfo == timezone.utc
    assert abs(datetime.now(timezone.utc) - message.enqueued_at) < timedelta(minutes=5)
    queue.hide(message, 60)  # unreadableMessages=leave's request
    assert queue.receive(30, 0) == []
    assert list(admin.peek_messages()) == []  # still hidden
    admin.clear_messages()
    queue.close()
    admin.close()


def test_sqs_messages_carry_their_receive_count_and_enqueued_time(moto_s3: Any) -> None:
    import boto3

    settings = {
        "endpoint_url": moto_s3.endpoint_url,
        "region_name": "us-east-1",
        "aws_access_key_id": moto_s3.key,
        "aws_secret_access_key": moto_s3.secret,
    }
    admin = boto3.client("sqs", **settings)
    url = admin.create_queue(QueueName=f"q{uuid.uuid4().hex[:12]}")["QueueUrl"]
    admin.send_message(QueueUrl=url, MessageBody="hello")
    queue = open_queue("sqs", url, settings)
    [first] = queue.receive(30, 0)
    assert (first.body, first.receive_count) == ("hello", 1)
    assert first.enqueued_at is not None and first.enqueued_at.tzinfo == timezone.utc
    assert abs(datetime.now(timezone.utc) - first.enqueued_at) < timedelta(minutes=5)
    queue.hide(first, 0)  # visible again at once: its next delivery is the second
    [second] = queue.receive(30, 0)
    assert (second.id, second.receive_count, second.enqueued_at) == (
        first.id,
        2,
        first.enqueued_at,
    )
    assert queue.delete([second]) == 0
    queue.close()
    admin.close()
