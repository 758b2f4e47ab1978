"""Data loss, shared consumer groups, exclusive receivers, secrets and option errors in Spark."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from pysparksources_emulator import EmulatorConfig, EventHubsEmulator, Fault, HubConfig
from support.eventhubs import send
from support.pyeventhub import batch_read, read_back, reader, run_to_parquet, seqs
from support.streams import progress

KEY = "S3cretKeyValue0123456789abcdef="


@pytest.mark.slow
def test_fail_on_data_loss_names_hub_partition_and_sequence_numbers(
    spark: Any, eventhubs_emulator_factory: Any, tmp_path: Path
) -> None:
    shift = [0.0]
    config = EmulatorConfig(
        hubs=[HubConfig("ret", 1, retention_seconds=60)],
        clock=lambda: time.time() + shift[0],
        retention_check_interval=3600,
    )
    emulator = eventhubs_emulator_factory(config=config)
    conn = emulator.connection_string("ret")
    send(conn, [f"a{i}" for i in range(10)], partition_id="0")
    run_to_parquet(reader(spark, conn, startingPosition="start"), tmp_path)
    send(conn, [f"b{i}" for i in range(5)], partition_id="0")  # 10..14, never read
    shift[0] = 600.0
    send(conn, ["c0", "c1"], partition_id="0")  # 15, 16
    assert emulator.apply_retention() > 0
    with pytest.raises(Exception) as err:
        run_to_parquet(reader(spark, conn), tmp_path)
    message = str(err.value)
    assert "ret" in message and "partition 0" in message and "10..14" in message
    assert "failOnDataLoss" in message
    run_to_parquet(reader(spark, conn, failOnDataLoss="false"), tmp_path)
    rows = read_back(spark, tmp_path)
    assert seqs(rows)[-3:] == [("0", 9), ("0", 15), ("0", 16)]
    assert len(rows) == 12


@pytest.mark.slow
def test_two_queries_share_a_consumer_group(
    spark: Any, eventhubs_emulator: EventHubsEmulator, tmp_path: Path
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    # 40 events at 10 a trigger: each query reads in 4 batches, the two running side by side.
    send(conn, [f"e{i}" for i in range(20)], partition_id="0")
    send(conn, [f"f{i}" for i in range(20)], partition_id="1")
    queries = []
    for name in ("q1", "q2"):
        df = reader(spark, conn, startingPosition="start", maxEventsPerTrigger=10)
        queries.append(
            df.writeStream.format("parquet")
            .option("path", str(tmp_path / f"{name}-out"))
            .option("checkpointLocation", str(tmp_path / f"{name}-cp"))
            .trigger(availableNow=True)
            .start()
        )
    for query in queries:
        query.awaitTermination(300)
        assert query.exception() is None
    for name in ("q1", "q2"):
        assert len(read_back(spark, tmp_path, name)) == 40


@pytest.mark.slow
def test_exclusive_receiver_reads_everything(
    spark: Any, eventhubs_emulator: EventHubsEmulator, tmp_path: Path
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    send(conn, [f"e{i}" for i in range(7)], partition_id="1")
    df = reader(spark, conn, startingPosition="start", useExclusiveReceiver="true")
    run_to_parquet(df, tmp_path)
    assert seqs(read_back(spark, tmp_path)) == [("1", i) for i in range(7)]


def test_no_secret_in_progress_description_offsets_or_errors(
    spark: Any, eventhubs_emulator_factory: Any, tmp_path: Path
) -> None:
    emulator = eventhubs_emulator_factory(hubs={"sec": 1}, keys={"policy": KEY})
    conn = emulator.connection_string("sec")
    send(conn, ["x"], partition_id="0")
    query = run_to_parquet(reader(spark, conn, startingPosition="start"), tmp_path)
    texts = [json.dumps(p).encode() for p in progress(query)]
    texts += [f.read_bytes() for f in (tmp_path / "q-cp").rglob("*") if f.is_file()]
    assert texts and not any(KEY.encode() in t for t in texts)
    assert len(read_back(spark, tmp_path)) == 1
    with pytest.raises(Exception) as err:  # refused at load(): Spark asks for the schema there
        run_to_parquet(reader(spark, conn, startingPosition="nonsense"), tmp_path, name="bad")
    assert "startingPosition" in str(err.value) and KEY not in str(err.value)


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("startingPosition", '{"seqNo": "x"}'),
        ("maxEventsPerTrigger", "-3"),
        ("failOnDataLoss", "perhaps"),
        ("receiverTimeout", "forever"),
        ("partitionPreferredLocationStrategy", "Nearest"),
        ("noSuchOption", "1"),
    ],
)
def test_bad_options_fail_at_load(spark: Any, tmp_path: Path, option: str, value: str) -> None:
    conn = "Endpoint=sb://127.0.0.1:1;SharedAccessKeyName=k;SharedAccessKey=KEY42;EntityPath=h"
    with pytest.raises(Exception) as err:  # load() asks for the schema, which checks options
        reader(spark, conn, **{option: value})
    text = str(err.value)
    form = "unknown option" if option == "noSuchOption" else "invalid value"
    assert form in text and option.lower() in text.lower() and "KEY42" not in text


def test_an_option_of_the_other_kind_of_read_fails_naming_where_it_applies(
    spark: Any, tmp_path: Path
) -> None:
    # load() accepts the options of either kind of read (Spark asks for the schema before it
    # says which); the reader of the other kind refuses them before any network call.
    conn = "Endpoint=sb://127.0.0.1:1;SharedAccessKeyName=k;SharedAccessKey=KEY42;EntityPath=h"
    with pytest.raises(Exception) as streamed:  # classic and Connect raise different types
        run_to_parquet(reader(spark, conn, endingPosition="end"), tmp_path)
    text = str(streamed.value)
    assert "pyeventhub: option 'endingPosition' applies only to spark.read" in text
    assert "KEY42" not in text
    with pytest.raises(Exception) as batched:
        batch_read(spark, conn, maxEventsPerTrigger=5)
    text = str(batched.value)
    assert "pyeventhub: option 'maxEventsPerTrigger' applies only to spark.readStream" in text
    assert "KEY42" not in text
    with pytest.raises(Exception) as sink_only:
        batch_read(spark, conn, maxRetries=3)
    text = str(sink_only.value)
    assert "option 'maxRetries' applies only to df.writeStream and df.write" in text


# A detached link, a closed connection, a TCP connection dropped without a close frame, and
# a service too busy to keep the receiver: each mid-batch, after 50 of 200 events.
@pytest.mark.parametrize(
    ("action", "condition"),
    [
        ("detach", "amqp:link:detach-forced"),
        ("close", "amqp:link:detach-forced"),
        ("abort", "amqp:link:detach-forced"),
        ("detach", "com.microsoft:server-busy"),
    ],
)
@pytest.mark.slow
def test_link_failure_mid_read_loses_and_duplicates_nothing(
    spark: Any, eventhubs_emulator: EventHubsEmulator, tmp_path: Path, action: str, condition: str
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    send(conn, [f"e{i}" for i in range(200)], partition_id="0")
    fault = eventhubs_emulator.add_fault(
        Fault(
            action,
            condition,
            link="receiver",
            partition=0,
            after_events=50,
            times=1,
        )
    )
    run_to_parquet(reader(spark, conn, startingPosition="start"), tmp_path)
    assert seqs(read_back(spark, tmp_path)) == [("0", i) for i in range(200)]
    assert fault.fired == 1
