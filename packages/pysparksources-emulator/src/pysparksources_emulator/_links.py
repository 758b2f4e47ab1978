"""Link behaviours: producers, consumers, and the CBS / management request-reply nodes.

Our handle numbers mirror the client's, and every link keeps a :class:`LinkInfo` so faults can
match it. A link writes through its :class:`Connection` and asks the server for the rest
through :class:`LinkHost` (``_server.EmulatorServer`` is one), so this module never imports
the server. Receiving links (client -> emulator) reassemble multi-frame deliveries and grant
credit generously; sending links (emulator -> client) respect the client's link credit.
"""

from __future__ import annotations

import asyncio
import re
import struct
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from pysparksources_emulator._amqp.framing import build_frame
from pysparksources_emulator._amqp.message import (
    BATCH_FORMAT,
    DELIVERY_ANNOTATIONS,
    IncomingMessage,
    build_message,
    encode_annotations,
    parse_message,
)
from pysparksources_emulator._amqp.performatives import (
    Accepted,
    AmqpError,
    Attach,
    Detach,
    Disposition,
    Flow,
    Rejected,
    Transfer,
    encode_transfer_fast,
)
from pysparksources_emulator._amqp.types import (
    Symbol,
    Timestamp,
    UInt,
    encode,
)
from pysparksources_emulator._broker import Broker, EntityError, Hub
from pysparksources_emulator._faults import DISRUPTIVE, FaultInjector, LinkInfo, LinkKind
from pysparksources_emulator._storage import PartitionLog, StoredEvent

if TYPE_CHECKING:
    from pysparksources_emulator._connection import Connection, Session

__all__ = [
    "ConsumerLink",
    "Link",
    "LinkHost",
    "ProducerLink",
    "ReplyLink",
    "RequestLink",
    "StartPosition",
    "parse_start",
]

PRODUCER_CREDIT = 1000
# How often a stalled receiver link looks whether its stall is over: deliveries resume within
# this of the end of a ``stall`` fault.
_STALL_POLL_S = 0.1
_tag = struct.Struct(">I").pack

_SEQ_KEY = encode(Symbol("x-opt-sequence-number"))
_OFFSET_KEY = encode(Symbol("x-opt-offset"))
_TIME_KEY = encode(Symbol("x-opt-enqueued-time"))
_PKEY_KEY = encode(Symbol("x-opt-partition-key"))
_SYSTEM_KEYS = {"x-opt-sequence-number", "x-opt-offset", "x-opt-enqueued-time"}


class LinkHost(Protocol):
    """What links ask of the server: its faults, clock and broker, and the CBS and management
    answers (``_server.EmulatorServer``)."""

    faults: FaultInjector
    broker: Broker
    clock: Callable[[], float]

    def handle_cbs(
        self, conn: Connection, app: dict[Any, Any], token: Any
    ) -> tuple[dict[Any, Any], Any, str | None]: ...

    def handle_management(
        self, conn: Connection, app: dict[Any, Any]
    ) -> tuple[dict[Any, Any], Any, str | None]: ...

    def send_reply(self, conn: Connection, node: str, payload: bytes) -> None: ...


