"""Where a bad option fails, per the table in docs/errors.md, on classic and Spark Connect.

- load() without .schema(...): Spark builds the data source and asks its schema in the
  caller's thread, so read options fail load() (Connect: the first analysis, load() is lazy).
- load() with .schema(...), and writeStream...start(): Spark calls no Python before the query
  runs; the error fails the query and awaitTermination() raises it.
- save() and batch actions: the writer or reader is built in the caller's thread.

Everywhere the last Python error line is our one-line OptionError: no PySpark
UnboundLocalError tail, no "invalid value None", and no planted secret.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pysparksources import errors
from support.errors import assert_one_line_error, query_failure

pytestmark = pytest.mark.spark

KEY = "PlantedKey0nly4Tests+Zz9="
CONN = f"Endpoint=sb://127.0.0.1:1/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={KEY}"


def _is_connect(session: Any) -> bool:
    return "connect" in type(session).__module__


def _load_error(session: Any, build: Any) -> str:
    """The error of defining the DataFrame: load() on classic, the first analysis on Connect."""
    try:
        df = build()
    except Exception as error:  # classic: load() itself raised
        return str(error)
    assert _is_connect(session), "on a classic session load() must raise"
    with pytest.raises(Exception) as caught:
        _ = df.columns
    return str(caught.value)


@pytest.mark.slow
def test_bad_read_options_fail_when_the_dataframe_is_defined(session: Any, tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    folder = str(tmp_path / "in")
    cases = [
        (
            lambda: session.readStream.format("pyrate").option("rowsPerSecnd", "5").load(),
            "pyrate: unknown option 'rowspersecnd': did you mean 'rowsPerSecond'?",
        ),
        (
            lambda: session.read.format("pyrate").option("rowsPerSecond", "0").load(),
            "pyrate: invalid value '0' for option 'rowsPerSecond'",
        ),
        (
            lambda: (
                session.readStream.format("pyfile")
                .option("format", "text")
                .option("maxFilePerTrigger", "1")
                .load(folder)
            ),
            "pyfile: unknown option 'maxfilepertrigger': did you mean 'maxFilesPerTrigger'?",
        ),
        (
            lambda: (
                session.readStream.format("pyfile")
                .option("format", "text")
                .load(str(tmp_path / "no-such-folder"))
            ),
            "the folder (or file) does not exist",
        ),
        (
            lambda: (
                session.read.format("pyfile")
                .option("format", "text")
                .option("sep", ";")
                .option("delimiter", ",")
                .load(folder)
            ),
            "pyfile: option 'sep' is given twice, as",
        ),
        (
            lambda: (
                session.readStream.format("pyfile")
                .option("format", "csv")
                .option("inferSchema", "perhaps")
                .load(folder)
            ),
            "inferSchema",
        ),
        (
            lambda: session.readStream.format("pyeventhub").option("connectionStrng", CONN).load(),
            "pyeventhub: unknown option 'connectionstrng': did you mean 'connectionString'?",
        ),
        (
            lambda: session.readStream.format("pyeventhub").load(),
            "pyeventhub: option 'connectionString' is required",
        ),
        (
            lambda: (
                session.readStream.format("pyeventhub")
                .option("connectionString", CONN)
                .option("eventhubs.connectionString", CONN)
                .option("eventHubName", "h")
                .load()
            ),
            "option 'connectionString' is given twice",
        ),
        (
            lambda: (
                session.readStream.format("pyeventhub")
                .option("connectionString", CONN.replace("Endpoint=", "Endpont="))
                .load()
            ),
            "invalid value <not shown> for option 'connectionString'",
        ),
    ]
    for build, expected in cases:
        message = _load_error(session, build)
        assert_one_line_error(message, expected)
        assert KEY not in message


@pytest.mark.slow
def test_streams_fail_in_the_query_where_spark_gives_no_earlier_hook(
    session: Any, tmp_path: Path
) -> None:
    (tmp_path / "in").mkdir()
    folder = str(tmp_path / "in")

    def noop(df: Any, name: str) -> Any:
        return (
            df.writeStream.format("noop")
            .option("checkpointLocation", str(tmp_path / name))
            .trigger(availableNow=True)
            .start()
        )

    # With .schema(...), load() and start() return: Spark builds the source in the query.
    reader = session.readStream.format("pyfile").schema("a INT").load(folder)
    message = query_failure(noop(reader, "ck1"))
    assert_one_line_error(message, "pyfile: option 'sourceLogLocation' is required:")

    # One source DataFrame for both sink queries: each start() builds its own source.
    rate = (
        session.readStream.format("pyrate").option("rowsPerBatch", "5").option("totalRows", "5")
    ).load()
    sink = (
        rate.writeStream.format("pyfile")
        .option("compresion", "gzip")
        .option("fs.account_key", KEY)
        .option("checkpointLocation", str(tmp_path / "ck2"))
        .trigger(availableNow=True)
    )
    message = query_failure(sink.start(str(tmp_path / "out")))
    assert_one_line_error(message, "pyfile: unknown option 'compresion': did you mean")
    assert KEY not in message

    events = (
        rate.selectExpr("CAST(value AS STRING) AS body")
        .writeStream.format("pyeventhub")
        .option("connectionStrng", CONN)
        .option("checkpointLocation", str(tmp_path / "ck3"))
        .trigger(availableNow=True)
    )
    message = query_failure(events.start())
    assert_one_line_error(message, "pyeventhub: unknown option 'connectionstrng'")
    assert KEY not in message


def test_batch_writes_and_reads_fail_in_the_callers_thread(session: Any, tmp_path: Path) -> None:
    data = session.range(3).selectExpr("CAST(id AS STRING) AS body")
    with pytest.raises(Exception) as caught:
        data.write.format("pyfile").option("compresion", "gzip").mode("append").save(
            str(tmp_path / "out")
        )
    assert_one_line_error(str(caught.value), "did you mean 'compression'?")
    # errors.cause gives the job our error back from Spark's, as its class.
    found = errors.cause(caught.value)
    assert isinstance(found, errors.OptionError), repr(caught.value)
    assert (found.source, found.option) == ("pyfile", "compresion")
    with pytest.raises(Exception) as caught:
        data.write.format("pyeventhub").option("sharedAccessKey", KEY).mode("append").save()
    message = str(caught.value)
    assert_one_line_error(message, "pyeventhub: option 'connectionString' is required:")
    assert KEY not in message
    # With .schema(...), a batch read builds its reader at the first action.
    df = session.read.format("pyfile").schema("a INT").load(str(tmp_path / "missing"))
    with pytest.raises(Exception) as caught:
        df.collect()
    assert_one_line_error(str(caught.value), "the folder (or file) does not exist")
    found = errors.cause(caught.value)
    assert isinstance(found, errors.OptionError) and found.option == "path", repr(caught.value)
