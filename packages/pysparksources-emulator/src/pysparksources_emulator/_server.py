"""The asyncio server: accepts connections, attaches links, answers CBS and management.

``EmulatorServer`` runs inside an event loop; :mod:`._emulator` wraps it in a background thread
for tests and the command line.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from typing import Any

from pysparksources_emulator._amqp.performatives import (
    AmqpError,
    Attach,
    Detach,
)
from pysparksources_emulator._amqp.types import Array, Int, Symbol, UInt, ULong
from pysparksources_emulator._broker import Broker, EntityError, parse_entity
from pysparksources_emulator._cbs import audience_path, verify_token
from pysparksources_emulator._config import EmulatorConfig
from pysparksources_emulator._connection import Connection, Session
from pysparksources_emulator._faults import DISRUPTIVE, FaultInjector
from pysparksources_emulator._links import (
    ConsumerLink,
    Link,
    ProducerLink,
    ReplyLink,
    RequestLink,
    parse_start,
)
from pysparksources_emulator._management import handle_management

__all__ = ["EmulatorServer"]

_LOG = logging.getLogger(__name__)

RUNTIME_METRIC = "com.microsoft:enable-receiver-runtime-metric"
EPOCH = "com.microsoft:epoch"


def _symbols(value: Any) -> set[str]:
    if value is None:
        return set()
    if isinstance(value, Array):
        return {str(v) for v in value.items}
    if isinstance(value, (list, tuple)):
        return {str(v) for v in value}
    return {str(value)}


class EmulatorServer:
    """One listening socket on ``host:port`` serving the hubs of ``config``."""

    def __init__(
        self,
        config: EmulatorConfig,
        host: str = "127.0.0.1",
        port: int = 0,
        faults: FaultInjector | None = None,
    ) -> None:
        self.config = config
        self.host = host
        self.requested_port = port
        self.faults = faults if faults is not None else FaultInjector()
        self.clock = config.clock
        self.broker = Broker(config, host)
        self.connections: set[Connection] = set()
        # put-token answers by token type ("jwt", "servicebus.windows.net:sastoken"), and
        # "renewed": accepted tokens for an audience the connection already held; for tests
        self.accepted_tokens: Counter[str] = Counter()
        self.refused_tokens: Counter[str] = Counter()
        self.links_expired = 0  # links detached because their token lapsed unrenewed
        self.created_ms = int(self.clock() * 1000)
        self._server: asyncio.base_events.Server | None = None
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return int(self._server.sockets[0].getsockname()[1])

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            lambda: Connection(self), self.host, self.requested_port, reuse_address=True
        )
        self._tasks = [
            loop.create_task(self._every(self.config.fsync_interval, self.broker.sync)),
            loop.create_task(self._every(self.config.retention_check_interval, self.retain)),
            loop.create_task(self._every(0.05, self._timed_faults)),
        ]
        if self.config.jwt is not None:
            self._tasks.append(loop.create_task(self._every(0.5, self.expire_grants)))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._server is not None:
            self._server.close()
        for conn in list(self.connections):
            conn.abort()
        if self._server is not None:
            await self._server.wait_closed()
        self.broker.sync()
        self.broker.close()

    async def _every(self, seconds: float, action: Any) -> None:
        while True:
            await asyncio.sleep(seconds)
            try:
                action()
            except Exception:  # a background chore must never stop the server
                _LOG.exception("background task failed")

    def retain(self) -> int:
        return self.broker.apply_retention(int(self.clock() * 1000))

    def _timed_faults(self) -> None:
        if not self.faults:
            return
        for conn in list(self.connections):
            for session in list(conn.sessions.values()):
                for link in list(session.links.values()):
                    if (
                        isinstance(link, Link)
                        and link.alive
                        and not conn.closed
                        and self.faults.peek(link.info, DISRUPTIVE)
                        and link.fire_due_fault()
                    ):
                        return

    # -- auth --------------------------------------------------------------------------

    def check_sasl(self, mechanism: str, response: bytes | None) -> bool:
        if mechanism == "ANONYMOUS":
            return True
        if mechanism != "PLAIN":
            return False
        if not self.config.keys:
            return True
        parts = (response or b"").split(b"\x00")
        if len(parts) != 3:
            return False
        user, password = parts[1].decode(errors="replace"), parts[2].decode(errors="replace")
        return self.config.keys.get(user) == password

    def authorized(self, conn: Connection, path: str) -> bool:
        if not self.config.keys and self.config.jwt is None:
            return True
        path = path.lower()
        now = self.clock()
        return any(
            (not g or path == g or path.startswith(g + "/")) and (end is None or now < end)
            for g, end in conn.grants.items()
        )

    def expire_grants(self) -> None:
        """Detach the links whose authorization expired unrenewed, as Event Hubs does when a
        client lets its token lapse (``amqp:unauthorized-access``)."""
        for conn in list(self.connections):
            if conn.closed:
                continue
            for session in list(conn.sessions.values()):
                for link in list(session.links.values()):
                    if not isinstance(link, (ProducerLink, ConsumerLink)) or not link.alive:
                        continue
                    path = link.info.hub or ""
                    if isinstance(link, ConsumerLink):
                        path += f"/consumergroups/{link.group}/partitions/{link.partition}"
                    elif link.partition is not None:
                        path += f"/partitions/{link.partition}"
                    if not self.authorized(conn, path):
                        self.links_expired += 1
                        link.detach(
                            "amqp:unauthorized-access",
                            "ExpiredToken: the token authorizing this link has expired and "
                            "was not renewed.",
                        )

    def handle_cbs(
        self, conn: Connection, app: dict[Any, Any], token: Any
    ) -> tuple[dict[Any, Any], Any, str | None]:
        audience = str(app.get("name", ""))
        hub = audience_path(audience).split("/", 1)[0] or None
        if str(app.get("operation", "")) != "put-token":
            status = {"status-code": Int(400), "status-description": "Unsupported operation."}
            return status, None, hub
        check = verify_token(
            token,
            str(app.get("type", "")),
            audience,
            self.config.keys,
            self.clock(),
            self.config.jwt,
        )
        if 200 <= check.status < 300:
            # Only a verified JWT's expiry is enforced on open links; SAS grants stay as before.
            verified_jwt = self.config.jwt is not None and str(app.get("type", "")) == "jwt"
            if check.path in conn.grants:  # a client renewing the token of an open connection
                self.accepted_tokens["renewed"] += 1
            conn.grants[check.path] = check.expires_at if verified_jwt else None
            self.accepted_tokens[str(app.get("type", ""))] += 1
        else:
            self.refused_tokens[str(app.get("type", ""))] += 1
        status = {"status-code": Int(check.status), "status-description": check.description}
        return status, None, hub

    def handle_management(
        self, conn: Connection, app: dict[Any, Any]
    ) -> tuple[dict[Any, Any], Any, str | None]:
        hub = str(app.get("name", ""))
        if not self.authorized(conn, hub):
            reason = "Unauthorized access. 'Manage' or 'Listen' claim(s) are required."
            status = {
                "status-code": Int(401),
                "status-description": reason,
                "statusDescription": reason,
            }
            return status, None, hub
        status, body = handle_management(self.broker, app, self.created_ms)
        return status, body, hub

    def send_reply(self, conn: Connection, node: str, payload: bytes) -> None:
        for session in conn.sessions.values():
            for link in session.links.values():
                if isinstance(link, ReplyLink) and link.node == node and link.alive:
                    link.push(payload)
                    return
        _LOG.warning("no reply link for %s on connection %s", node, conn.container_id)

    # -- links -------------------------------------------------------------------------

    def attach_link(self, conn: Connection, session: Session, attach: Attach) -> None:
        client_sends = not attach.role
        terminus = attach.target if client_sends else attach.source
        address = str(getattr(terminus, "address", "") or "")
        node = address.split("/")[-1] if address.endswith(("$cbs", "$management")) else ""
        error: EntityError | None = None
        link: Link
        max_size = 1024 * 1024
        offered = None
        try:
            if node:
                link = (
                    RequestLink(self, conn, session, attach, node)
                    if client_sends
                    else ReplyLink(self, conn, session, attach, node)
                )
            elif client_sends:
                hub, partition = self.broker.resolve_sender(address)
                max_size = hub.config.max_message_size
                link = ProducerLink(self, conn, session, attach, hub, partition)
                self._require(conn, parse_entity(address), "Send")
            else:
                hub, group, partition = self.broker.resolve_receiver(address)
                metrics = RUNTIME_METRIC in _symbols(attach.desired_capabilities)
                if metrics:
                    offered = Array(0xB3, (Symbol(RUNTIME_METRIC),))
                link = ConsumerLink(
                    self, conn, session, attach, hub, group, partition, metrics=metrics
                )
                self._require(conn, parse_entity(address), "Listen")
        except EntityError as exc:
            error = exc
            link = Link(self, conn, session, attach)
        session.links[link.handle] = link
        reply = Attach(
            name=attach.name,
            handle=UInt(link.handle),
            role=not attach.role,
            snd_settle_mode=attach.snd_settle_mode,
            rcv_settle_mode=attach.rcv_settle_mode,
            source=attach.source,
            target=attach.target,
            initial_delivery_count=None if client_sends else UInt(0),
            max_message_size=ULong(max_size),
            offered_capabilities=offered,
            properties=attach.properties if isinstance(link, ConsumerLink) else None,
        )
        if error is None and isinstance(link, ConsumerLink):
            error = self._admit_consumer(link, attach)
        delay_fault = self.faults.take(link.info, {"delay"}) if self.faults else None
        if delay_fault is not None:
            loop = asyncio.get_running_loop()
            loop.call_later(
                delay_fault.delay, self._finish_attach, conn, session, link, reply, error
            )
        else:
            self._finish_attach(conn, session, link, reply, error)

    def _finish_attach(
        self,
        conn: Connection,
        session: Session,
        link: Link,
        reply: Attach,
        error: EntityError | None,
    ) -> None:
        if conn.closed:
            return
        conn.send(session.channel, reply)
        if error is not None:
            link.detach_sent = True
            link.alive = False
            failure = AmqpError(Symbol(error.condition), error.description)
            conn.send(session.channel, Detach(UInt(link.handle), True, failure))
            return
        if isinstance(link, (ProducerLink, RequestLink)):
            link.grant_credit()
        if self.faults and not isinstance(link, (RequestLink, ReplyLink)):
            link.fire_due_fault()

    def _require(self, conn: Connection, entity: Any, claim: str) -> None:
        path = entity.hub
        if entity.consumer_group is not None:
            path += f"/consumergroups/{entity.consumer_group}"
        if entity.partition is not None:
            path += f"/partitions/{entity.partition}"
        if not self.authorized(conn, path):
            raise EntityError(
                "amqp:unauthorized-access",
                f"Unauthorized access. '{claim}' claim(s) are required to perform this operation.",
            )

    def _admit_consumer(self, link: ConsumerLink, attach: Attach) -> EntityError | None:
        properties = attach.properties or {}
        epoch = properties.get(Symbol(EPOCH))
        if epoch is None:
            epoch = properties.get(EPOCH)
        key = (link.hub.name.lower(), link.group.lower(), link.partition)
        try:
            position = parse_start(getattr(attach.source, "filter", None))
            self.broker.add_reader(key, link, None if epoch is None else int(epoch), link.name)
            try:
                link.start(position)
            except EntityError:
                self.broker.remove_reader(key, link)
                raise
        except EntityError as exc:
            return exc
        return None
