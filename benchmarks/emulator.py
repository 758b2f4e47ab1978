"""SDK producer and consumer throughput against the Event Hubs emulator (pysparksources-emulator).

The emulator runs in its own process (``python -m pysparksources_emulator``) so the SDK and
the server do not share one GIL; figures are the median of ``--runs`` runs, each on a fresh
partition so a read sees exactly one backlog.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from typing import Any

from benchmarks._eventhubs import emulator_process, send_full_batches

__all__ = ["HELP", "SPARK", "add_arguments", "run"]

HELP = "azure-eventhub producer and consumer against the emulator (no Spark)"
SPARK = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=3)


def produce(conn: str, events: int, size: int, partition: str) -> float:
    """Events/s sending full batches (about 1 MB each) to one partition."""
    from azure.eventhub import EventData, EventHubProducerClient

    with EventHubProducerClient.from_connection_string(conn) as client:
        client.send_batch([EventData(b"warm-up")], partition_id=partition)  # connect first
        started = time.perf_counter()
        send_full_batches(client, partition, events, b"x" * size)
        return events / (time.perf_counter() - started)


def consume(conn: str, events: int, partition: str) -> float:
    """Events/s from the first to the last event of a backlog read from the start."""
    from azure.eventhub import EventHubConsumerClient

    client = EventHubConsumerClient.from_connection_string(conn, consumer_group="$Default")
    stamps: list[float] = []
    done = threading.Event()

    def on_event(context: object, event: object) -> None:
        if event is None:
            return
        stamps.append(time.perf_counter())
        if len(stamps) >= events:
            done.set()

    thread = threading.Thread(
        target=client.receive,
        kwargs={"on_event": on_event, "partition_id": partition, "starting_position": "-1"},
        daemon=True,
    )
    thread.start()
    done.wait(timeout=300)
    client.close()
    thread.join(timeout=30)
    if len(stamps) < events:
        raise RuntimeError(f"received only {len(stamps)} of {events} events")
    return (len(stamps) - 1) / (stamps[-1] - stamps[0])


def run(args: argparse.Namespace) -> dict[str, Any]:
    with emulator_process("bench", args.runs) as conn:
        sends, reads = [], []
        for run_no in range(args.runs):
            partition = str(run_no)  # a fresh partition per run: reads see exactly one backlog
            sends.append(produce(conn, args.events, args.size, partition))
            reads.append(consume(conn, args.events + 1, partition))
            print(f"run {run_no + 1}: send {sends[-1]:,.0f} ev/s, receive {reads[-1]:,.0f} ev/s")
    mb = args.size / 1e6
    send_rate, read_rate = statistics.median(sends), statistics.median(reads)
    print(f"{args.events} events of {args.size} B, median of {args.runs} runs:")
    print(f"  SDK producer: {send_rate:,.0f} events/s ({send_rate * mb:,.1f} MB/s)")
    print(f"  SDK consumer: {read_rate:,.0f} events/s ({read_rate * mb:,.1f} MB/s)")
    return {"producer": round(send_rate), "consumer": round(read_rate)}
