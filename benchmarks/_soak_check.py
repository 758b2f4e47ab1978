"""The soak's end check: what the hub holds and what the sender was told, against the output.

The output is read with Spark's own parquet reader (which follows the sink's
``_spark_metadata``). Exactly once is judged on the hub's events, identified by (partition,
sequence number): every one of them must be in the output once. Ids are the sender's view:
every acknowledged id must be there; an id the hub stored twice (a send retried after a lost
acknowledgement) is Event Hubs' at-least-once send, reported apart from the query's duplicates.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks._soak_sender import Ledger

__all__ = ["Outcome", "check_output", "hub_next_sequence_numbers"]


@dataclass(frozen=True)
class Outcome:
    events_acknowledged: int
    events_failed_to_send: int
    events_in_hub: int
    rows_out: int
    distinct_events_out: int
    duplicate_rows: int
    hub_events_missing: int
    acknowledged_ids_missing: int
    failed_sends_stored: int
    ids_stored_twice_by_producer_retries: int

    @property
    def exactly_once(self) -> bool:
        return (
            self.duplicate_rows == 0
            and self.hub_events_missing == 0
            and self.acknowledged_ids_missing == 0
            and self.rows_out == self.events_in_hub
        )

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "exactly_once": self.exactly_once}


def hub_next_sequence_numbers(conn: str, partitions: int) -> dict[str, int]:
    """Each partition's last enqueued sequence number + 1 (its event count: nothing expires)."""
    from azure.eventhub import EventHubProducerClient

    with EventHubProducerClient.from_connection_string(conn) as client:
        return {
            str(p): int(client.get_partition_properties(str(p))["last_enqueued_sequence_number"])
            + 1
            for p in range(partitions)
        }


def check_output(spark: Any, path: Path, hub: dict[str, int], ledger: Ledger) -> Outcome:
    rows = spark.read.parquet(str(path)).select("id", "partition", "sequenceNumber").collect()
    events = Counter((row.partition, row.sequenceNumber) for row in rows)
    expected = {(p, seq) for p, count in hub.items() for seq in range(count)}
    seqs_per_id: dict[int, set[tuple[str, int]]] = {}
    for row in rows:
        seqs_per_id.setdefault(row.id, set()).add((row.partition, row.sequenceNumber))
    failed = {i for first, count in ledger.failed for i in range(first, first + count)}
    return Outcome(
        events_acknowledged=ledger.acknowledged_count,
        events_failed_to_send=ledger.failed_count,
        events_in_hub=len(expected),
        rows_out=len(rows),
        distinct_events_out=len(events),
        duplicate_rows=len(rows) - len(events),
        hub_events_missing=len(expected - events.keys()),
        acknowledged_ids_missing=len(ledger.acknowledged_ids() - seqs_per_id.keys()),
        failed_sends_stored=len(failed & seqs_per_id.keys()),
        ids_stored_twice_by_producer_retries=sum(len(s) > 1 for s in seqs_per_id.values()),
    )
