"""The command line: ``pysparksources-emulator`` (or ``python -m pysparksources_emulator``)
serves until interrupted."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

from pysparksources_emulator.testing import bodies, receive, send

pytestmark = pytest.mark.emulator

# The console script the distribution installs next to this interpreter.
COMMAND = str(Path(sysconfig.get_path("scripts")) / "pysparksources-emulator")


def test_cli_serves_config_hubs_until_interrupted(tmp_path: Path) -> None:
    config = {
        "UserConfig": {
            "NamespaceConfig": [
                {
                    "Type": "EventHub",
                    "Name": "emulatorNs1",
                    "Entities": [{"Name": "fromfile", "PartitionCount": "2", "ConsumerGroups": []}],
                }
            ]
        }
    }
    path = tmp_path / "Config.json"
    path.write_text(json.dumps(config))
    command = [
        COMMAND, "--port", "0", "--config", str(path), "--hub", "extra:1",
        "--data-dir", str(tmp_path / "data"), "--consumer-group", "spark",
    ]  # fmt: skip
    stderr = tmp_path / "stderr"
    with stderr.open("w") as err:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        assert proc.stdout is not None
        conns = {}
        printed = []
        while len(conns) < 2:
            line = proc.stdout.readline()
            assert line, "the emulator exited early"
            printed.append(line.strip())
            if line.strip().startswith("Endpoint="):
                conn = line.strip()
                conns[conn.split("EntityPath=")[1].split(";")[0]] = conn
        assert "hub fromfile: 2 partitions; groups $Default, spark" in printed
        send(conns["fromfile"], ["via-cli"], partition_id="1")
        assert bodies(receive(conns["fromfile"], "1", "-1", 1)) == ["via-cli"]
        assert bodies(receive(conns["fromfile"], "1", "-1", 1, group="spark")) == ["via-cli"]
        proc.send_signal(signal.SIGUSR1)  # the documented stack dump, which leaves it serving
        deadline = time.monotonic() + 10
        while "_serve.py" not in stderr.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "_serve.py" in stderr.read_text() and proc.poll() is None
    finally:
        proc.send_signal(signal.SIGINT)
        _wait_or_show_stacks(proc, stderr)
    assert list((tmp_path / "data" / "fromfile" / "1").glob("*.seg"))


def test_a_busy_port_ends_in_one_line_naming_the_port_and_the_fix() -> None:
    """A second emulator on a port in use (here a listening socket) exits at once with one
    line: the address, and --port, not the bind's traceback."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        result = subprocess.run(
            [COMMAND, "--port", str(port)], capture_output=True, text=True, timeout=60
        )
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert f"127.0.0.1:{port} is already in use" in lines[0]
    assert "--port" in lines[0] and "Traceback" not in result.stderr
    assert result.stdout == ""


def _wait_or_show_stacks(proc: subprocess.Popen[str], stderr: Path) -> None:
    """Wait for a clean exit; if it hangs, fail with every thread's stack (the CLI's SIGUSR1)."""
    try:
        code = proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGUSR1)
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        pytest.fail(f"the emulator did not stop within 20 s of SIGINT:\n{stderr.read_text()}")
    assert code == 0, stderr.read_text()


@pytest.mark.slow
def test_acknowledged_events_survive_a_killed_emulator(tmp_path: Path) -> None:
    """SIGKILL right after the sends are acknowledged: a restart on the same port has them all.

    With the default ``fsync=interval`` the appended records used to sit in the process's
    write buffer until the next periodic sync, so a killed emulator lost up to a second of
    acknowledged events.
    """
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [
        sys.executable, "-m", "pysparksources_emulator", "--port", str(port),
        "--hub", "killed:1", "--data-dir", str(tmp_path),
    ]  # fmt: skip

    def start() -> tuple[subprocess.Popen[str], str]:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip().startswith("Endpoint="):
                return proc, line.strip()
        raise AssertionError("the emulator exited early")

    proc, conn = start()
    try:
        for i in range(3):
            send(conn, [f"k{i}-{j}" for j in range(10)], partition_id="0")
    finally:
        proc.kill()
        proc.wait(timeout=20)
    proc, conn = start()
    try:
        got = bodies(receive(conn, "0", "-1", 30))
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=20)
    assert got == [f"k{i}-{j}" for i in range(3) for j in range(10)]
