"""``pysparksources-emulator``: serve Event Hubs on 127.0.0.1 until Ctrl-C (or SIGTERM).

It prints one SDK connection string per hub. ``kill -USR1 <pid>`` prints every thread's stack
on stderr and leaves it serving. ``kill -HUP <pid>`` re-reads ``--config`` and adds the
partitions whose ``PartitionCount`` grew there, as a Premium/Dedicated namespace can.
"""

from __future__ import annotations

import argparse
import errno
import faulthandler
import logging
import signal
import sys
import threading
from pathlib import Path

from pysparksources_emulator._config import EmulatorConfig, HubConfig, parse_hub_spec
from pysparksources_emulator._emulator import EventHubsEmulator
from pysparksources_emulator._jwt import JwtAuthority

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pysparksources-emulator",
        description="An Event Hubs-compatible AMQP 1.0 emulator for development and tests: "
        "serves hubs on 127.0.0.1 and prints one azure-eventhub connection string per hub. "
        "Ctrl-C or SIGTERM stops it; kill -USR1 <pid> prints every thread's stack on stderr; "
        "kill -HUP <pid> re-reads --config and adds partitions to hubs whose PartitionCount "
        "grew.",
        epilog="See the README of the pysparksources-emulator distribution.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    parser.add_argument("--port", type=int, default=5672, help="AMQP port; 0 picks one (5672)")
    parser.add_argument("--config", type=Path, help="Config.json in Microsoft's emulator shape")
    parser.add_argument("--data-dir", type=Path, help="keep events in segment files here")
    parser.add_argument(
        "--hub",
        action="append",
        default=[],
        type=_hub_spec,
        metavar="NAME:PARTITIONS[:GROUP,...]",
        help="serve a hub, with consumer groups besides $Default (repeatable); "
        "default eh1:2 when no --config",
    )
    parser.add_argument(
        "--consumer-group",
        action="append",
        default=[],
        type=_group_name,
        metavar="NAME",
        help="add a consumer group to every hub served (repeatable); every hub has $Default, "
        "and a receiver of any other group is refused with amqp:not-found, as Event Hubs does",
    )
    parser.add_argument(
        "--key", metavar="NAME=KEY", help="require SAS tokens signed with this policy key"
    )
    parser.add_argument(
        "--jwt-issuer",
        action="append",
        default=[],
        metavar="ISSUER",
        help="verify JWT (Entra ID) tokens: the issuer ('iss') to trust (repeatable); needs "
        "--jwt-jwks or --jwt-public-key",
    )
    keys = parser.add_mutually_exclusive_group()
    keys.add_argument("--jwt-jwks", type=Path, metavar="FILE", help="the issuer's JWKS (JSON)")
    keys.add_argument(
        "--jwt-public-key", type=Path, metavar="PEM", help="the issuer's RSA public key (PEM)"
    )
    parser.add_argument(
        "--jwt-audience",
        action="append",
        default=[],
        metavar="AUD",
        help="an accepted 'aud' (repeatable; default https://eventhubs.azure.net/ with and "
        "without the slash)",
    )
    return parser


