"""One client TCP connection: protocol headers, SASL, sessions and frame dispatch.

The link behaviours (producer, consumer, CBS, management) live in ``_links.py`` and the server
in ``_server.py``; this module only moves frames and knows them through the two small protocols
below (:class:`LinkEndpoint`, :class:`ConnectionHost`), so it imports neither. It is an
``asyncio.Protocol`` rather than a stream pair because parsing straight from ``data_received``
is markedly cheaper in Python.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

from pysparksources_emulator._amqp.framing import (
    AMQP_HEADER,
    FRAME_SASL,
    SASL_HEADER,
    FrameError,
    build_frame,
    read_frame,
)
from pysparksources_emulator._amqp.performatives import (
    AmqpError,
    Attach,
    Begin,
    Close,
    Detach,
    Disposition,
    End,
    Flow,
    Open,
    Performative,
    SaslInit,
    SaslMechanisms,
    SaslOutcome,
    Transfer,
    decode_performative,
)
from pysparksources_emulator._amqp.types import (
    Array,
    DecodeError,
    Symbol,
    UByte,
    UInt,
    UShort,
)

__all__ = ["Connection", "ConnectionHost", "LinkEndpoint", "Session"]

_LOG = logging.getLogger(__name__)

SESSION_WINDOW = 65536
MAX_FRAME_SIZE = 1024 * 1024


class LinkEndpoint(Protocol):
    """What a connection asks of the link a frame is for (every link of ``_links``)."""

    detach_sent: bool

    def on_transfer(self, frame: Transfer, payload: memoryview) -> None: ...

    def on_flow(self, frame: Flow) -> None: ...

    def on_detached(self) -> None: ...

    def wake(self) -> None: ...


class ConnectionHost(Protocol):
    """What a connection asks of the server that accepted it (``_server.EmulatorServer``)."""

    connections: set[Connection]

    def check_sasl(self, mechanism: str, response: bytes | None) -> bool: ...

    def attach_link(self, conn: Connection, session: Session, attach: Attach) -> None: ...


@dataclass
class Session:
    """Our half of a session; our channel and handles mirror the client's numbers."""

    channel: int
    next_incoming_id: int
    next_outgoing_id: int = 0
    next_delivery_id: int = 0
    incoming_window: int = SESSION_WINDOW
    links: dict[int, LinkEndpoint] = field(default_factory=dict)
    ended: bool = False


