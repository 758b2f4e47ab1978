"""The ``pysparksources`` command: ``demo``, ``doctor`` and ``eventhubs migrate-checkpoint``.

Building the parser imports nothing else of the package: each subcommand imports what it runs.
The Event Hubs emulator has its own command, ``pysparksources-emulator`` (its own distribution).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["main"]

Handler = Callable[[argparse.Namespace], int]


def _note_worker_python() -> None:
    """Say what the user's own sessions need, and that the demo points Spark at this
    interpreter. Only commands that start Spark say it: importing the package says nothing."""
    from pysparksources._core import worker_python as _worker_python

    problem = _worker_python.path_python_problem()
    if problem:
        print(f"pysparksources: {problem}", file=sys.stderr)
        print(
            f"pysparksources: this command runs Spark with PYSPARK_PYTHON={sys.executable}",
            file=sys.stderr,
        )


def _demo(args: argparse.Namespace) -> int:
    from pysparksources._commands.demo_requirements import check_requirements
    from pysparksources.errors import PySparkSourcesError

    try:
        check_requirements()  # before anything else (even PySpark): one line naming the fix
    except PySparkSourcesError as error:
        print(error, file=sys.stderr)
        return 2
    from pysparksources._commands.demo import check_arguments, run_demo

    try:
        check_arguments(args.batches, args.output)  # before Spark starts: one line
    except PySparkSourcesError as error:
        print(error, file=sys.stderr)
        return 2
    _note_worker_python()
    return run_demo(batches=args.batches, output=args.output)


def _doctor(args: argparse.Namespace) -> int:
    from pysparksources._commands.doctor import run_doctor

    return run_doctor(master=args.master, connect_url=args.connect)


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
    parser = argparse.ArgumentParser(
        prog="pysparksources",
        description="The demo, a setup check and Event Hubs tools.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="run the demo pipeline on a local Spark")
    demo.add_argument(
        "--batches",
        type=int,
        default=8,
        help="micro-batches of 1500 rows pyrate writes (default 8); the reader reads them all",
    )
    demo.add_argument(
        "--output",
        default=None,
        metavar="DIR",
        help="keep the parquet output in DIR, a new or empty folder (default: a temporary "
        "folder, deleted at the end)",
    )
    demo.set_defaults(handler=_demo)

    doctor = commands.add_parser("doctor", help="check Java, worker Python, sessions, executors")
    doctor.add_argument("--master", default="local[1]", help="master URL to try (local[1])")
    doctor.add_argument("--connect", default=None, metavar="sc://HOST:PORT", help="Connect URL")
    doctor.set_defaults(handler=_doctor)
    _add_eventhubs_tools(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    return handler(args)


if __name__ == "__main__":
    sys.exit(main())
