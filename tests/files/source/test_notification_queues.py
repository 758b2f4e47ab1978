"""The queue clients of discovery=notifications against a real Azure Storage queue (Azurite,
reached over http as emulators are): every ``queue.*`` credential, and the requests
``unreadableMessages=leave`` makes."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from pysparksources.files.source.notifications.queues import azure_queue_account, open_queue
from support.azurite import azurite_queue  # noqa: F401  (a fixture)


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
    queue.hide(message, 60)  # unreadableMessages=leave's request
    assert queue.receive(30, 0) == []
    assert list(admin.peek_messages()) == []  # still hidden
    admin.clear_messages()
    queue.close()
    admin.close()
