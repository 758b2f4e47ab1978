"""The command line: ``pysparksources eventhubs-emulator`` serves until interrupted."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.eventhubs import bodies, receive, send

pytestmark = pytest.mark.emulator


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
        sys.executable, "-m", "pysparksources.cli", "eventhubs-emulator", "--port", "0",
        "--config", str(path), "--hub", "extra:1", "--data-dir", str(tmp_path / "data"),
    ]  # fmt: skip
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        conns = {}
        while len(conns) < 2:
            line = proc.stdout.readline()
            assert line, "the emulator exited early"
            if line.strip().startswith("Endpoint="):
                conn = line.strip()
                conns[conn.split("EntityPath=")[1].split(";")[0]] = conn
        send(conns["fromfile"], ["via-cli"], partition_id="1")
        assert bodies(receive(conns["fromfile"], "1", "-1", 1)) == ["via-cli"]
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
    assert list((tmp_path / "data" / "fromfile" / "1").glob("*.seg"))
