"""examples/pipelines runs under ``spark-pipelines run`` against the emulator, exactly once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from support.eventhubs import send
from support.paths import EXAMPLES

# ~2-3 min: spark-pipelines starts its own Spark Connect server (on the default port 15002)
# and runs two streaming flows.
pytestmark = [
    pytest.mark.spark,
    pytest.mark.emulator,
    pytest.mark.slow,
    pytest.mark.connect_default_port,
]

EXAMPLE = EXAMPLES / "pipelines"
START = datetime(2026, 1, 1, tzinfo=timezone.utc)
ORDERS = 60  # seven minutes of orders, one every 7 s


def _order(number: int, at: datetime) -> str:
    body = {"order": number, "customer": f"c{number % 3}", "amount": number / 2, "at": at}
    return json.dumps({**body, "at": at.isoformat()})


def test_pipeline_example_reads_every_event_once(
    spark: Any, eventhubs_emulator_factory: Any, tmp_path: Path
) -> None:
    pytest.importorskip("yaml", reason="spark-pipelines needs pyyaml (the dev extra has it)")
    emulator = eventhubs_emulator_factory(hubs={"orders": 2})
    conn = emulator.connection_string("orders")
    times = {n: START + timedelta(seconds=7 * n) for n in range(ORDERS)}
    for pid in ("0", "1"):
        send(
            conn, [_order(n, at) for n, at in times.items() if n % 2 == int(pid)], partition_id=pid
        )
    # A day later: moves the watermark past every minute above, so append mode writes them.
    send(conn, [_order(-1, START + timedelta(days=1))], partition_id="0")

    project = tmp_path / "pipeline"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("output", "pipeline-storage"))
    spec = project / "spark-pipeline.yml"
    storage = (tmp_path / "storage").as_uri()
    spec.write_text(spec.read_text().replace("file:///tmp/pyeventhub-orders-pipeline", storage))
    out = tmp_path / "revenue"
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        "EVENTHUB_CONNECTION_STRING": conn,
        "ORDERS_OUTPUT": str(out),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    env.pop("SPARK_CONNECT_MODE_ENABLED", None)  # set by an in-process Connect session
    env.pop("SPARK_REMOTE", None)
    result = subprocess.run(
        [str(bin_dir / "spark-pipelines"), "run"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert "CONNECTION" not in result.stdout and "SharedAccessKey=" not in result.stdout

    rows = spark.read.parquet(str(out)).collect()
    expected: dict[datetime, list[int]] = defaultdict(list)
    for number, at in times.items():
        expected[at.replace(second=0)].append(number)
    got = {row.minute.astimezone(timezone.utc): row for row in rows}
    assert sorted(got) == sorted(expected)  # the flush event's minute is still open
    ids = [number for row in rows for number in row.order_ids]
    assert sorted(ids) == list(range(ORDERS))  # every order once, none twice
    for minute, numbers in expected.items():
        assert got[minute].orders == len(numbers)
        assert got[minute].revenue == pytest.approx(sum(n / 2 for n in numbers))