class Link:
    """What every link shares: identity, fault matching, detaching."""

    kind: LinkKind = "sender"

    def __init__(self, host: LinkHost, conn: Connection, session: Session, attach: Attach) -> None:
        self.host = host
        self.conn = conn
        self.session = session
        self.name = attach.name
        self.handle = int(attach.handle)
        self.info = LinkInfo(self.kind)
        self.detach_sent = False
        self.alive = True

    @property
    def server_faults(self) -> FaultInjector:
        return self.host.faults

    def on_transfer(self, frame: Transfer, payload: memoryview) -> None:
        """Clients only transfer on links where they are the sender; ignore anything else."""

    def on_flow(self, frame: Flow) -> None:
        """Credit for a sending link; nothing to do for receiving links."""

    def on_detached(self) -> None:
        self.alive = False

    def wake(self) -> None:
        """Writing may resume (transport drained or credit arrived)."""

    def detach(self, condition: str, description: str) -> None:
        """Detach with an error, as the service does when it drops a link."""
        if self.detach_sent or not self.alive:
            return
        self.detach_sent = True
        self.on_detached()
        error = AmqpError(Symbol(condition), description)
        self.conn.send(self.session.channel, Detach(UInt(self.handle), True, error))

    def evict(self, condition: str, description: str) -> None:
        self.detach(condition, description)

    def fire_due_fault(self, info: LinkInfo | None = None) -> bool:
        """Apply a due detach/close/abort fault to this link; True if one fired."""
        fault = self.server_faults.take(info or self.info, DISRUPTIVE)
        if fault is None:
            return False
        if fault.action == "detach":
            self.detach(fault.condition, fault.description)
        elif fault.action == "close":
            self.conn.close(AmqpError(Symbol(fault.condition), fault.description))
        else:
            self.conn.abort()
        return True


# -- links the client sends on -------------------------------------------------------------


class ReceivingLink(Link):
    """A link on which we receive: reassembles deliveries, grants credit, settles."""

    def __init__(self, host: LinkHost, conn: Connection, session: Session, attach: Attach) -> None:
        super().__init__(host, conn, session, attach)
        self.delivery_count = int(attach.initial_delivery_count or 0)
        self.credit = 0
        self._partial = bytearray()
        self._first: Transfer | None = None

    def grant_credit(self) -> None:
        self.credit = PRODUCER_CREDIT
        flow = self.conn.session_flow(
            self.session,
            handle=UInt(self.handle),
            delivery_count=UInt(self.delivery_count & 0xFFFFFFFF),
            link_credit=UInt(self.credit),
        )
        self.conn.send(self.session.channel, flow)

    def on_transfer(self, frame: Transfer, payload: memoryview) -> None:
        if self._first is None:
            self._first = frame
        if frame.aborted:
            self._partial.clear()
            self._first = None
            return
        if frame.more:
            self._partial += payload
            return
        first = self._first
        self._first = None
        if self._partial:
            self._partial += payload
            message = bytes(self._partial)
            self._partial.clear()
        else:
            message = bytes(payload)
        self.delivery_count += 1
        self.credit -= 1
        if self.credit < PRODUCER_CREDIT // 2 and self.alive:
            self.grant_credit()
        self.on_message(first, message)

    def on_message(self, first: Transfer, payload: bytes) -> None:
        raise NotImplementedError

    def settle(self, first: Transfer, state: Any, delay: float = 0.0) -> None:
        if first.settled or first.delivery_id is None:
            return
        frame = Disposition(
            role=True, first=UInt(int(first.delivery_id)), settled=True, state=state
        )
        if delay > 0:
            loop = asyncio.get_running_loop()
            loop.call_later(delay, self.conn.send, self.session.channel, frame)
        else:
            self.conn.send(self.session.channel, frame)


