"""The ``pysparksources`` command: ``demo``, ``bench``, development servers and tools."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["main"]

Handler = Callable[[argparse.Namespace], int]


def _demo(args: argparse.Namespace) -> int:
    from pysparksources.demo import run_demo

    return run_demo(batches=args.batches)


def _bench(args: argparse.Namespace) -> int:
    from pysparksources.benchmarking.rate import run_rate_benchmark
    from pysparksources.local_spark import local_session

    conf = dict(item.split("=", 1) for item in args.conf)
    spark = local_session("pysparksources-bench", master=args.master, conf=conf)
    run_rate_benchmark(
        spark,
        args.rows,
        batches=args.batches,
        partitions=args.partitions,
        tuples=not args.no_tuples,
        rounds=args.rounds,
    )
    spark.stop()
    return 0


def _doctor(args: argparse.Namespace) -> int:
    from pysparksources.doctor import run_doctor

    return run_doctor(master=args.master, connect_url=args.connect)


def _eventhubs_emulator(args: argparse.Namespace) -> int:
    from pysparksources.testing.eventhubs.cli import run

    return run(args)


def _eventhubs_migrate_checkpoint(args: argparse.Namespace) -> int:
    from pysparksources.eventhubs._migrate import run

    return run(args)


def _add_eventhubs_tools(commands: Any) -> None:
    eventhubs = commands.add_parser("eventhubs", help="Event Hubs tools (no Spark needed)")
    tools = eventhubs.add_subparsers(dest="eventhubs_command", required=True)
    migrate = tools.add_parser(
        "migrate-checkpoint",
        help="startingPositions that continue a Scala-connector query's checkpoint",
        description="Print the pyeventhub startingPositions JSON that continues exactly where "
        "the Scala connector's query of this checkpoint stopped (its last committed batch).",
    )
    migrate.add_argument("checkpoint", metavar="checkpointLocation", help="path or fsspec URL")
    migrate.add_argument(
        "--source-index",
        type=int,
        default=None,
        metavar="N",
        help="the Event Hubs source's index in the query (default: the only one that fits)",
    )
    migrate.add_argument("--hub", default=None, metavar="NAME", help="hub, if several")
    migrate.add_argument(
        "--partition-count",
        type=int,
        default=None,
        metavar="N",
        help="the hub's partition count now, to warn about partitions the checkpoint lacks",
    )
    migrate.set_defaults(handler=_eventhubs_migrate_checkpoint)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pysparksources", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="run the demo pipeline on a local Spark")
    demo.add_argument("--batches", type=int, default=8, help="micro-batches to run (default 8)")
    demo.set_defaults(handler=_demo)

    bench = commands.add_parser("bench", help="pyrate vs Spark's rate-micro-batch")
    bench.add_argument(
        "--rows", type=int, nargs="+", default=[1_000_000, 5_000_000], help="rows per batch"
    )
    bench.add_argument("--batches", type=int, default=5, help="steady-state batches per query")
    bench.add_argument("--master", default="local[2]", help="master URL (default local[2])")
    bench.add_argument("--partitions", type=int, default=2, help="numPartitions (default 2)")
    bench.add_argument("--rounds", type=int, default=2, help="interleaved rounds (default 2)")
    bench.add_argument("--no-tuples", action="store_true", help="skip the tuple-yielding source")
    bench.add_argument(
        "--conf", action="append", default=[], metavar="KEY=VALUE", help="extra Spark settings"
    )
    bench.set_defaults(handler=_bench)

    doctor = commands.add_parser("doctor", help="check Java, worker Python, sessions, executors")
    doctor.add_argument("--master", default="local[1]", help="master URL to try (local[1])")
    doctor.add_argument("--connect", default=None, metavar="sc://HOST:PORT", help="Connect URL")
    doctor.set_defaults(handler=_doctor)

    from pysparksources.testing.eventhubs.cli import build_parser as emulator_parser

    emulator = commands.add_parser(
        "eventhubs-emulator", help="serve Event Hubs over AMQP on 127.0.0.1 (tests, demos)"
    )
    emulator_parser(emulator)
    emulator.set_defaults(handler=_eventhubs_emulator)
    _add_eventhubs_tools(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler: Handler = args.handler
    return handler(args)


if __name__ == "__main__":
    sys.exit(main())