def _hub_spec(text: str) -> HubConfig:
    try:
        return parse_hub_spec(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _group_name(text: str) -> str:
    if not text.strip() or "/" in text:
        raise argparse.ArgumentTypeError(f"invalid consumer group name {text!r}")
    return text.strip()


def config_from_args(args: argparse.Namespace) -> EmulatorConfig:
    config = EmulatorConfig.from_file(args.config) if args.config else EmulatorConfig()
    config.hubs.extend(args.hub)
    if not config.hubs:
        config.hubs.append(HubConfig("eh1", 2))
    config.add_consumer_groups(args.consumer_group)
    if args.data_dir is not None:
        config.data_dir = args.data_dir
    if args.key:
        name, _, key = args.key.partition("=")
        config.keys[name] = key
    if args.jwt_issuer or args.jwt_jwks or args.jwt_public_key:
        config.jwt = _jwt_authority(args)
    return config


def _jwt_authority(args: argparse.Namespace) -> JwtAuthority:
    if not args.jwt_issuer or not (args.jwt_jwks or args.jwt_public_key):
        raise SystemExit(
            "pysparksources-emulator: JWT auth needs --jwt-issuer and --jwt-jwks "
            "or --jwt-public-key"
        )
    extra = {"audiences": tuple(args.jwt_audience)} if args.jwt_audience else {}
    try:
        if args.jwt_jwks:
            return JwtAuthority.from_jwks(args.jwt_jwks, args.jwt_issuer, **extra)
        return JwtAuthority.from_pem(args.jwt_public_key, args.jwt_issuer, **extra)
    except (OSError, ValueError, KeyError) as error:
        raise SystemExit(f"pysparksources-emulator: cannot read the JWT keys: {error}") from None


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    config = config_from_args(args)
    try:
        emulator = EventHubsEmulator(config, host=args.host, port=args.port).start()
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            raise SystemExit(_port_in_use(args.host, args.port)) from None
        if error.errno == errno.EADDRNOTAVAIL:
            raise SystemExit(
                f"pysparksources-emulator: cannot listen on {args.host}: no such address on "
                "this machine (--host takes one of its addresses, e.g. 127.0.0.1)"
            ) from None
        raise
    stop = threading.Event()
    reload = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if hasattr(signal, "SIGHUP"):  # kill -HUP <pid>: grow hubs as --config now says
        signal.signal(signal.SIGHUP, lambda *_: reload.set())
    if hasattr(signal, "SIGUSR1"):  # kill -USR1 <pid>: every thread's stack on stderr
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    try:
        print(f"Event Hubs emulator on {emulator.endpoint} (Ctrl-C stops it)")
        print(f"storage: {config.data_dir or 'in memory'}")
        if config.jwt is not None:
            print(f"JWT tokens verified: issuer {', '.join(config.jwt.issuers)}")
        for hub in config.hubs:
            groups = ", ".join(hub.consumer_groups)
            print(f"  hub {hub.name}: {hub.partition_count} partitions; groups {groups}")
            print(f"    {emulator.connection_string(hub.name)}")
        sys.stdout.flush()
        while not stop.wait(0.2):
            if reload.is_set():
                reload.clear()
                grow_from_config(args.config, emulator)
    except KeyboardInterrupt:
        pass
    finally:
        emulator.stop()
    return 0


def _port_in_use(host: str, port: int) -> str:
    """The one line a busy port ends in, with the fix, instead of the bind's traceback."""
    return (
        f"pysparksources-emulator: {host}:{port} is already in use (another emulator, or "
        f"another AMQP server, is listening there): stop it, or start this one on another "
        f"port with --port {port + 1 if 0 < port < 65535 else 5673} (or --port 0 to pick a "
        "free one, printed in the connection strings)"
    )


def grow_from_config(path: Path | None, emulator: EventHubsEmulator) -> None:
    """Add the partitions ``path`` now asks for beyond what each served hub has; a count
    that would shrink, or a file that does not parse, is reported and changes nothing."""
    if path is None:
        print("SIGHUP ignored: the emulator was not started with --config", file=sys.stderr)
        return
    try:
        wanted = EmulatorConfig.from_file(path).hubs
    except (OSError, ValueError, KeyError) as error:
        print(f"SIGHUP: cannot read {path}: {error}", file=sys.stderr)
        return
    for hub in wanted:
        served = emulator.config.hub(hub.name)
        if served is None or hub.partition_count == served.partition_count:
            continue
        try:
            count = emulator.add_partitions(hub.name, hub.partition_count)
        except ValueError as error:
            print(f"SIGHUP: {error}", file=sys.stderr)
            continue
        print(f"  hub {hub.name}: now {count} partitions")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    return run(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
