"""AMQP 1.0 performatives, delivery states, terminus and SASL frames as dataclasses.

Every ``encode`` writes *all* fields, trailing nulls included: the azure-eventhub client reads
fixed list positions and raises IndexError on a shortened list.
"""

from __future__ import annotations

import dataclasses
import struct
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from pysparksources_emulator._amqp.types import (
    Array,
    Described,
    Symbol,
    UByte,
    UInt,
    ULong,
    UShort,
    decode,
    encode,
)

__all__ = [
    "Accepted",
    "AmqpError",
    "Attach",
    "Begin",
    "Close",
    "Detach",
    "Disposition",
    "End",
    "Flow",
    "Modified",
    "Open",
    "Performative",
    "Received",
    "Rejected",
    "Released",
    "SaslInit",
    "SaslMechanisms",
    "SaslOutcome",
    "Source",
    "Target",
    "Transfer",
    "decode_performative",
    "encode_transfer_fast",
]


class Performative:
    """Base class: a described list whose descriptor is ``CODE``."""

    CODE: ClassVar[int] = -1

    def to_value(self) -> Described:
        values = [_to_wire(getattr(self, f.name)) for f in dataclasses.fields(self)]  # type: ignore[arg-type]
        return Described(ULong(self.CODE), values)

    def encode(self) -> bytes:
        return encode(self.to_value())


def _to_wire(value: Any) -> Any:
    if isinstance(value, Performative):
        return value.to_value()
    return value


T = TypeVar("T", bound=Performative)


@dataclass
class AmqpError(Performative):
    """The ``error`` type carried by detach, end, close and rejected."""

    CODE: ClassVar[int] = 0x1D
    condition: Symbol = Symbol("amqp:internal-error")  # noqa: RUF009 (immutable int/str)
    description: str | None = None
    info: dict[Any, Any] | None = None


@dataclass
class Open(Performative):
    CODE: ClassVar[int] = 0x10
    container_id: str = ""
    hostname: str | None = None
    max_frame_size: UInt | None = None
    channel_max: UShort | None = None
    idle_time_out: UInt | None = None
    outgoing_locales: Any = None
    incoming_locales: Any = None
    offered_capabilities: Any = None
    desired_capabilities: Any = None
    properties: dict[Any, Any] | None = None


@dataclass
class Begin(Performative):
    CODE: ClassVar[int] = 0x11
    remote_channel: UShort | None = None
    next_outgoing_id: UInt = UInt(0)  # noqa: RUF009 (immutable int/str)
    incoming_window: UInt = UInt(0)  # noqa: RUF009 (immutable int/str)
    outgoing_window: UInt = UInt(0)  # noqa: RUF009 (immutable int/str)
    handle_max: UInt | None = None
    offered_capabilities: Any = None
    desired_capabilities: Any = None
    properties: dict[Any, Any] | None = None


@dataclass
class Source(Performative):
    CODE: ClassVar[int] = 0x28
    address: str | None = None
    durable: UInt | None = None
    expiry_policy: Symbol | None = None
    timeout: UInt | None = None
    dynamic: bool | None = None
    dynamic_node_properties: Any = None
    distribution_mode: Symbol | None = None
    filter: dict[Any, Any] | None = None
    default_outcome: Any = None
    outcomes: Any = None
    capabilities: Any = None


@dataclass
class Target(Performative):
    CODE: ClassVar[int] = 0x29
    address: str | None = None
    durable: UInt | None = None
    expiry_policy: Symbol | None = None
    timeout: UInt | None = None
    dynamic: bool | None = None
    dynamic_node_properties: Any = None
    capabilities: Any = None


@dataclass
class Attach(Performative):
    CODE: ClassVar[int] = 0x12
    name: str = ""
    handle: UInt = UInt(0)  # noqa: RUF009 (immutable int/str)
    role: bool = False  # False: sender, True: receiver
    snd_settle_mode: UByte | None = None
    rcv_settle_mode: UByte | None = None
    source: Source | None = None
    target: Target | None = None
    unsettled: Any = None
    incomplete_unsettled: bool | None = None
    initial_delivery_count: UInt | None = None
    max_message_size: ULong | None = None
    offered_capabilities: Any = None
    desired_capabilities: Any = None
    properties: dict[Any, Any] | None = None


@dataclass
class Flow(Performative):
    CODE: ClassVar[int] = 0x13
    next_incoming_id: UInt | None = None
    incoming_window: UInt = UInt(0)  # noqa: RUF009 (immutable int/str)
    next_outgoing_id: UInt = UInt(0)  # noqa: RUF009 (immutable int/str)
    outgoing_window: UInt = UInt(0)  # noqa: RUF009 (immutable int/str)
    handle: UInt | None = None
    delivery_count: UInt | None = None
    link_credit: UInt | None = None
    available: UInt | None = None
    drain: bool | None = None
    echo: bool | None = None
    properties: dict[Any, Any] | None = None