class ProducerLink(ReceivingLink):
    """Events sent to ``<hub>`` or ``<hub>/Partitions/<n>``."""

    kind: LinkKind = "sender"

    def __init__(
        self,
        host: LinkHost,
        conn: Connection,
        session: Session,
        attach: Attach,
        hub: Hub,
        partition: int | None,
    ) -> None:
        super().__init__(host, conn, session, attach)
        self.hub = hub
        self.partition = partition
        self.info = LinkInfo("sender", hub.name, partition)

    def on_message(self, first: Transfer, payload: bytes) -> None:
        if not self.alive:
            return
        if len(payload) > self.hub.config.max_message_size:
            error = AmqpError(
                Symbol("amqp:link:message-size-exceeded"),
                f"The received message (size {len(payload)} bytes) exceeds the limit "
                f"({self.hub.config.max_message_size} bytes) currently allowed on the link.",
            )
            self.settle(first, Rejected(error))
            return
        outer = parse_message(payload)
        if first.message_format is not None and int(first.message_format) == BATCH_FORMAT:
            events = [parse_message(section) for section in outer.data_sections]
        else:
            events = [outer]
        key = outer.annotation("x-opt-partition-key")
        if key is None and events:
            key = events[0].annotation("x-opt-partition-key")
        partition = self.partition if self.partition is not None else self.hub.route(key)
        info = LinkInfo("sender", self.hub.name, partition)
        faults = self.server_faults
        rejection = faults.take(info, {"reject"}) if faults else None
        if rejection is not None:
            error = AmqpError(Symbol(rejection.condition), rejection.description)
            self.settle(first, Rejected(error))
            return
        log = self.hub.partitions[partition]
        now_ms = int(self.host.clock() * 1000)
        for event in events:
            _append(log, event, now_ms, key)
        log.notify()
        delay_fault = faults.take(info, {"delay"}) if faults else None
        self.settle(first, Accepted(), delay_fault.delay if delay_fault else 0.0)
        if faults:
            faults.count_events(info, len(events))
            self.fire_due_fault(info)


def _append(log: PartitionLog, event: IncomingMessage, now_ms: int, key: Any) -> StoredEvent:
    user_pairs = [raw for name, raw in event.annotations if str(name) not in _SYSTEM_KEYS]
    has_key = any(str(name) == "x-opt-partition-key" for name, _ in event.annotations)
    rest = event.rest

    def render(seq: int, offset: int, enqueued_ms: int) -> bytes:
        pairs = [
            *user_pairs,
            _SEQ_KEY + encode(seq),
            _OFFSET_KEY + encode(str(offset)),
            _TIME_KEY + encode(Timestamp(enqueued_ms)),
        ]
        if key is not None and not has_key:
            pairs.append(_PKEY_KEY + encode(key))
        return encode_annotations(pairs) + rest

    return log.append(now_ms, event.header, render)


class RequestLink(ReceivingLink):
    """The client's sending half of ``$cbs`` or ``$management``; replies go to a ReplyLink."""

    def __init__(
        self, host: LinkHost, conn: Connection, session: Session, attach: Attach, node: str
    ) -> None:
        self.kind = "cbs" if node == "$cbs" else "management"
        super().__init__(host, conn, session, attach)
        self.node = node

    def on_message(self, first: Transfer, payload: bytes) -> None:
        request = parse_message(payload, full=True)
        self.settle(first, Accepted())
        app = request.application_properties or {}
        server = self.host
        if self.node == "$cbs":
            app_reply, body, hub = server.handle_cbs(self.conn, app, request.value)
        else:
            app_reply, body, hub = server.handle_management(self.conn, app)
        reply = build_message(
            properties={"message_id": request.message_id, "correlation_id": request.message_id},
            application_properties=app_reply,
            value=body,
        )
        fault = self.server_faults.take(LinkInfo(self.kind, hub), {"delay"})
        if fault is not None:
            loop = asyncio.get_running_loop()
            loop.call_later(fault.delay, server.send_reply, self.conn, self.node, reply)
        else:
            server.send_reply(self.conn, self.node, reply)


# -- links the emulator sends on ----------------------------------------------------------


