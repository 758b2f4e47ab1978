"""Bad options and bad input columns fail the query at its start, naming what is wrong."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pysparksources_emulator import EventHubsEmulator
from support.streams import rate

pytestmark = pytest.mark.spark
SECRET = "c2VjcmV0LWtleS12YWx1ZQ"


def failure(df: Any, tmp_path: Path, options: dict[str, str]) -> str:
    writer = df.writeStream.format("pyeventhub").options(**options)
    with pytest.raises(Exception) as caught:
        query = writer.option("checkpointLocation", str(tmp_path / "ck")).start()
        query.awaitTermination(120)
    return str(caught.value)


@pytest.mark.parametrize(
    ("columns", "options", "named"),
    [
        (
            ["CAST(value AS STRING) AS text"],
            {},
            "SchemaError: pyeventhub: the input has no column 'body' (its columns: text string); "
            "the sink sends it as the events' bodies: string or binary",
        ),
        (["value AS body"], {}, "input column 'body' is bigint; expected string or binary"),
        (
            ["CAST(value AS STRING) AS body", "value AS extra"],
            {},
            "input column 'extra' (bigint) is not one the sink takes",
        ),
        (
            ["CAST(value AS STRING) AS body", "1.5 AS partitionId"],
            {},
            "input column 'partitionId' is decimal(2,1); expected the target partition id",
        ),
        (["CAST(value AS STRING) AS body"], {"maxRetries": "-1"}, "maxRetries"),
        (["CAST(value AS STRING) AS body"], {"maxBatchByte": "1"}, "did you mean"),
        (["CAST(value AS STRING) AS body"], {"sendTimeout": "soon"}, "sendTimeout"),
        (["CAST(value AS STRING) AS body"], {"connectionString": "Endpoint=x"}, "connectionStr"),
        (
            ["CAST(value AS STRING) AS body"],
            {"startingPosition": "start"},
            "option 'startingPosition' applies only to spark.readStream and spark.read",
        ),
    ],
)
def test_bad_input_fails_at_start(
    spark: Any,
    eventhubs_emulator: EventHubsEmulator,
    tmp_path: Path,
    columns: list[str],
    options: dict[str, str],
    named: str,
) -> None:
    conn = eventhubs_emulator.connection_string("test", key_name="root", key=SECRET)
    df = rate(spark, 10, 10, capped=False).selectExpr(*columns)
    message = failure(df, tmp_path, {"connectionString": conn, **options})
    assert named in message
    assert SECRET not in message


def test_both_partition_id_and_key_on_a_row_is_named(
    spark: Any, eventhubs_emulator: EventHubsEmulator, tmp_path: Path
) -> None:
    conn = eventhubs_emulator.connection_string("test")
    df = rate(spark, 10, 10, capped=False).selectExpr(
        "CAST(value AS STRING) AS body",
        "IF(value = 3, '1', NULL) AS partitionId",
        "IF(value = 3, 'k', NULL) AS partitionKey",
    )
    message = failure(df, tmp_path, {"connectionString": conn})
    assert "both partitionId ('1') and partitionKey ('k')" in message


def test_a_hub_the_namespace_does_not_have_fails_the_first_send_naming_it(
    spark: Any, eventhubs_emulator: EventHubsEmulator, tmp_path: Path
) -> None:
    # Not retried: maxRetries and retryBackoff this large would hold the task for minutes.
    conn = eventhubs_emulator.connection_string("nohub", key_name="root", key=SECRET)
    df = rate(spark, 10, 10, capped=False).selectExpr("CAST(value AS STRING) AS body")
    options = {"connectionString": conn, "maxRetries": "20", "retryBackoff": "30s"}
    message = failure(df, tmp_path, options)
    assert "OptionError: pyeventhub: event hub 'nohub' does not exist in namespace" in message
    assert "check option 'eventHubName' (or the connection string's EntityPath)" in message
    assert SECRET not in message
