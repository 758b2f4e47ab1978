"""Fuzzing the emulator's AMQP decoder, in process and over a real socket.

In process: any bytes decode to a value or raise DecodeError/FrameError -- never IndexError,
RecursionError, UnicodeError or struct.error. Over TCP: after a real protocol header, any
bytes (well-formed frames around arbitrary bodies, or plain noise) end with the server closing
that connection within a bound once the peer stops sending, while the server keeps serving
others: each example checks a fresh handshake, and the run ends with a real SDK round trip.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import time
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pysparksources_emulator import EmulatorConfig, EventHubsEmulator, HubConfig
from pysparksources_emulator._amqp.framing import AMQP_HEADER, SASL_HEADER, FrameError, read_frame
from pysparksources_emulator._amqp.performatives import decode_performative
from pysparksources_emulator._amqp.types import DecodeError, decode, decode_all, skip
from pysparksources_emulator.testing import received, send

pytestmark = pytest.mark.emulator

CLOSE_BOUND_S = 5.0
# AMQP constructors (fixed, variable, compound, array, described) so random bytes reach deep.
CONSTRUCTORS = [
    0x00,
    0x40,
    0x45,
    0x50,
    0x53,
    0x70,
    0x80,
    0x98,
    0xA1,
    0xA3,
    0xB0,
    0xC0,
    0xC1,
    0xD0,
    0xE0,
    0xF0,
]
AMQPISH = st.lists(st.one_of(st.sampled_from(CONSTRUCTORS), st.integers(0, 255)), max_size=64).map(
    bytes
)
BYTES = st.one_of(AMQPISH, st.binary(max_size=256))


@given(BYTES)
@example(b"\x00" * 50_000)  # described-of-described... recursed past the stack
@example(b"\xc0\xff\xff" * 20_000)  # nested lists
@example(b"\xa1\x02\xff\xfe")  # a str8 that is not UTF-8
@example(b"\xa3\x01\xe9")  # a symbol that is not ASCII
@example(b"\xe0\x04\x02\x00\x00")  # an array of described elements, cut short
@example(b"s\x00@\x00\x00")  # a char past U+10FFFF
@example(b"s\x80\x00\x00\x00")  # a char past C's int
@example(b"s\x00\x00\xd8\x00")  # a char that is a surrogate
def test_decoder(data: bytes) -> None:
    for decode_one in (lambda: decode(data), lambda: decode_all(data), lambda: skip(data, 0)):
        with contextlib.suppress(DecodeError):
            decode_one()
    # The connection closes on any of these (see _connection.data_received).
    with contextlib.suppress(DecodeError, TypeError, ValueError):
        decode_performative(memoryview(data))


@given(BYTES, st.integers(0, 2**32 - 1))
def test_frame_reader(body: bytes, size: int) -> None:
    buf = bytearray(struct.pack(">IBBH", size, 2, 0, 0) + body)
    try:
        frame, used = read_frame(buf, 65536)
    except FrameError:
        return
    assert frame is None or 8 <= used <= len(buf)


@pytest.fixture(scope="module")
def emulator() -> Iterator[EventHubsEmulator]:
    server = EventHubsEmulator(EmulatorConfig(hubs=[HubConfig("fuzz", 1, [])])).start()
    yield server
    server.stop()


def _frame(body: bytes, frame_type: int = 0) -> bytes:
    return struct.pack(">IBBH", 8 + len(body), 2, frame_type, 0) + body


def _exchange(port: int, header: bytes, data: bytes) -> float:
    """Send ``header`` + ``data``, stop sending, and return how long the server took to close."""
    with socket.create_connection(("127.0.0.1", port), timeout=CLOSE_BOUND_S) as conn:
        conn.sendall(header)
        try:
            conn.sendall(data)
            conn.shutdown(socket.SHUT_WR)
        except OSError:
            return 0.0  # the server already closed on a bad frame
        start = time.monotonic()
        while True:
            try:
                chunk = conn.recv(65536)
            except ConnectionResetError:
                break
            except TimeoutError:
                pytest.fail(f"the server kept the connection open {CLOSE_BOUND_S}s after EOF")
            if not chunk:
                break
        return time.monotonic() - start


def _handshake_works(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=CLOSE_BOUND_S) as conn:
        conn.sendall(AMQP_HEADER)
        assert conn.recv(8) == AMQP_HEADER


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.sampled_from([AMQP_HEADER, SASL_HEADER]),
    st.one_of(
        BYTES.map(_frame),  # a well-formed frame around an arbitrary body
        st.lists(BYTES.map(_frame), max_size=4).map(b"".join),
        st.tuples(BYTES, st.sampled_from([0, 1])).map(lambda b: _frame(*b)),
        BYTES,  # noise, possibly an incomplete frame
    ),
)
@example(AMQP_HEADER, _frame(b"\x00" * 60_000))
@example(AMQP_HEADER, _frame(b"\x00\x53\x10\xc0\x03\x01\xa1\xff"))  # open with a broken string
@example(SASL_HEADER, _frame(b"\x00\x53\x41\xc0\x02\x01\x71", 1))  # sasl-init, truncated
def test_server_survives_arbitrary_frames(
    emulator: EventHubsEmulator, header: bytes, data: bytes
) -> None:
    took = _exchange(emulator.port, header, data)
    assert took < CLOSE_BOUND_S
    _handshake_works(emulator.port)


def test_server_still_serves_the_sdk_after_fuzzing(emulator: EventHubsEmulator) -> None:
    for data in (b"\x00" * 70_000, b"\xff" * 100, _frame(b"\xc0\xff\xff" * 3000)):
        _exchange(emulator.port, AMQP_HEADER, data)
    conn = emulator.connection_string("fuzz")
    send(conn, ["still here"])
    assert [e.body_as_str() for _, e in received(conn, 1)] == ["still here"]
    deadline = time.monotonic() + CLOSE_BOUND_S
    while emulator.connection_count() > 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert emulator.connection_count() == 0  # every fuzzed connection was dropped
