"""Pure-Python unit tests of the AMQP codec, framing, message sections and helpers (no SDK)."""

from __future__ import annotations

import uuid

import pytest

from pysparksources_emulator import EmulatorConfig
from pysparksources_emulator._amqp.framing import build_frame, read_frame
from pysparksources_emulator._amqp.message import (
    build_message,
    encode_annotations,
    parse_message,
)
from pysparksources_emulator._amqp.performatives import (
    Attach,
    Begin,
    Detach,
    Source,
    Transfer,
    decode_performative,
    encode_transfer_fast,
)
from pysparksources_emulator._amqp.types import (
    Array,
    Byte,
    DecodeError,
    Described,
    Float,
    Int,
    Short,
    Symbol,
    Timestamp,
    UByte,
    UInt,
    ULong,
    UShort,
    decode,
    encode,
    skip,
)
from pysparksources_emulator._cbs import make_sas_token, verify_token
from pysparksources_emulator._partition_key import key_hash, partition_for_key

VALUES = [
    None, True, False, 0, -1, 127, -129, 2**40, UInt(0), UInt(7), UInt(2**31), ULong(0),
    ULong(9), ULong(2**63), UByte(200), UShort(60000), Byte(-5), Short(-300), Int(-2),
    Int(70000), Float(1.5), 2.25, "", "héllo", "x" * 300, b"", b"\x00\xff", b"y" * 300,
    Symbol("amqp:link:stolen"), Symbol("s" * 300), Timestamp(1_700_000_000_123),
    uuid.UUID(int=12345), [], [1, "a", None], list(range(100)), {Symbol("k"): "v", "n": 1},
    {"big": "z" * 300}, Described(ULong(0x70), [True]), Array(0xB3, (Symbol("a"), Symbol("b"))),
    Array(0xB1, ("0", "1", "2")), Array(0x81, (1, -2)),
]  # fmt: skip


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_round_trip_keeps_value_and_type(value: object) -> None:
    data = encode(value)
    decoded, end = decode(data)
    assert end == len(data) == skip(data, 0)
    assert decoded == value
    assert type(decoded) is type(value) or isinstance(value, (list, dict))


def test_small_and_large_encodings() -> None:
    assert encode(UInt(0)) == b"\x43"
    assert encode(ULong(0x14)) == b"\x53\x14"
    assert encode(5) == b"\x55\x05"
    assert encode("ab") == b"\xa1\x02ab"
    assert encode("a" * 256)[:5] == b"\xb1\x00\x00\x01\x00"
    assert encode([]) == b"\x45"


def test_truncated_and_unknown_input_raises_decode_error() -> None:
    with pytest.raises(DecodeError):
        decode(encode("hello")[:-1])
    with pytest.raises(DecodeError):
        decode(b"\x01")
    with pytest.raises(DecodeError):
        skip(b"\xb0\x00\x00\x00\x09ab", 0)


def test_performatives_carry_every_field() -> None:
    # The SDK indexes fixed positions: trailing nulls must be on the wire.
    value, _ = decode(Begin(remote_channel=UShort(0)).encode())
    assert isinstance(value, Described) and len(value.value) == 8
    value, _ = decode(Detach(UInt(1), True, None).encode())
    assert len(value.value) == 3
    attach = Attach(name="l", handle=UInt(3), role=True, source=Source(address="a"))
    decoded, _ = decode_performative(memoryview(attach.encode()))
    assert decoded == attach
    assert isinstance(decoded.source, Source)


def test_fast_transfer_matches_the_dataclass_encoding() -> None:
    fast = encode_transfer_fast(2, 5, b"\x00\x00\x00\x05", settled=True, more=False)
    slow = Transfer(
        handle=UInt(2),
        delivery_id=UInt(5),
        delivery_tag=b"\x00\x00\x00\x05",
        message_format=UInt(0),
        settled=True,
        more=False,
        **dict.fromkeys(("rcv_settle_mode", "state", "resume", "aborted", "batchable")),
    )
    assert decode(fast)[0] == decode(slow.encode())[0]


def test_frames_split_and_join() -> None:
    frame = build_frame(3, b"body")
    buf = bytearray(frame + frame[:5])
    parsed, used = read_frame(buf, 1024)
    assert parsed is not None and used == len(frame)
    assert parsed.channel == 3 and bytes(parsed.body) == b"body"
    assert read_frame(bytearray(frame[:5]), 1024) == (None, 0)


def test_message_sections_and_annotations() -> None:
    pairs = [encode(Symbol("x-opt-partition-key")) + encode("k")]
    body = build_message(
        properties={"message_id": "m1"}, application_properties={"a": 1}, value="v"
    )
    msg = parse_message(encode_annotations(pairs) + body, full=True)
    assert msg.annotation("x-opt-partition-key") == "k"
    assert msg.message_id == "m1"
    assert msg.application_properties == {"a": 1}
    assert msg.value == "v"
    assert msg.rest == body


def test_partition_key_hash_is_stable() -> None:
    # Values cross-checked against the SDK's buffered producer (see test_partition_keys.py).
    assert key_hash("") == key_hash("")
    assert [partition_for_key(k, 7) for k in ("a", "abc", "key-1", "twelve_bytes")] == [6, 0, 4, 5]
    assert all(0 <= partition_for_key(str(i), 32) < 32 for i in range(200))


def test_sas_tokens() -> None:
    keys = {"policy": "secret"}
    aud = "sb://127.0.0.1:5672/hub"
    token = make_sas_token(aud, "policy", "secret", 2_000_000_000)
    assert verify_token(token, "servicebus.windows.net:sastoken", aud, keys, 1e9).status == 202
    wrong = make_sas_token(aud, "policy", "nope", 2_000_000_000)
    assert verify_token(wrong, "", aud, keys, 1e9).status == 401
    expired = make_sas_token(aud, "policy", "secret", 100)
    assert "Expired" in verify_token(expired, "", aud, keys, 1e9).description
    other = "sb://127.0.0.1:5672/other"
    assert verify_token(token, "", other, keys, 1e9).status == 401
    assert verify_token("anything", "jwt", aud, {}, 1e9).status == 202


def test_config_reads_microsofts_shape(tmp_path: object) -> None:
    data = {
        "UserConfig": {
            "NamespaceConfig": [
                {
                    "Type": "EventHub",
                    "Name": "emulatorNs1",
                    "Entities": [
                        {"Name": "eh1", "PartitionCount": "3", "ConsumerGroups": [{"Name": "cg1"}]}
                    ],
                }
            ],
            "LoggingConfig": {"Type": "File"},
        },
        "PySparkSources": {"SharedAccessKeys": {"p": "k"}, "Retention": {"eh1": {"Seconds": 5}}},
    }
    config = EmulatorConfig.from_dict(data)
    hub = config.hub("EH1")
    assert hub is not None and hub.partition_count == 3
    assert hub.consumer_groups == ["$Default", "cg1"]
    assert hub.retention_seconds == 5
    assert config.keys == {"p": "k"}
