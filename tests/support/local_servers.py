"""What the session-scoped storage servers of the tests share: a free port on 127.0.0.1,
waiting for the server to listen on it, and stopping it (azurite.py, moto_s3.py, fake_gcs.py).
"""

from __future__ import annotations

import socket
import subprocess
import time
from typing import Any

__all__ = ["free_port", "stop", "wait_for_port"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[Any], timeout_s: float, name: str) -> None:
    """Return once ``process`` accepts connections on 127.0.0.1:``port``; raise if it exits."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with code {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{name} did not listen on 127.0.0.1:{port} in {timeout_s:g}s")


def stop(process: subprocess.Popen[Any]) -> None:
    """Terminate ``process``, killing it when it does not exit within 10 s."""
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)
