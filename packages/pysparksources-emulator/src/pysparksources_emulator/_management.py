"""``$management`` READ: the hub and partition properties the SDK asks for."""

from __future__ import annotations

from typing import Any

from pysparksources_emulator._amqp.types import Array, Int, Symbol, Timestamp
from pysparksources_emulator._broker import Broker, EntityError

__all__ = ["EMPTY_TIME_MS", "handle_management"]

# 0001-01-01T00:00:00Z in Unix milliseconds: what the service reports for "never".
EMPTY_TIME_MS = -62135596800000


def _status(code: int, description: str) -> dict[Any, Any]:
    # The SDK reads statusDescription here but status-description elsewhere: send both.
    return {
        "status-code": Int(code),
        "status-description": description,
        "statusDescription": description,
    }


def handle_management(
    broker: Broker, app: dict[Any, Any], created_ms: int
) -> tuple[dict[Any, Any], Any]:
    """Answer one request; return (application properties, amqp-value body)."""
    operation = str(app.get("operation", ""))
    entity_type = str(app.get("type", ""))
    name = str(app.get("name", ""))
    if operation != "READ":
        return _status(400, f"Unsupported operation '{operation}'."), None
    try:
        hub = broker.hub(name)
        if entity_type == "com.microsoft:eventhub":
            ids = [str(i) for i in range(len(hub.partitions))]
            body: dict[Any, Any] = {
                "name": hub.name,
                "type": Symbol("com.microsoft:eventhub"),
                "created_at": Timestamp(created_ms),
                "partition_count": Int(len(ids)),
                "partition_ids": Array(0xB1, tuple(ids)),
            }
            return _status(200, "OK"), body
        if entity_type == "com.microsoft:partition":
            pid = str(app.get("partition", ""))
            log = hub.partitions[broker.partition_index(hub, pid)]
            never = log.next_sequence_number == 0
            body = {
                "name": hub.name,
                "type": Symbol("com.microsoft:partition"),
                "partition": pid,
                "begin_sequence_number": log.begin_sequence_number,
                "last_enqueued_sequence_number": log.last_sequence_number,
                "last_enqueued_offset": "-1" if never else str(log.last_offset),
                "last_enqueued_time_utc": Timestamp(
                    EMPTY_TIME_MS if never else log.last_enqueued_ms
                ),
                "is_partition_empty": log.is_empty,
            }
            return _status(200, "OK"), body
    except EntityError as exc:
        code = 404 if exc.condition == "amqp:not-found" else 400
        return _status(code, exc.description), None
    return _status(400, f"Unsupported type '{entity_type}'."), None
