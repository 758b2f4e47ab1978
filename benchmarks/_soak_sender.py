"""The soak's sender: its own process sending numbered events at a steady rate with the SDK.

``python -m benchmarks._soak_sender CONN RATE PARTITIONS LEDGER`` sends, every tenth
of a second, one batch to the next partition in turn; each event's body is its id as ASCII
digits, ids counting up from 0 and never reused. Every batch ends as one ledger line,
``ack FIRST COUNT`` once the hub acknowledged it or ``fail FIRST COUNT`` when the send raised
(emulator down): such events may or may not be stored. Ticks missed while a send hangs are
skipped, not caught up, so an outage does not turn into a burst. SIGTERM ends it after the
batch in flight.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Ledger", "main", "read_ledger"]

TICK_S = 0.1


@dataclass
class Ledger:
    """What the sender recorded: acknowledged id ranges and failed ones."""

    acknowledged: list[tuple[int, int]]
    failed: list[tuple[int, int]]

    @property
    def acknowledged_count(self) -> int:
        return sum(count for _, count in self.acknowledged)

    @property
    def failed_count(self) -> int:
        return sum(count for _, count in self.failed)

    def acknowledged_ids(self) -> set[int]:
        return {i for first, count in self.acknowledged for i in range(first, first + count)}


def read_ledger(path: Path) -> Ledger:
    ledger = Ledger([], [])
    for line in path.read_text().splitlines() if path.exists() else []:
        kind, first, count = line.split()
        (ledger.acknowledged if kind == "ack" else ledger.failed).append((int(first), int(count)))
    return ledger


def run(conn: str, rate: float, partitions: int, ledger: Path, stop: threading.Event) -> None:
    from azure.eventhub import EventData, EventHubProducerClient

    # Short retries: during an emulator restart a send fails within seconds and the next tick
    # tries again on a reconnected link.
    client = EventHubProducerClient.from_connection_string(
        conn, retry_total=1, retry_backoff_factor=0.5, retry_backoff_max=2
    )
    next_id, owed, tick = 0, 0.0, 0
    next_at = time.monotonic()
    with client, ledger.open("a") as out:
        while not stop.is_set():
            owed += rate * TICK_S
            count = int(owed)
            owed -= count
            if count:
                partition = str(tick % partitions)
                try:
                    batch = client.create_batch(partition_id=partition)
                    for i in range(next_id, next_id + count):
                        batch.add(EventData(str(i).encode()))
                    client.send_batch(batch, timeout=10)
                    out.write(f"ack {next_id} {count}\n")
                except Exception as error:  # the SDK's errors while the hub is away
                    out.write(f"fail {next_id} {count}\n")
                    print(f"sender: {type(error).__name__} on partition {partition}", flush=True)
                out.flush()
                next_id += count
            tick += 1
            next_at = max(next_at + TICK_S, time.monotonic())
            stop.wait(max(0.0, next_at - time.monotonic()))


def main(argv: list[str]) -> int:
    conn, rate, partitions, ledger = argv
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    run(conn, float(rate), int(partitions), Path(ledger), stop)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
