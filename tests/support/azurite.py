"""Session-scoped Azurite emulators: blob (``azurite``, for Azure Blob through adlfs) and
queue (``azurite_queue``, for pyfile's Event Grid notifications in a Storage queue).

Import the fixtures into a test module or conftest (``from azurite import azurite``). Each
server listens on 127.0.0.1 only, keeps its data in a temporary folder and is terminated at
the end of the session. Without the npm binary the tests are skipped, unless CI=true, where
a missing emulator is a failure rather than silently lost coverage.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.local_servers import free_port, stop, wait_for_port
from support.paths import ROOT

__all__ = [
    "ACCOUNT_KEY",
    "ACCOUNT_NAME",
    "Azurite",
    "AzuriteQueue",
    "azurite",
    "azurite_queue",
    "find_binary",
    "running_azurite",
]

# Azurite's documented development account (public, not a secret).
ACCOUNT_NAME = "devstoreaccount1"
ACCOUNT_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
_TOOLS = ROOT / ".tools" / "node_modules" / ".bin"


@dataclass(frozen=True)
class Azurite:
    """Where the emulator listens and how to authenticate against it."""

    host: str
    port: int
    account_name: str = ACCOUNT_NAME
    account_key: str = ACCOUNT_KEY
    scheme: str = "http"

    @property
    def blob_endpoint(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}/{self.account_name}"

    @property
    def connection_string(self) -> str:
        return (
            f"DefaultEndpointsProtocol={self.scheme};AccountName={self.account_name};"
            f"AccountKey={self.account_key};BlobEndpoint={self.blob_endpoint};"
        )

    def __repr__(self) -> str:
        # The key is public for Azurite, but keep the habit: never print credentials.
        return f"Azurite({self.blob_endpoint!r})"


def find_binary(service: str = "blob") -> str | None:
    """``azurite-<service>`` from the project's .tools folder, else from PATH."""
    local = _TOOLS / f"azurite-{service}"
    if local.exists():
        return str(local)
    return shutil.which(f"azurite-{service}")


@contextlib.contextmanager
def _serving(service: str, location: Path, extra: list[str]) -> Iterator[int]:
    """``azurite-<service>`` (blob or queue) on 127.0.0.1, its data in ``location``, stopped on
    exit; yields its port. Without the binary the test is skipped, or fails where CI=true."""
    binary = find_binary(service)
    if binary is None:
        reason = f"azurite-{service} not found (npm install azurite into .tools/ or PATH)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    port = free_port()
    command = [
        binary,
        f"--{service}Host",
        "127.0.0.1",
        f"--{service}Port",
        str(port),
        "--location",
        str(location),
        "--skipApiVersionCheck",
        "--loose",
        "--silent",
        "--disableTelemetry",  # it would call out to the internet otherwise
        *extra,
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        wait_for_port(port, process, 30, f"azurite-{service}")
        yield port
    finally:
        stop(process)


@pytest.fixture(scope="session")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Azurite]:
    with running_azurite(tmp_path_factory.mktemp("azurite")) as server:
        yield server


@contextlib.contextmanager
def running_azurite(
    location: Path, https: tuple[Path, Path] | None = None, oauth: bool = False
) -> Iterator[Azurite]:
    """An Azurite blob server: over HTTPS with ``https`` (a certificate and key file), and
    accepting Entra ID bearer tokens with ``oauth`` (Azurite's basic check: issuer, audience,
    lifetime; HTTPS only)."""
    extra = [] if https is None else ["--cert", str(https[0]), "--key", str(https[1])]
    if oauth:
        extra += ["--oauth", "basic"]
    with _serving("blob", location, extra) as port:
        yield Azurite("127.0.0.1", port, scheme="https" if https is not None else "http")


@dataclass(frozen=True)
class AzuriteQueue:
    """Azurite's queue service: queue URLs and the connection string that reaches them."""

    host: str
    port: int
    account_name: str = ACCOUNT_NAME
    account_key: str = ACCOUNT_KEY

    @property
    def queue_endpoint(self) -> str:
        return f"http://{self.host}:{self.port}/{self.account_name}"

    @property
    def connection_string(self) -> str:
        return (
            f"DefaultEndpointsProtocol=http;AccountName={self.account_name};"
            f"AccountKey={self.account_key};QueueEndpoint={self.queue_endpoint};"
        )

    def queue_url(self, name: str) -> str:
        return f"{self.queue_endpoint}/{name}"

    def __repr__(self) -> str:
        return f"AzuriteQueue({self.queue_endpoint!r})"


@pytest.fixture(scope="session")
def azurite_queue(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AzuriteQueue]:
    """Azurite's queue service (``azurite-queue``, from the same npm package) on 127.0.0.1."""
    with _serving("queue", tmp_path_factory.mktemp("azurite-queue"), []) as port:
        yield AzuriteQueue("127.0.0.1", port)