class Connection(asyncio.Protocol):
    """The server side of one AMQP connection."""

    def __init__(self, server: ConnectionHost) -> None:
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.phase = "header"  # header -> sasl -> header -> amqp
        self.sasl_done = False
        self.sessions: dict[int, Session] = {}
        self.remote_max_frame = 512
        self.closed = False
        self.close_sent = False
        self.paused = False
        # Audience path of each accepted CBS token -> when it expires (None: never; SAS).
        self.grants: dict[str, float | None] = {}
        self.container_id = ""
        self._heartbeat: asyncio.TimerHandle | None = None
        self._heartbeat_interval = 0.0

    # -- asyncio.Protocol ----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.server.connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._heartbeat is not None:
            self._heartbeat.cancel()
        for session in self.sessions.values():
            self._drop_links(session)
        self.sessions.clear()
        self.server.connections.discard(self)

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        for session in list(self.sessions.values()):
            for link in list(session.links.values()):
                link.wake()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        try:
            self._process()
        except (FrameError, DecodeError, ValueError, TypeError) as exc:
            _LOG.warning("closing connection after a protocol error: %s", exc)
            self.close(AmqpError(Symbol("amqp:decode-error"), str(exc)))

    # -- parsing -------------------------------------------------------------------------

    def _process(self) -> None:
        while not self.closed:
            if self.phase == "header":
                if len(self.buffer) < 8:
                    return
                header = bytes(self.buffer[:8])
                del self.buffer[:8]
                self._on_header(header)
                continue
            frame, used = read_frame(self.buffer, MAX_FRAME_SIZE)
            if frame is None:
                return
            del self.buffer[:used]
            if len(frame.body) == 0:
                continue  # heartbeat
            performative, payload_start = decode_performative(frame.body)
            if self.phase == "sasl":
                self._on_sasl(performative)
            else:
                self._on_frame(frame.channel, performative, frame.body[payload_start:])

    def _on_header(self, header: bytes) -> None:
        if header == SASL_HEADER and not self.sasl_done:
            self.write(SASL_HEADER)
            mechanisms = Array(0xB3, (Symbol("ANONYMOUS"), Symbol("PLAIN")))
            self.send_sasl(SaslMechanisms(mechanisms))
            self.phase = "sasl"
        elif header == AMQP_HEADER:
            self.write(AMQP_HEADER)
            self.phase = "amqp"
        else:
            # Unsupported protocol (TLS included): answer with our header and hang up.
            self.write(SASL_HEADER if not self.sasl_done else AMQP_HEADER)
            self.abort()

    def _on_sasl(self, frame: Any) -> None:
        if not isinstance(frame, SaslInit):
            self.abort()
            return
        ok = self.server.check_sasl(str(frame.mechanism), frame.initial_response)
        self.send_sasl(SaslOutcome(UByte(0 if ok else 1)))
        self.sasl_done = True
        self.phase = "header" if ok else "failed"
        if not ok:
            self.close_transport_soon()

    def _on_frame(self, channel: int, frame: Any, payload: memoryview) -> None:
        if isinstance(frame, Open):
            self._on_open(frame)
            return
        if isinstance(frame, Close):
            if not self.close_sent:
                self.send(0, Close())
            self.close_transport_soon(0.0)
            self.closed = True
            return
        if isinstance(frame, Begin):
            self._on_begin(channel, frame)
            return
        session = self.sessions.get(channel)
        if session is None or session.ended:
            return  # the SDK sends detaches after end when it closes: ignore them
        if isinstance(frame, Transfer):
            session.next_incoming_id += 1
            session.incoming_window -= 1
            link = session.links.get(int(frame.handle))
            if link is not None:
                link.on_transfer(frame, payload)
            if session.incoming_window < SESSION_WINDOW // 2:
                session.incoming_window = SESSION_WINDOW
                self.send_session_flow(session)
        elif isinstance(frame, Flow):
            if frame.handle is None:
                if frame.echo:
                    self.send_session_flow(session)
                return
            link = session.links.get(int(frame.handle))
            if link is not None:
                link.on_flow(frame)
        elif isinstance(frame, Attach):
            self.server.attach_link(self, session, frame)
        elif isinstance(frame, Detach):
            link = session.links.pop(int(frame.handle), None)
            if link is not None:
                link.on_detached()
                if not link.detach_sent:
                    self.send(session.channel, Detach(UInt(int(frame.handle)), True, None))
        elif isinstance(frame, End):
            session.ended = True
            self._drop_links(session)
            self.sessions.pop(channel, None)
            self.send(session.channel, End())
        elif isinstance(frame, Disposition):
            pass  # our deliveries are pre-settled; nothing to track

    def _on_open(self, frame: Open) -> None:
        self.container_id = frame.container_id or ""
        self.remote_max_frame = int(frame.max_frame_size or 4294967295)
        self.send(
            0,
            Open(
                container_id="pysparksources-eventhubs-emulator",
                hostname=frame.hostname,
                max_frame_size=UInt(MAX_FRAME_SIZE),
                channel_max=UShort(65535),
                idle_time_out=None,
            ),
        )
        if frame.idle_time_out:
            self._heartbeat_interval = int(frame.idle_time_out) / 2000.0
            self._schedule_heartbeat()

    def _schedule_heartbeat(self) -> None:
        loop = asyncio.get_running_loop()
        self._heartbeat = loop.call_later(self._heartbeat_interval, self._beat)

    def _beat(self) -> None:
        if self.closed:
            return
        self.write(build_frame(0, b""))
        self._schedule_heartbeat()

    def _on_begin(self, channel: int, frame: Begin) -> None:
        session = Session(channel, next_incoming_id=int(frame.next_outgoing_id))
        self.sessions[channel] = session
        self.send(
            channel,
            Begin(
                remote_channel=UShort(channel),
                next_outgoing_id=UInt(0),
                incoming_window=UInt(SESSION_WINDOW),
                outgoing_window=UInt(SESSION_WINDOW),
                handle_max=UInt(4294967295),
            ),
        )

    def _drop_links(self, session: Session) -> None:
        for link in list(session.links.values()):
            link.on_detached()
        session.links.clear()

    # -- writing -------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def send(self, channel: int, performative: Performative, payload: bytes = b"") -> None:
        self.write(build_frame(channel, performative.encode() + payload))

    def send_sasl(self, performative: Performative) -> None:
        self.write(build_frame(0, performative.encode(), FRAME_SASL))

    def send_session_flow(self, session: Session) -> None:
        self.send(session.channel, self.session_flow(session))

    def session_flow(self, session: Session, **link_fields: Any) -> Flow:
        return Flow(
            next_incoming_id=UInt(session.next_incoming_id & 0xFFFFFFFF),
            incoming_window=UInt(session.incoming_window),
            next_outgoing_id=UInt(session.next_outgoing_id & 0xFFFFFFFF),
            outgoing_window=UInt(SESSION_WINDOW),
            **link_fields,
        )

    # -- ending it -----------------------------------------------------------------------

    def close(self, error: AmqpError | None = None) -> None:
        """Send close (with an error condition for faults) and drop the socket shortly after."""
        if self.closed or self.close_sent:
            return
        self.close_sent = True
        self.send(0, Close(error))
        self.close_transport_soon()

    def close_transport_soon(self, delay: float = 0.5) -> None:
        transport = self.transport
        if transport is None:
            return
        asyncio.get_running_loop().call_later(delay, transport.close)

    def abort(self) -> None:
        """Drop TCP at once, as a crashed broker or a network fault would."""
        self.closed = True
        if self.transport is not None:
            self.transport.abort()
