"""The README's pyeventhub source section documents every option and every Scala alias."""

from __future__ import annotations

from pysparksources.eventhubs.options import SOURCE_ALIASES as ALIASES
from pysparksources.eventhubs.options import SOURCE_OPTIONS as OPTIONS
from support.paths import README as README_PATH

README = README_PATH.read_text()
SECTION = README.split("## `pyeventhub` source", 1)[1].split("\n## ", 1)[0]


def test_every_option_has_a_row_with_its_default_and_meaning() -> None:
    for name, (default, meaning) in OPTIONS.items():
        assert f"| `{name}` | {default} | {meaning} |" in SECTION, f"README lacks a row for {name}"


def test_every_alias_is_in_the_migration_table() -> None:
    table = SECTION.split("### Migrating from the Scala connector", 1)[1].lower()
    for alias in map(str.lower, ALIASES):
        grouped = alias + "(s)" in table or (alias[-1] == "s" and alias[:-1] + "(s)" in table)
        assert alias in table or grouped, f"the migration table lacks {alias}"


def test_checkpoint_precedence_is_said_plainly() -> None:
    assert "**Starting positions are ignored once the checkpoint exists.**" in SECTION


KAFKA_OPTIONS = (
    "subscribe",
    "subscribePattern",
    "assign",
    "startingOffsets",
    "startingOffsetsByTimestamp",
    "endingOffsets",
    "maxOffsetsPerTrigger",
    "minOffsetsPerTrigger",
    "maxTriggerDelay",
    "minPartitions",
    "maxRecordsPerPartition",
    "failOnDataLoss",
    "kafkaConsumer.pollTimeoutMs",
    "fetchOffset.numRetries",
    "includeHeaders",
)


def test_every_kafka_option_has_a_row_naming_an_option_or_why_not() -> None:
    table = SECTION.split("**From Spark's Kafka source.**", 1)[1]
    rows = {line.split(" | ")[0]: line for line in table.splitlines() if line.startswith("| `")}
    for kafka in KAFKA_OPTIONS:
        row = next((r for key, r in rows.items() if f"`{kafka}`" in key), None)
        assert row is not None, f"the Kafka table lacks {kafka}"
        answer = row.split(" | ", 1)[1]
        named = [name for name in OPTIONS if f"`{name}`" in answer or f"{name}=" in answer]
        assert named or "n/a:" in answer or "always" in answer, row