@dataclass
class Transfer(Performative):
    CODE: ClassVar[int] = 0x14
    handle: UInt = UInt(0)  # noqa: RUF009 (immutable int/str)
    delivery_id: UInt | None = None
    delivery_tag: bytes | None = None
    message_format: UInt | None = None
    settled: bool | None = None
    more: bool | None = None
    rcv_settle_mode: UByte | None = None
    state: Any = None
    resume: bool | None = None
    aborted: bool | None = None
    batchable: bool | None = None


@dataclass
class Disposition(Performative):
    CODE: ClassVar[int] = 0x15
    role: bool = True
    first: UInt = UInt(0)  # noqa: RUF009 (immutable int/str)
    last: UInt | None = None
    settled: bool | None = None
    state: Any = None
    batchable: bool | None = None


@dataclass
class Detach(Performative):
    CODE: ClassVar[int] = 0x16
    handle: UInt = UInt(0)  # noqa: RUF009 (immutable int/str)
    closed: bool | None = None
    error: AmqpError | None = None


@dataclass
class End(Performative):
    CODE: ClassVar[int] = 0x17
    error: AmqpError | None = None


@dataclass
class Close(Performative):
    CODE: ClassVar[int] = 0x18
    error: AmqpError | None = None


@dataclass
class Received(Performative):
    CODE: ClassVar[int] = 0x23
    section_number: UInt = UInt(0)  # noqa: RUF009 (immutable int/str)
    section_offset: ULong = ULong(0)  # noqa: RUF009 (immutable int/str)


@dataclass
class Accepted(Performative):
    CODE: ClassVar[int] = 0x24


@dataclass
class Rejected(Performative):
    CODE: ClassVar[int] = 0x25
    error: AmqpError | None = None


@dataclass
class Released(Performative):
    CODE: ClassVar[int] = 0x26


@dataclass
class Modified(Performative):
    CODE: ClassVar[int] = 0x27
    delivery_failed: bool | None = None
    undeliverable_here: bool | None = None
    message_annotations: dict[Any, Any] | None = None


@dataclass
class SaslMechanisms(Performative):
    CODE: ClassVar[int] = 0x40
    sasl_server_mechanisms: Array = field(default_factory=lambda: Array(0xB3, ()))


@dataclass
class SaslInit(Performative):
    CODE: ClassVar[int] = 0x41
    mechanism: Symbol = Symbol("")  # noqa: RUF009 (immutable int/str)
    initial_response: bytes | None = None
    hostname: str | None = None


@dataclass
class SaslOutcome(Performative):
    CODE: ClassVar[int] = 0x44
    code: UByte = UByte(0)  # noqa: RUF009 (immutable int/str)
    additional_data: bytes | None = None


_BY_CODE: dict[int, type[Performative]] = {
    cls.CODE: cls
    for cls in (
        AmqpError, Open, Begin, Source, Target, Attach, Flow, Transfer, Disposition, Detach,
        End, Close, Received, Accepted, Rejected, Released, Modified, SaslMechanisms, SaslInit,
        SaslOutcome,
    )
}  # fmt: skip

_NESTED = {"error", "source", "target", "state"}


def from_value(value: Any) -> Any:
    """Turn a decoded described list into its dataclass (unknown descriptors stay as they are)."""
    if not isinstance(value, Described) or not isinstance(value.descriptor, int):
        return value
    cls = _BY_CODE.get(int(value.descriptor))
    if cls is None or not isinstance(value.value, list):
        return value
    names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    items = value.value[: len(names)]
    kwargs: dict[str, Any] = {}
    for name, item in zip(names, items, strict=False):
        kwargs[name] = from_value(item) if name in _NESTED else item
    # Absent trailing fields keep the dataclass defaults; explicit nulls stay null.
    return cls(**kwargs)


def decode_performative(body: memoryview) -> tuple[Any, int]:
    """Decode the performative at the start of a frame body; return it and where payload starts."""
    value, pos = decode(body, 0)
    return from_value(value), pos


_TRANSFER_HEAD = b"\x00\x53\x14"
_pack_I = struct.Struct(">I").pack


def encode_transfer_fast(
    handle: int, delivery_id: int, tag: bytes, *, settled: bool, more: bool
) -> bytes:
    """Encode a format-0 transfer performative without building a dataclass (hot path)."""
    body = b"".join(
        (
            b"\x70" + _pack_I(handle),
            b"\x70" + _pack_I(delivery_id),
            b"\xa0" + bytes((len(tag),)) + tag,
            b"\x43",
            b"\x41" if settled else b"\x42",
            b"\x41" if more else b"\x42",
            b"\x40\x40\x40\x40\x40",
        )
    )
    return _TRANSFER_HEAD + b"\xc0" + bytes((len(body) + 1, 11)) + body
