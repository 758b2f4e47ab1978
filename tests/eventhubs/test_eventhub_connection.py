"""Connection options for pyeventhub: every way to authenticate, and errors that hide secrets."""

from __future__ import annotations

import pickle

import pytest

from pysparksources._core.option_table import Use
from pysparksources.errors import OptionError
from pysparksources.eventhubs._connection import EventHubConnection
from pysparksources.eventhubs._option_table import CONNECTION_OPTIONS, SECRET_OPTIONS
from pysparksources.eventhubs.options import parse_options

KEY = "c2VjcmV0LWtleS12YWx1ZQ=="
CONN = f"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey={KEY}"


def parse(**raw: str) -> EventHubConnection:
    return parse_options(raw, Use.STREAM_READ).connection


def test_connection_options_apply_everywhere_and_the_secrets_are_declared() -> None:
    assert all(option.uses == Use.ANY for option in CONNECTION_OPTIONS)
    assert {option.name for option in SECRET_OPTIONS} == {
        "connectionString",
        "sharedAccessKey",
        "sharedAccessSignature",
        "clientSecret",
        "checkpointStore.connectionString",  # the storage account's key
    }


def test_connection_string_with_entity_path() -> None:
    conn = parse(connectionString=CONN + ";EntityPath=orders")
    assert (conn.namespace, conn.event_hub, conn.auth) == (
        "ns.servicebus.windows.net",
        "orders",
        "connectionString",
    )
    assert conn.describe() == "sb://ns.servicebus.windows.net/orders"


def test_hub_name_option_and_emulator_port() -> None:
    text = "Endpoint=sb://127.0.0.1:5999;SharedAccessKeyName=a;SharedAccessKey=b;UseDevelopmentEmulator=true"
    conn = parse(connectionString=text, eventHubName="h")
    assert (conn.namespace, conn.event_hub) == ("127.0.0.1:5999", "h")


def test_secrets_never_in_repr_pickle_key_or_errors() -> None:
    conn = parse(connectionString=CONN, eventHubName="orders")
    assert KEY not in repr(conn)
    assert KEY not in conn.pool_key()
    assert pickle.loads(pickle.dumps(conn)) == conn
    with pytest.raises(OptionError) as err:
        parse(connectionString="Endpoint=nothing;SharedAccessKey=" + KEY, eventHubName="h")
    assert KEY not in str(err.value) and "connectionString" in str(err.value)


def test_hub_required_and_must_agree() -> None:
    with pytest.raises(OptionError, match=r"eventHubName.*EntityPath"):
        parse(connectionString=CONN)
    with pytest.raises(OptionError, match="they must agree"):
        parse(connectionString=CONN + ";EntityPath=a", eventHubName="b")


@pytest.mark.parametrize(
    ("raw", "auth"),
    [
        ({"sharedAccessKeyName": "root", "sharedAccessKey": KEY}, "sasKey"),
        ({"sharedAccessSignature": "SharedAccessSignature sr=x&sig=y&se=1&skn=root"}, "sasToken"),
        ({"tenantId": "t", "clientId": "c", "clientSecret": "s"}, "servicePrincipal"),
        ({"auth": "managedIdentity", "clientId": "c"}, "managedIdentity"),
        ({}, "defaultAzureCredential"),
    ],
)
def test_namespace_with_each_credential(raw: dict[str, str], auth: str) -> None:
    conn = parse(fullyQualifiedNamespace="sb://ns.servicebus.windows.net/", eventHubName="h", **raw)
    assert (conn.namespace, conn.auth) == ("ns.servicebus.windows.net", auth)
    assert KEY not in repr(conn)


def test_incomplete_credentials_name_the_missing_option() -> None:
    with pytest.raises(OptionError, match=r"'sharedAccessKey'.*auth=sasKey"):
        parse(
            fullyQualifiedNamespace="ns.servicebus.windows.net",
            eventHubName="h",
            sharedAccessKeyName="root",
        )
    with pytest.raises(OptionError, match="'clientId'"):
        parse(
            fullyQualifiedNamespace="ns.servicebus.windows.net",
            eventHubName="h",
            tenantId="t",
            clientSecret="s",
        )
    with pytest.raises(OptionError, match="eventHubName"):
        parse(fullyQualifiedNamespace="ns.servicebus.windows.net")
    with pytest.raises(OptionError, match="connectionString"):
        parse(eventHubName="h")
    with pytest.raises(OptionError, match="not both"):
        parse(connectionString=CONN, fullyQualifiedNamespace="ns.servicebus.windows.net")
    with pytest.raises(OptionError, match="transportType"):
        parse(connectionString=CONN, eventHubName="h", transportType="http")


def test_pool_key_tells_apart_everything_a_client_is_built_from() -> None:
    # Executors pool receivers and producers by this key: a client over AMQP must not serve a
    # query that asked for WebSockets, nor one tenant's client another tenant.
    base = {"connectionString": CONN + ";EntityPath=orders"}
    plain = parse(**base).pool_key()
    assert parse(**base, transportType="amqpWebSockets").pool_key() != plain
    assert parse(**base).pool_key() == plain
    principal = {
        "fullyQualifiedNamespace": "ns.servicebus.windows.net",
        "eventHubName": "orders",
        "clientId": "app",
        "clientSecret": KEY,
    }
    assert (
        parse(**principal, tenantId="a").pool_key() != parse(**principal, tenantId="b").pool_key()
    )