class SendingLink(Link):
    """A link on which we send: tracks the client's credit and frames deliveries."""

    def __init__(self, host: LinkHost, conn: Connection, session: Session, attach: Attach) -> None:
        super().__init__(host, conn, session, attach)
        self.delivery_count = 0
        self.credit = 0

    def on_flow(self, frame: Flow) -> None:
        if frame.link_credit is None:
            return
        rcv_count = (
            int(frame.delivery_count) if frame.delivery_count is not None else self.delivery_count
        )
        self.credit = max(0, rcv_count + int(frame.link_credit) - self.delivery_count)
        self.wake()
        if frame.drain and self.credit > 0:
            self.delivery_count += self.credit
            self.credit = 0
            self.send_link_flow(drain=True)
        elif frame.echo:
            self.send_link_flow()

    def send_link_flow(self, drain: bool | None = None) -> None:
        flow = self.conn.session_flow(
            self.session,
            handle=UInt(self.handle),
            delivery_count=UInt(self.delivery_count & 0xFFFFFFFF),
            link_credit=UInt(self.credit),
            drain=drain,
        )
        self.conn.send(self.session.channel, flow)

    def frames_for(self, payload: bytes) -> list[bytes]:
        """Frame one pre-settled delivery, split across frames if the client needs it."""
        session = self.session
        delivery_id = session.next_delivery_id & 0xFFFFFFFF
        session.next_delivery_id += 1
        tag = _tag(delivery_id)
        room = self.conn.remote_max_frame - 64
        frames: list[bytes] = []
        pos = 0
        while True:
            chunk = payload[pos : pos + room]
            pos += len(chunk)
            more = pos < len(payload)
            head = encode_transfer_fast(self.handle, delivery_id, tag, settled=True, more=more)
            frames.append(build_frame(session.channel, head + chunk))
            session.next_outgoing_id += 1
            if not more:
                break
        self.delivery_count += 1
        self.credit -= 1
        return frames


class ReplyLink(SendingLink):
    """The client's receiving half of ``$cbs`` / ``$management``: replies wait for credit."""

    def __init__(
        self, host: LinkHost, conn: Connection, session: Session, attach: Attach, node: str
    ) -> None:
        self.kind = "cbs" if node == "$cbs" else "management"
        super().__init__(host, conn, session, attach)
        self.node = node
        self.queue: list[bytes] = []

    def push(self, payload: bytes) -> None:
        self.queue.append(payload)
        self.wake()

    def wake(self) -> None:
        while self.queue and self.credit > 0 and self.alive:
            for frame in self.frames_for(self.queue.pop(0)):
                self.conn.write(frame)


class StartPosition:
    """Where a receiver starts: one of the SDK's selector filters, parsed."""

    def __init__(self, kind: str, value: str, inclusive: bool) -> None:
        self.kind = kind  # "offset", "sequence", "time"
        self.value = value
        self.inclusive = inclusive

    def __repr__(self) -> str:
        op = ">=" if self.inclusive else ">"
        return f"StartPosition({self.kind} {op} {self.value!r})"


_FILTER = re.compile(
    r"amqp\.annotation\.x-opt-(offset|sequence-number|enqueued-time)\s*(>=|>)\s*'([^']*)'",
    re.IGNORECASE,
)


def parse_start(filters: dict[Any, Any] | None) -> StartPosition:
    """Read the selector filter; no filter means the start of the partition."""
    for value in (filters or {}).values():
        expression = getattr(value, "value", value)
        if isinstance(expression, str):
            match = _FILTER.search(expression)
            if match is None:
                raise EntityError(
                    "amqp:not-implemented", f"Unsupported filter expression '{expression}'."
                )
            kinds = {"offset": "offset", "sequence-number": "sequence", "enqueued-time": "time"}
            return StartPosition(
                kinds[match.group(1).lower()], match.group(3), match.group(2) == ">="
            )
    return StartPosition("offset", "-1", False)


def first_sequence(log: PartitionLog, start: StartPosition) -> int:
    """Resolve a start position to the first sequence number to deliver."""
    end = log.next_sequence_number
    if start.kind == "offset":
        if start.value == "@latest":
            return end
        try:
            offset = int(start.value)
        except ValueError:
            raise EntityError(
                "com.microsoft:argument-error", f"The offset '{start.value}' is invalid."
            ) from None
        if offset < 0:
            return log.begin_sequence_number
        index = log.index_after_offset(offset, start.inclusive)
    elif start.kind == "sequence":
        seq = int(start.value) + (0 if start.inclusive else 1)
        if seq > end:
            raise EntityError(
                "com.microsoft:argument-out-of-range",
                f"The supplied sequence number '{start.value}' is invalid. The last sequence "
                f"number in the system is '{end - 1}'.",
            )
        return max(seq, log.begin_sequence_number)
    else:
        index = log.index_after_time(int(start.value), start.inclusive)
    if index >= len(log.events):
        return end
    return log.events[index].sequence_number


