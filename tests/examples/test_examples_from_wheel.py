"""The examples as a user runs them, from the built wheels.

Each script of examples/ runs with the fresh, never activated virtual environment's Python
(tests/support/fresh_install.py: the wheels of both distributions with ``[spark,eventhubs]``,
then ``[demo,pipelines]``), PYSPARK_PYTHON exported as the README's install step 2 says, from a
user's folder outside the checkout holding a copy of examples/; the Event Hubs examples talk to
the emulator that environment's ``pysparksources-emulator`` command serves. examples/pipelines
runs under that environment's ``spark-pipelines``: once without the catalog setting it needs
(refused before anything is written), then twice in the same folder, events sent before each
run, and every event of both runs is counted once.

About three minutes on 2 cores besides the build the wheel tests share: each script starts its
own Spark, and each pipeline run its own Spark Connect server.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import time
from collections import defaultdict
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from support.eventhubs import received, send
from support.fresh_install import FreshInstall
from support.paths import EXAMPLES

pytestmark = [pytest.mark.slow, pytest.mark.spark]

# The CSV example's two sample files, as Spark's show() prints them.
SAMPLES = [(1, "ana", 9.5), (2, "bo", 12.0), (3, "ana", 4.25)]

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
CATALOG_FLAG = ("--conf", "spark.sql.catalogImplementation=hive")
HUBS = ("--hub", "roundtrip:2", "--hub", "orders:2")


@pytest.fixture(scope="module")
def user_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's folder outside the checkout, with examples/ as the repository has it."""
    folder = tmp_path_factory.mktemp("user")
    shutil.copytree(
        EXAMPLES,
        folder / "examples",
        ignore=shutil.ignore_patterns(
            "__pycache__", "output", "metastore_db", "spark-warehouse", "derby.log"
        ),
    )
    return folder


