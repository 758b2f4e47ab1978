"""docs/pyeventhub-source.md: its option table is rendered from the option declarations, and its
migration tables name every Scala alias and answer every Kafka option."""

from __future__ import annotations

from pysparksources._core.option_docs import render_markers
from pysparksources._core.option_table import Use
from pysparksources.eventhubs._option_table import TABLE
from support.paths import DOCS

PAGE = (DOCS / "pyeventhub-source.md").read_text()
SECTION = PAGE.split("\n## Options\n", 1)[1].split("\n## ", 1)[0]
READ_OPTIONS = [option.name for option in TABLE.for_use(Use.READ)]


def test_the_option_table_is_the_rendered_declaration() -> None:
    assert "<!-- options:pyeventhub:READ -->" in SECTION
    assert render_markers(PAGE, {"pyeventhub": TABLE}) == PAGE, "run ./dev docs"
    for name in READ_OPTIONS:
        assert f"| `{name}`" in SECTION, f"the rendered table lacks {name}"


def test_every_alias_is_in_the_migration_table() -> None:
    table = SECTION.split("### Option names of the Scala connector", 1)[1].lower()
    aliases = [alias for option in TABLE.for_use(Use.READ) for alias in option.aliases]
    assert aliases
    for alias in map(str.lower, aliases):
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
    table = SECTION.split("### From Spark's Kafka source", 1)[1]
    rows = {line.split(" | ")[0]: line for line in table.splitlines() if line.startswith("| `")}
    for kafka in KAFKA_OPTIONS:
        row = next((r for key, r in rows.items() if f"`{kafka}`" in key), None)
        assert row is not None, f"the Kafka table lacks {kafka}"
        answer = row.split(" | ", 1)[1]
        named = [name for name in READ_OPTIONS if f"`{name}`" in answer or f"{name}=" in answer]
        assert named or "n/a:" in answer or "always" in answer, row
