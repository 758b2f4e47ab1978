"""Real queries with planted credentials: they reach storage and Event Hubs, and nowhere else.

Each query runs batches with planted fs.* credentials or a planted SharedAccessKey, with the
driver's log at INFO. The secret must not appear in: the driver's and the Python workers'
output (on classic both write to this process's stderr, captured by fd; on Connect, the
server's log file), the checkpoint folder, pyfile's source log, the sink's files and
manifest, ``lastProgress``/``recentProgress``, ``explain()``, the query's name and status.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pysparksources_emulator import EventHubsEmulator
from support.eventhubs import received, send
from support.ftp_server import serving_ftp

pytestmark = [pytest.mark.spark, pytest.mark.emulator]

FS_SECRETS = {
    "fs.account_key": "PlantedAccountKey0x11",
    "fs.sas_token": "PlantedSasToken0x22",
    "fs.connection_string": "PlantedConnString0x33",
    "fs.client_secret": "PlantedClientSecret0x44",
}
EH_KEY = "PlantedHubKey0x55+/="
FTP_PASSWORD = "PlantedFtpPassword0x66"


def _is_connect(session: Any) -> bool:
    return "connect" in type(session).__module__


def _files_text(*folders: Path) -> bytes:
    data = b""
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                data += path.name.encode() + b"\n" + path.read_bytes() + b"\n"
    assert data, f"nothing written under {folders}"
    return data


def _query_text(query: Any) -> str:
    """Progress, name and status; explain() prints to stdout (read with the logs)."""
    query.explain(extended=True)
    progress = [json.loads(p.json) for p in query.recentProgress]
    assert progress, "the query ran no batch"
    return "\n".join(
        [
            json.dumps(progress),
            json.dumps(json.loads(query.lastProgress.json)),
            str(query.name),
            json.dumps(query.status),
        ]
    )


class _Logs:
    """The driver's log at INFO for the duration of a query, and where to read it.

    Connect: the server's log file, which also holds its Python workers' stderr. Classic: the
    JVM (driver and, in local mode, executors) logs to a file appender added for the test:
    its stderr is not this test's (the JVM inherited pytest's capture when it started).
    """

    def __init__(self, session: Any, request: pytest.FixtureRequest, folder: Path) -> None:
        self.session = session
        self.path = folder / "driver.log"
        self.offset = 0
        if _is_connect(session):
            self.path = request.getfixturevalue("connect_server").log
            self.offset = self.path.stat().st_size
            return
        jvm = session.sparkContext._jvm
        core = jvm.org.apache.logging.log4j.core
        self.context = jvm.org.apache.logging.log4j.LogManager.getContext(False)
        self.appender = (
            core.appender.FileAppender.newBuilder()
            .withFileName(str(self.path))
            .setName("planted-secrets")
            .setLayout(core.layout.PatternLayout.newBuilder().withPattern("%p %c: %m%n").build())
            .build()
        )
        self.appender.start()
        self.context.getConfiguration().getRootLogger().addAppender(self.appender, None, None)
        session.sparkContext.setLogLevel("INFO")

    def read(self, capfd: Any) -> str:
        if not _is_connect(self.session):
            self.session.sparkContext.setLogLevel("ERROR")
            root = self.context.getConfiguration().getRootLogger()
            root.removeAppender("planted-secrets")
            self.appender.stop()
        with self.path.open("rb") as log:
            log.seek(self.offset)
            text = log.read().decode("utf-8", "replace")
        assert "INFO" in text and "MicroBatchExecution" in text, "no driver log captured"
        stdout = capfd.readouterr().out
        assert "== Physical Plan ==" in stdout, "no explain() output captured"
        return text + stdout


def _assert_absent(secrets: list[str], **places: str | bytes) -> None:
    for place, text in places.items():
        blob = text.encode() if isinstance(text, str) else text
        for secret in secrets:
            assert secret.encode() not in blob, f"{secret!r} found in {place}"


@pytest.mark.slow
def test_planted_storage_credentials_stay_out_of_everything(
    session: Any, request: pytest.FixtureRequest, capfd: Any, tmp_path: Path
) -> None:
    src, out, log, ck = (tmp_path / n for n in ("in", "out", "source-log", "ck"))
    src.mkdir()
    # Two files, one per batch: the first batch and one that starts from a committed offset.
    for i in range(2):
        (src / f"f{i}.txt").write_text(f"line {i}\n")
    logs = _Logs(session, request, tmp_path)
    capfd.readouterr()
    reader = session.readStream.format("pyfile").option("format", "text")
    reader = reader.option("sourceLogLocation", str(log)).option("maxFilesPerTrigger", "1")
    writer = (
        reader.options(**FS_SECRETS)
        .load(str(src))
        .writeStream.format("pyfile")
        .option("format", "json")
        .options(**FS_SECRETS)
        .option("checkpointLocation", str(ck))
        .queryName("planted_storage_credentials")
        .trigger(availableNow=True)
    )
    query = writer.start(str(out))
    query.awaitTermination(300)
    assert query.exception() is None, query.exception()
    described = _query_text(query)
    assert len(json.loads(described.split("\n", 1)[0])) >= 2  # one batch per file
    assert (out / "_spark_metadata" / "0").exists()
    _assert_absent(
        list(FS_SECRETS.values()),
        logs=logs.read(capfd),
        checkpoint=_files_text(ck),
        source_log=_files_text(log),
        output_and_manifest=_files_text(out),
        progress_explain_name_status=described,
    )


@pytest.mark.slow
def test_planted_event_hubs_key_stays_out_of_everything(
    session: Any,
    request: pytest.FixtureRequest,
    capfd: Any,
    eventhubs_emulator_factory: Any,
    tmp_path: Path,
) -> None:
    # The emulator checks the key: the queries only work if the planted key reaches the SDK.
    emulator: EventHubsEmulator = eventhubs_emulator_factory(
        {"source": 2, "target": 2}, keys={"RootManageSharedAccessKey": EH_KEY}
    )
    source = emulator.connection_string("source")
    target = emulator.connection_string("target")
    assert EH_KEY in source
    send(source, [f"event {i}" for i in range(20)])
    logs = _Logs(session, request, tmp_path)
    capfd.readouterr()
    query = (
        session.readStream.format("pyeventhub")
        .option("connectionString", source)
        .option("startingPosition", "start")
        .option("maxEventsPerTrigger", "10")  # two batches
        .load()
        .selectExpr("body")
        .writeStream.format("pyeventhub")
        # The Scala connector's name: an alias, one option.
        .option("eventhubs.connectionString", target)
        .option("checkpointLocation", str(tmp_path / "ck"))
        .queryName("planted_hub_key")
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    assert query.exception() is None, query.exception()
    described = _query_text(query)
    events = received(target, 20)
    assert sorted(e.body_as_str() for _, e in events) == sorted(f"event {i}" for i in range(20))
    _assert_absent(
        [EH_KEY],
        logs=logs.read(capfd),
        checkpoint=_files_text(tmp_path / "ck"),
        progress_explain_name_status=described,
    )


@pytest.mark.slow
def test_a_password_in_the_path_url_stays_out_of_everything(
    session: Any, request: pytest.FixtureRequest, capfd: Any, tmp_path: Path
) -> None:
    """``ftp://user:password@host/...`` as the source's and the sink's path: the password
    reaches the FTP server and nothing else; Spark's own reader finds the sink's files from
    its manifest, whose entries carry no userinfo (Hadoop takes the password from
    fs.ftp.password.<host>, as it documents)."""
    home = tmp_path / "ftp"
    (home / "in").mkdir(parents=True)
    for i in range(2):
        (home / "in" / f"f{i}.txt").write_text(f"line {i}\n")
    log, ck = tmp_path / "source-log", tmp_path / "ck"
    with serving_ftp(home, "alice", FTP_PASSWORD) as ftp:
        logs = _Logs(session, request, tmp_path)
        capfd.readouterr()
        query = (
            session.readStream.format("pyfile")
            .option("format", "text")
            .option("sourceLogLocation", str(log))
            .option("maxFilesPerTrigger", "1")
            .load(ftp.url("in"))
            .writeStream.format("pyfile")
            .option("format", "json")
            .option("checkpointLocation", str(ck))
            .queryName("planted_url_password")
            .trigger(availableNow=True)
            .start(ftp.url("out"))
        )
        query.awaitTermination(300)
        assert query.exception() is None, query.exception()
        described = _query_text(query)
        text = logs.read(capfd)
        entries = [
            json.loads(line)["path"]
            for line in (home / "out" / "_spark_metadata" / "1").read_text().splitlines()[1:]
        ]
        assert entries and all(
            e.startswith(f"ftp://127.0.0.1:{ftp.port}/out/part-") for e in entries
        ), entries
        # Spark's reader: the folder's URL without userinfo (Hadoop's FTPFileSystem takes a
        # user without a password as no password), both where Hadoop reads them.
        conf = f"fs.ftp.password.{ftp.host}"
        session.conf.set(conf, FTP_PASSWORD)
        session.conf.set(f"fs.ftp.user.{ftp.host}", ftp.user)
        try:
            # binaryFile reads each file whole: Hadoop's FTP streams cannot seek.
            folder = f"ftp://{ftp.host}:{ftp.port}/out"
            rows = session.read.format("binaryFile").load(folder).select("content").collect()
        finally:
            session.conf.unset(conf)
            session.conf.unset(f"fs.ftp.user.{ftp.host}")
        values = [json.loads(line)["value"] for r in rows for line in r[0].decode().splitlines()]
        assert sorted(values) == ["line 0", "line 1"]
    _assert_absent(
        [FTP_PASSWORD],
        logs=text,
        checkpoint=_files_text(ck),
        source_log=_files_text(log),
        output_and_manifest=_files_text(home / "out"),
        progress_explain_name_status=described,
    )
