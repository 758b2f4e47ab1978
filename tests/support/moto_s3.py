"""A session-scoped S3-compatible server for tests of S3 through s3fs: moto in server mode.

Import the fixture into a test module or conftest (``from support.moto_s3 import moto_s3``).
``python -m moto.server`` runs in a process of its own (its own GIL: requests racing at the
service really race), listens on 127.0.0.1 only, keeps its buckets in memory and is
terminated at the end of the session. Without it (``moto[s3]``, ``flask`` and ``flask-cors`` in
requirements-dev.txt, what its server mode needs for S3) the tests are skipped, unless
CI=true, where a missing server is a failure rather than silently lost coverage.

moto checks no signature: any key and secret are accepted, so a test cannot make a request
fail with a wrong key here (it can with a missing bucket).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from support.local_servers import free_port, stop, wait_for_port

__all__ = ["MotoS3", "moto_s3"]

# Made-up credentials: moto accepts any. They look like AWS's shapes so a test can check that
# neither appears in anything a query writes or raises.
ACCESS_KEY = "AKIAPYSPARKSOURCES01"
SECRET_KEY = "pysparksources/moto/secret+0123456789ABCDEFGHIJ"


@dataclass(frozen=True)
class MotoS3:
    """Where moto's S3 listens and the s3fs storage options that reach it."""

    host: str
    port: int
    key: str = ACCESS_KEY
    secret: str = SECRET_KEY

    @property
    def endpoint_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def storage_options(self) -> dict[str, str]:
        """As a user passes them to pyfile: ``fs.key``, ``fs.secret``, ``fs.endpoint_url``."""
        return {"key": self.key, "secret": self.secret, "endpoint_url": self.endpoint_url}

    def __repr__(self) -> str:
        return f"MotoS3({self.endpoint_url!r})"  # never the credentials


@pytest.fixture(scope="session")
def moto_s3() -> Iterator[MotoS3]:
    if importlib.util.find_spec("moto") is None or importlib.util.find_spec("flask") is None:
        reason = "moto's S3 server needs moto[s3], flask and flask-cors (requirements-dev.txt)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    port = free_port()
    # No AWS settings of the machine's user reach the server (it needs none).
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    try:
        wait_for_port(port, process, 60, "moto_server")
        yield MotoS3("127.0.0.1", port)
    finally:
        stop(process)
