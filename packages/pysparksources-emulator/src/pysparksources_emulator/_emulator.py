"""``EventHubsEmulator``: the server on a background thread, with a synchronous API for tests.

>>> with EventHubsEmulator.for_hubs({"orders": 4}) as emulator:   # doctest: +SKIP
...     conn = emulator.connection_string("orders")
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

from pysparksources_emulator._config import EmulatorConfig, HubConfig
from pysparksources_emulator._faults import Fault, FaultInjector
from pysparksources_emulator._server import EmulatorServer

__all__ = ["EventHubsEmulator"]

T = TypeVar("T")

DEFAULT_KEY_NAME = "RootManageSharedAccessKey"
DEFAULT_KEY = "SAS_KEY_VALUE"


class EventHubsEmulator:
    """Run an :class:`EmulatorServer` on its own event loop thread.

    Parameters
    ----------
    config:
        Hubs, keys, storage; see :class:`EmulatorConfig`.
    host:
        Only loopback makes sense for a test tool; the default is 127.0.0.1.
    port:
        0 picks a free port; read it back from :attr:`port`.
    """

    def __init__(self, config: EmulatorConfig, host: str = "127.0.0.1", port: int = 0) -> None:
        self.config = config
        self.host = host
        self.faults = FaultInjector()
        self._requested_port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: EmulatorServer | None = None

    @classmethod
    def for_hubs(cls, hubs: dict[str, int], **config: Any) -> EventHubsEmulator:
        """Shortcut: ``{"hub": partition_count}``; extra keywords go to EmulatorConfig."""
        return cls(EmulatorConfig(hubs=[HubConfig(n, c) for n, c in hubs.items()], **config))

    # -- life cycle ------------------------------------------------------------------------

    def start(self) -> EventHubsEmulator:
        if self._thread is not None:
            return self
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._run, args=(ready,), name="eventhubs-emulator", daemon=True
        )
        self._thread.start()
        ready.result(timeout=30)
        return self

    def _run(self, ready: concurrent.futures.Future[None]) -> None:
        loop = self._loop
        assert loop is not None
        asyncio.set_event_loop(loop)
        try:
            server = EmulatorServer(self.config, self.host, self._requested_port, self.faults)
            loop.run_until_complete(server.start())
            self._server = server
        except BaseException as exc:
            ready.set_exception(exc)
            loop.close()
            return
        ready.set_result(None)
        try:
            loop.run_forever()
        finally:
            loop.close()

    def stop(self) -> None:
        """Stop the server, close every client connection, flush and close the files."""
        loop, thread, server = self._loop, self._thread, self._server
        if loop is None or thread is None:
            return
        if server is not None:
            asyncio.run_coroutine_threadsafe(server.stop(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        self._loop = self._thread = self._server = None

    def __enter__(self) -> EventHubsEmulator:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- what clients need ---------------------------------------------------------------

    @property
    def server(self) -> EmulatorServer:
        if self._server is None:
            raise RuntimeError("the emulator is not running")
        return self._server

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def endpoint(self) -> str:
        return f"{self.host}:{self.port}"

    def connection_string(
        self, hub: str | None = None, key_name: str | None = None, key: str | None = None
    ) -> str:
        """An SDK connection string; the configured key is used unless one is given."""
        if key_name is None or key is None:
            if self.config.keys:
                key_name, key = next(iter(self.config.keys.items()))
            else:
                key_name, key = DEFAULT_KEY_NAME, DEFAULT_KEY
        parts = [
            f"Endpoint=sb://{self.host}:{self.port}",
            f"SharedAccessKeyName={key_name}",
            f"SharedAccessKey={key}",
        ]
        if hub is not None:
            parts.append(f"EntityPath={hub}")
        parts.append("UseDevelopmentEmulator=true")
        return ";".join(parts)

    # -- test hooks ----------------------------------------------------------------------

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the server's loop thread and return its result."""
        loop = self._loop
        if loop is None:
            raise RuntimeError("the emulator is not running")

        async def run() -> T:
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), loop).result(timeout=30)

    def add_fault(self, fault: Fault | None = None, **kwargs: Any) -> Fault:
        """Install a fault (a :class:`Fault` or its keyword arguments); see ``_faults``."""
        return self.faults.add(fault if fault is not None else Fault(**kwargs))

    def clear_faults(self) -> None:
        self.faults.clear()

    def apply_retention(self) -> int:
        """Run the retention check now (it also runs every ``retention_check_interval``)."""
        return self.call(self.server.retain)

    def add_partitions(self, hub: str, partition_count: int) -> int:
        """Grow ``hub`` to ``partition_count`` partitions while it serves, as Premium and
        Dedicated namespaces allow (Standard cannot); returns the new count.

        New partitions start empty at sequence number 0; existing ones keep their events and
        links. Sends by partition key (and round-robin sends) spread over the new count from
        the next send, so a key may land on another partition than before. ``ValueError``
        when the count would shrink or pass 1024.
        """
        return self.call(
            lambda: len(self.server.broker.add_partitions(hub, partition_count).partitions)
        )

    def partition_info(self, hub: str, partition: int) -> dict[str, Any]:
        """Begin/last sequence numbers of one partition, read on the loop thread."""

        def read() -> dict[str, Any]:
            log = self.server.broker.hub(hub).partitions[partition]
            return {
                "begin_sequence_number": log.begin_sequence_number,
                "last_sequence_number": log.last_sequence_number,
                "retained": len(log.events),
                "last_offset": log.last_offset,
            }

        return self.call(read)

    def connection_count(self) -> int:
        return self.call(lambda: len(self.server.connections))

    def token_counts(self) -> dict[str, Any]:
        """put-tokens answered so far, by outcome and token type, and the links detached
        because their token lapsed: ``{"accepted": {"jwt": 12, "renewed": 4}, "refused":
        {"jwt": 1}, "links_expired": 0}`` (``renewed``: the accepted tokens that renewed an
        audience their connection already held)."""
        return self.call(
            lambda: {
                "accepted": dict(self.server.accepted_tokens),
                "refused": dict(self.server.refused_tokens),
                "links_expired": self.server.links_expired,
            }
        )