@pytest.fixture(scope="module")
def hubs(fresh: FreshInstall, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The fresh environment's emulator on a free port: hub -> the connection string it prints."""
    log = tmp_path_factory.mktemp("emulator") / "output"  # a file: no pipe to fill up
    with log.open("w") as out:
        emulator = subprocess.Popen(
            [fresh.command("pysparksources-emulator"), "--port", "0", *HUBS],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=fresh.workdir,
            env=fresh.env | {"PYTHONUNBUFFERED": "1"},
        )
    try:
        conns: dict[str, str] = {}
        deadline = time.monotonic() + 60
        while len(conns) < 2 and emulator.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
            for line in log.read_text().splitlines():
                if line.strip().startswith("Endpoint="):
                    conn = line.strip()
                    conns[conn.split(";EntityPath=")[1].split(";")[0]] = conn
        assert sorted(conns) == ["orders", "roundtrip"], log.read_text()
        yield conns
    finally:
        emulator.send_signal(signal.SIGINT)
        emulator.wait(timeout=30)
    assert emulator.returncode == 0, log.read_text()[-3000:]


def _example(fresh: FreshInstall, folder: Path, script: str, **env: str) -> str:
    """``<venv>/bin/python examples/<script>`` from ``folder``; its stdout."""
    result = fresh.run(
        fresh.python, f"examples/{script}", cwd=folder, PYSPARK_PYTHON=fresh.python, **env
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "PYSPARK_PYTHON is unset" not in result.stderr
    return result.stdout


def _table_rows(text: str) -> list[list[str]]:
    """The cells of every row of the tables Spark's show() printed (header rows included)."""
    return [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("|") and line.endswith("|")
    ]


def test_pyrate_to_console_prints_batches_of_rows(fresh: FreshInstall, user_folder: Path) -> None:
    out = _example(fresh, user_folder, "pyrate_to_console.py")
    sections = re.split(r"^-+\nBatch: (\d+)\n-+$", out, flags=re.M)[1:]
    pairs = zip(sections[::2], sections[1::2], strict=True)
    batches = {int(n): _table_rows(table) for n, table in pairs}
    assert batches, out[-3000:]
    assert sorted(batches) == list(range(len(batches)))  # batch ids 0, 1, 2, ... in order
    values = []
    for rows in batches.values():
        assert rows[0] == ["timestamp", "value"], rows
        values += [int(value) for _, value in rows[1:]]
    assert values, out[-3000:]  # ~5 rows a second, batches 1-4 two seconds apart
    assert len(set(values)) == len(values), values  # no row in two batches
    if "only showing top" not in out:  # (a batch of more than 20 rows shows 20 of them)
        assert sorted(values) == list(range(len(values))), values  # none missing


def test_csv_folder_to_parquet_reads_each_file_once(fresh: FreshInstall, user_folder: Path) -> None:
    def shown(out: str) -> list[tuple[int, str, float]]:
        rows = _table_rows(out)
        assert rows[0] == ["id", "customer", "amount"], out[-3000:]
        return [(int(i), c, float(a)) for i, c, a in rows[1:]]

    assert shown(_example(fresh, user_folder, "csv_folder_to_parquet.py")) == SAMPLES
    folder = user_folder / "pyfile-example"  # the script's default folder, under the cwd
    (folder / "inbox" / "orders-3.csv").write_text("id,customer,amount\n4,cy,7.75\n")
    expected = [*SAMPLES, (4, "cy", 7.75)]
    # Spark's reader (the script's show()) sees the new row once and the old ones once...
    assert shown(_example(fresh, user_folder, "csv_folder_to_parquet.py")) == expected
    # ...and so does pyarrow, from every data file in the output folder: none written twice.
    table = pq.read_table(folder / "parquet").to_pydict()
    assert sorted(zip(table["id"], table["customer"], table["amount"], strict=True)) == expected


@pytest.mark.emulator
def test_eventhubs_roundtrip_writes_and_reads_100_events(
    fresh: FreshInstall, user_folder: Path, hubs: dict[str, str]
) -> None:
    conn = hubs["roundtrip"]
    out = _example(fresh, user_folder, "eventhubs_roundtrip.py", EVENTHUBS_CONNECTION_STRING=conn)
    assert "events in the hub: 100" in out.splitlines(), out[-3000:]
    rows = _table_rows(out)
    assert rows[0] == ["partition", "count"], out[-3000:]
    assert sum(int(count) for _, count in rows[1:]) == 100
    assert "SharedAccessKey=" not in out
    # What the SDK reads from the hub: the 100 values pyrate generated, each once.
    events = received(conn, 100)
    assert sorted(int(event.body_as_str()) for _, event in events) == list(range(100))


def _order(number: int, at: datetime) -> str:
    body = {"order": number, "customer": f"c{number % 3}", "amount": number / 2}
    return json.dumps({**body, "at": at.isoformat()})


def _send_orders(conn: str, orders: dict[int, datetime], flush: tuple[int, datetime]) -> None:
    """``orders`` over both partitions, then ``flush``: an order a day later, which moves the
    watermark past every minute before it, so append mode writes those minutes."""
    for pid in ("0", "1"):
        mine = [_order(n, at) for n, at in orders.items() if n % 2 == int(pid)]
        send(conn, mine, partition_id=pid)
    send(conn, [_order(*flush)], partition_id="0")


def _check_output(spark: Any, output: Path, orders: dict[int, datetime]) -> None:
    """Spark's reader finds one row per minute of ``orders`` and each order in one of them, once."""
    rows = spark.read.parquet(str(output)).collect()
    expected: dict[datetime, list[int]] = defaultdict(list)
    for number, at in orders.items():
        expected[at.replace(second=0)].append(number)
    got = {row.minute.astimezone(timezone.utc): row for row in rows}
    assert sorted(got) == sorted(expected)
    assert sorted(n for row in rows for n in row.order_ids) == sorted(orders)  # none twice
    for minute, numbers in expected.items():
        assert got[minute].orders == len(numbers)
        assert got[minute].revenue == pytest.approx(sum(n / 2 for n in numbers))


@pytest.mark.emulator
@pytest.mark.connect_default_port
def test_pipelines_example_reruns_and_counts_every_event_once(
    fresh: FreshInstall, user_folder: Path, hubs: dict[str, str], spark: Any
) -> None:
    conn = hubs["orders"]
    project = user_folder / "examples" / "pipelines"
    # The spec's storage is a fixed folder of /tmp; the test's own instead (an absolute URI).
    spec = project / "spark-pipeline.yml"
    storage = user_folder / "pipeline-storage"
    default_storage = "file:///tmp/pyeventhub-orders-pipeline"
    spec.write_text(spec.read_text().replace(default_storage, storage.as_uri()))
    output = project / "output" / "revenue_per_minute"  # the pipeline's default

    def pipeline(*args: str) -> subprocess.CompletedProcess[str]:
        return fresh.run(
            fresh.command("spark-pipelines"),
            *args,
            cwd=project,
            timeout=420,
            PYSPARK_PYTHON=fresh.python,
            EVENTHUB_CONNECTION_STRING=conn,
        )

    def run() -> None:
        result = pipeline(*CATALOG_FLAG, "run")
        assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
        assert "Run is COMPLETED" in result.stdout, result.stdout[-4000:]
        assert "SharedAccessKey=" not in result.stdout + result.stderr

    # Without the catalog setting the pipeline stops before it writes anything: a first run on
    # the in-memory catalog would leave spark-warehouse/orders behind, which every later run,
    # with the setting or without, would refuse with LOCATION_ALREADY_EXISTS.
    refused = pipeline("run")
    assert refused.returncode != 0
    assert (
        "run: spark-pipelines run --conf spark.sql.catalogImplementation=hive"
        in refused.stdout + refused.stderr
    ), refused.stdout[-4000:] + refused.stderr[-4000:]
    assert not (project / "spark-warehouse" / "orders").exists()
    assert not output.exists() and not (storage / "_checkpoints").exists()

    # First run: seven minutes of orders, one every 7 s; the flush (1000) stays open.
    first = {n: START + timedelta(seconds=7 * n) for n in range(60)}
    _send_orders(conn, first, (1000, START + timedelta(days=1)))
    run()
    assert (project / "metastore_db").is_dir()  # the catalog, kept for the next run
    _check_output(spark, output, first)

    # Second run in the same folder: it continues from the first run's catalog, tables,
    # checkpoints and aggregate state. Its orders start in the first flush's minute, which
    # now closes with both runs' orders in it; the new flush (1001) stays open.
    second = {n: START + timedelta(days=1, seconds=7 * (n - 60)) for n in range(60, 100)}
    _send_orders(conn, second, (1001, START + timedelta(days=2)))
    run()
    _check_output(spark, output, {**first, 1000: START + timedelta(days=1), **second})
