"""What does not exist, through the real SDK: a consumer group the hub does not have and a hub
the namespace does not have are refused with ``amqp:not-found`` the way Event Hubs refuses
them (on the link's attach, and a management request answers 404), with the service's wording;
and the consumer groups the command line (``--consumer-group``, ``--hub NAME:N:GROUPS``) and a
Config.json add.

The SDK (azure-eventhub 5.15) re-attaches a refused receiver forever when it may retry, and
never reports it: these clients get ``retry_total=0`` so the first refusal reaches the test.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from azure.eventhub import EventData, EventHubConsumerClient
from azure.eventhub.exceptions import ConnectError, ConnectionLostError, EventHubError

from pysparksources_emulator import EmulatorConfig, EventHubsEmulator
from pysparksources_emulator._serve import build_parser, config_from_args
from pysparksources_emulator.testing import bodies, producer, receive, send

pytestmark = pytest.mark.emulator

SERVICE_TAIL = "could not be found. To know more visit https://aka.ms/sbResourceMgrExceptions."


class _NoManagementClient(EventHubConsumerClient):  # type: ignore[misc]
    """A consumer that knows its partitions: it attaches without a management request first
    (as pysparksources' receivers do), so an unknown hub meets the receiver's attach."""

    def get_partition_ids(self) -> list[str]:
        return ["0"]


def _refusal(conn: str, group: str, client_class: type = EventHubConsumerClient) -> BaseException:
    """The error a receiver of ``group`` on partition 0 reports through ``on_error``."""
    client = client_class.from_connection_string(conn, consumer_group=group, retry_total=0)
    errors: list[BaseException] = []
    reported = threading.Event()

    def on_error(_context: Any, error: BaseException) -> None:
        errors.append(error)
        reported.set()

    receiving = threading.Thread(
        target=client.receive,
        kwargs={
            "on_event": lambda *_: None,
            "on_error": on_error,
            "partition_id": "0",
            "starting_position": "-1",
            "max_wait_time": 0.5,
        },
        daemon=True,
    )
    receiving.start()
    try:
        reported.wait(20)
    finally:
        client.close()
        receiving.join(10)
    assert errors, f"the receiver of {group!r} was not refused"
    return errors[0]


def test_an_unknown_consumer_group_is_refused_on_attach_as_the_service_does(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    error = _refusal(conn, "spark")
    # amqp:not-found on a link: the SDK's ConnectionLostError, condition "not-found".
    assert isinstance(error, ConnectionLostError) and error.error == "not-found"
    text = str(error)
    assert f"The messaging entity 'emulatorns1:eventhub:test~32766|spark' {SERVICE_TAIL}" in text
    assert "TrackingId:" in text and "SystemTracker:emulatorns1:eventhub:test~32766|spark" in text


def test_an_unknown_hub_is_refused_on_attach_and_by_management_requests(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    conn = eventhubs_emulator.connection_string("nohub")
    entity = f"The messaging entity 'sb://127.0.0.1/nohub' {SERVICE_TAIL}"
    with producer(conn, retry_total=0) as client:
        for request in (
            client.get_eventhub_properties,
            client.get_partition_ids,
            lambda: client.get_partition_properties("0"),
        ):
            with pytest.raises(ConnectError) as answered:  # 404: the SDK's ConnectError
                request()
            assert answered.value.error == "not-found" and entity in str(answered.value)
        with pytest.raises(EventHubError) as sent:  # the sender's attach is refused
            client.send_batch([EventData("x")])
        assert sent.value.error == "not-found" and entity in str(sent.value)
    refused = _refusal(conn, "$Default", _NoManagementClient)
    assert isinstance(refused, ConnectionLostError) and refused.error == "not-found"
    path = "sb://127.0.0.1/nohub/consumergroups/$Default/partitions/0"
    assert f"The messaging entity '{path}' {SERVICE_TAIL}" in str(refused)


def _args(*argv: str) -> EmulatorConfig:
    return config_from_args(build_parser().parse_args(list(argv)))


def test_the_command_line_adds_consumer_groups(tmp_path: Path) -> None:
    entity = {"Name": "fromfile", "PartitionCount": "1", "ConsumerGroups": [{"Name": "cg1"}]}
    namespace = {"Type": "EventHub", "Name": "myNs", "Entities": [entity]}
    path = tmp_path / "Config.json"
    path.write_text(json.dumps({"UserConfig": {"NamespaceConfig": [namespace]}}))
    config = _args(
        "--config", str(path), "--hub", "orders:4:analytics,audit", "--hub", "plain:1",
        "--consumer-group", "spark", "--consumer-group", "SPARK",
    )  # fmt: skip
    groups = {hub.name: hub.consumer_groups for hub in config.hubs}
    assert groups == {
        "fromfile": ["$Default", "cg1", "spark"],
        "orders": ["$Default", "analytics", "audit", "spark"],
        "plain": ["$Default", "spark"],
    }
    assert config.namespace == "myNs"
    assert [h.partition_count for h in config.hubs] == [1, 4, 1]
    assert [h.consumer_groups for h in _args().hubs] == [["$Default"]]  # eh1:2 alone


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--hub", "orders:four"], "'orders:four': expected NAME:PARTITIONS[:GROUP,...]"),
        (["--hub", "orders:0"], "partition count must be 1..1024"),
        (["--consumer-group", "a/b"], "invalid consumer group name 'a/b'"),
        (["--hub", "orders:2:a/b"], "invalid consumer group name 'a/b'"),
    ],
)
def test_bad_hub_and_group_arguments_are_refused_by_name(
    argv: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(argv)
    assert named in capsys.readouterr().err


def test_groups_from_the_command_line_and_config_json_read(tmp_path: Path) -> None:
    path = tmp_path / "Config.json"
    entity = {"Name": "fromfile", "PartitionCount": "1", "ConsumerGroups": [{"Name": "cg1"}]}
    namespace = {"Type": "EventHub", "Name": "ns", "Entities": [entity]}
    path.write_text(json.dumps({"UserConfig": {"NamespaceConfig": [namespace]}}))
    config = _args("--config", str(path), "--hub", "orders:1:audit", "--consumer-group", "spark")
    with EventHubsEmulator(config) as emulator:
        for hub in ("fromfile", "orders"):
            send(emulator.connection_string(hub), [f"to {hub}"], partition_id="0")
        for hub, group in (("fromfile", "cg1"), ("fromfile", "SPARK"), ("orders", "audit")):
            got: list[Any] = receive(emulator.connection_string(hub), "0", "-1", 1, group=group)
            assert bodies(got) == [f"to {hub}"], group
        refused = _refusal(emulator.connection_string("orders"), "cg1")  # fromfile's only
        assert "The messaging entity 'ns:eventhub:orders~32766|cg1'" in str(refused)