class ConsumerLink(SendingLink):
    """A receiver on ``<hub>/ConsumerGroups/<cg>/Partitions/<n>``."""

    kind: LinkKind = "receiver"

    def __init__(
        self,
        host: LinkHost,
        conn: Connection,
        session: Session,
        attach: Attach,
        hub: Hub,
        group: str,
        partition: int,
        *,
        metrics: bool,
    ) -> None:
        super().__init__(host, conn, session, attach)
        self.hub = hub
        self.group = group
        self.partition = partition
        self.log = hub.partitions[partition]
        self.info = LinkInfo("receiver", hub.name, partition, group)
        self.metrics = metrics
        self.next_seq = 0
        self.hold_until = 0.0
        self._scheduled = False
        self._stall_polled = False  # a look at whether a stall is over is scheduled

    def start(self, position: StartPosition) -> None:
        self.next_seq = first_sequence(self.log, position)
        self.log.listeners.add(self._on_append)

    def _on_append(self) -> None:
        if not self._scheduled and self.credit > 0:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self.wake)

    def _stall_over(self) -> None:
        self._stall_polled = False
        self.wake()

    def on_detached(self) -> None:
        super().on_detached()
        self.log.listeners.discard(self._on_append)
        key = (self.hub.name.lower(), self.group.lower(), self.partition)
        self.host.broker.remove_reader(key, self)

    def _metrics_section(self) -> bytes:
        log = self.log
        annotations = {
            Symbol("last_enqueued_sequence_number"): log.last_sequence_number,
            Symbol("last_enqueued_offset"): str(log.last_offset),
            Symbol("last_enqueued_time_utc"): Timestamp(log.last_enqueued_ms),
            Symbol("runtime_info_retrieval_time_utc"): Timestamp(int(time.time() * 1000)),
        }
        pairs = [encode(k) + encode(v) for k, v in annotations.items()]
        return encode_annotations(pairs, DELIVERY_ANNOTATIONS)

    def wake(self) -> None:
        self._scheduled = False
        if not self.alive or self.conn.paused or self.conn.closed or self.credit <= 0:
            return
        now = time.monotonic()
        if self.hold_until > now:
            return
        faults = self.server_faults
        if faults:
            if faults.take(self.info, {"stall"}) is not None:
                # Looked at again shortly: the stall may end (its duration, or removed).
                if not self._stall_polled:
                    self._stall_polled = True
                    asyncio.get_running_loop().call_later(_STALL_POLL_S, self._stall_over)
                return
            delay = faults.take(self.info, {"delay"})
            if delay is not None:
                self.hold_until = now + delay.delay
                asyncio.get_running_loop().call_later(delay.delay, self.wake)
                return
            if self.fire_due_fault():
                return
        log = self.log
        if self.next_seq < log.begin_sequence_number:
            self.next_seq = log.begin_sequence_number  # expired under the reader: skip ahead
        index = log.index_of_sequence(self.next_seq)
        count = min(self.credit, len(log.events) - index)
        if count <= 0:
            return
        frames: list[bytes] = []
        metrics = self._metrics_section() if self.metrics else b""
        for event in log.events[index : index + count]:
            frames.extend(self.frames_for(event.header + metrics + event.body))
            self.next_seq = event.sequence_number + 1
            if faults:
                faults.count_events(self.info)
                if faults.peek(self.info, DISRUPTIVE):
                    break
        self.conn.write(b"".join(frames))
        if faults:
            self.fire_due_fault()
