"""Entra ID-style JWTs on $cbs: verified against a configured authority (signature, issuer,
audience, lifetime), refused with 401, and links detached when a token lapses unrenewed.

The tokens are signed here with ``cryptography`` (a test dependency only: the emulator verifies
with the standard library), and put by the real SDK through a ``TokenCredential``.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from azure.core.credentials import AccessToken
from azure.eventhub import EventData, EventHubConsumerClient, EventHubProducerClient
from azure.eventhub.exceptions import AuthenticationError

from pysparksources_emulator import (
    EmulatorConfig,
    EventHubsEmulator,
    HubConfig,
    JwtAuthority,
    JwtError,
)
from pysparksources_emulator._serve import build_parser, config_from_args
from pysparksources_emulator.testing import FAST

rsa = pytest.importorskip("cryptography.hazmat.primitives.asymmetric.rsa")
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import padding  # noqa: E402

pytestmark = pytest.mark.emulator

ISSUER = "https://login.example.test/tenant-1/v2.0"
AUDIENCE = "https://eventhubs.azure.net/"
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
OTHER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _jwks(key: Any, kid: str = "k1") -> dict[str, Any]:
    numbers = key.public_key().public_numbers()
    return {
        "keys": [
            {
                "kty": "RSA",
                "kid": kid,
                "n": _b64(numbers.n.to_bytes(256, "big")),
                "e": _b64(numbers.e.to_bytes(3, "big")),
            }
        ]
    }


def token(key: Any = KEY, lifetime: float = 600, kid: str = "k1", **claims: Any) -> str:
    now = time.time()
    body = {"iss": ISSUER, "aud": AUDIENCE, "nbf": now - 5, "exp": now + lifetime, **claims}
    header = {"alg": "RS256", "typ": "JWT", "kid": kid}
    signed = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(body).encode())}"
    signature = key.sign(signed.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signed}.{_b64(signature)}"


AUTHORITY = JwtAuthority.from_jwks(_jwks(KEY), ISSUER)


class Credential:
    """A TokenCredential handing out tokens from ``make`` (counted)."""

    def __init__(self, make: Any) -> None:
        self.make = make
        self.calls = 0

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        assert scopes == ("https://eventhubs.azure.net//.default",)
        self.calls += 1
        text = self.make()
        exp = json.loads(base64.urlsafe_b64decode(text.split(".")[1] + "=="))["exp"]
        return AccessToken(text, int(exp))


def test_verify_checks_signature_issuer_audience_and_lifetime() -> None:
    now = time.time()
    assert AUTHORITY.verify(token(), now)["iss"] == ISSUER
    assert AUTHORITY.verify(token(aud="https://eventhubs.azure.net"), now)
    assert AUTHORITY.verify(token(aud=["x", AUDIENCE]), now)
    cases = {
        "InvalidSignature": token(OTHER_KEY),
        "InvalidIssuer": token(iss="https://sts.example.test/other/"),
        "InvalidAudience": token(aud="https://storage.azure.com/"),
        "ExpiredToken": token(lifetime=-1),
        "not valid before": token(nbf=now + 600),
        "MalformedToken": "a.b",
    }
    for expected, text in cases.items():
        with pytest.raises(JwtError, match=expected):
            AUTHORITY.verify(text, now)
    head, body, sig = token().split(".")
    forged = json.loads(base64.urlsafe_b64decode(body + "=="))
    forged["aud"] = "https://eventhubs.azure.net"
    with pytest.raises(JwtError, match="InvalidSignature"):
        AUTHORITY.verify(f"{head}.{_b64(json.dumps(forged).encode())}.{sig}", now)


def test_a_pem_public_key_and_the_command_line(tmp_path: Path) -> None:
    pem = KEY.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    (tmp_path / "key.pem").write_bytes(pem)
    (tmp_path / "jwks.json").write_text(json.dumps(_jwks(KEY)))
    from_pem = JwtAuthority.from_pem(tmp_path / "key.pem", ISSUER)
    assert from_pem.verify(token(kid="any"), time.time())["aud"] == AUDIENCE
    args = build_parser().parse_args(
        ["--jwt-issuer", ISSUER, "--jwt-jwks", str(tmp_path / "jwks.json"), "--jwt-audience", "a"]
    )
    config = config_from_args(args)
    assert config.jwt is not None and config.jwt.audiences == ("a",)
    assert config.jwt.verify(token(aud="a"), time.time())
    config = EmulatorConfig.from_dict(
        {"PySparkSources": {"Jwt": {"Issuer": ISSUER, "PublicKeyFile": str(tmp_path / "key.pem")}}}
    )
    assert config.jwt is not None and config.jwt.verify(token(), time.time())


def _emulator(keys: dict[str, str] | None = None, **kwargs: Any) -> EventHubsEmulator:
    config = EmulatorConfig(hubs=[HubConfig("test", 2)], jwt=AUTHORITY, keys=keys or {}, **kwargs)
    return EventHubsEmulator(config).start()


def _producer(emulator: EventHubsEmulator, credential: Any) -> EventHubProducerClient:
    return EventHubProducerClient(emulator.endpoint, "test", credential, use_tls=False, **FAST)


def test_the_sdk_sends_with_a_verified_token_and_a_bad_one_gets_401() -> None:
    emulator = _emulator(keys={"root": "k"})  # keys too: JWTs are still verified
    try:
        good = Credential(lambda: token())
        with _producer(emulator, good) as client:
            client.send_batch([EventData("signed")], partition_id="0")
        for bad in (token(OTHER_KEY), token(aud="https://storage.azure.com/")):
            client = _producer(emulator, Credential(lambda bad=bad: bad))
            with client, pytest.raises(AuthenticationError):
                client.send_batch([EventData("refused")], partition_id="0")
        assert emulator.partition_info("test", 0)["last_sequence_number"] == 0
        counts = emulator.token_counts()
        assert counts["accepted"]["jwt"] >= 1 and counts["refused"]["jwt"] >= 2
    finally:
        emulator.stop()


@pytest.mark.slow  # 15 s of 10-second tokens renewed
def test_a_receiver_keeps_its_link_while_its_tokens_renew() -> None:
    emulator = _emulator()
    try:
        # The SDK renews at 10% of the lifetime left, counted in whole seconds: 1 s here.
        renewing = Credential(lambda: token(lifetime=10))
        received: list[str] = []
        errors: list[BaseException] = []
        consumer = EventHubConsumerClient(
            emulator.endpoint, "test", "$Default", renewing, use_tls=False, **FAST
        )

        def on_event(context: Any, event: Any) -> None:
            if event is not None:
                received.append(event.body_as_str())

        thread = threading.Thread(
            target=consumer.receive,
            kwargs={
                "on_event": on_event,
                "partition_id": "0",
                "starting_position": "-1",
                "max_wait_time": 0.5,
                "on_error": lambda context, error: errors.append(error),
            },
            daemon=True,
        )
        thread.start()
        with _producer(emulator, Credential(lambda: token())) as producer:
            for i in range(5):
                producer.send_batch([EventData(f"e{i}")], partition_id="0")
                time.sleep(3)
        consumer.close()
        thread.join(10)
        assert received == [f"e{i}" for i in range(5)], errors
        assert renewing.calls >= 2, emulator.token_counts()
        assert emulator.token_counts()["accepted"].get("renewed", 0) >= 1, renewing.calls

    finally:
        emulator.stop()


def test_a_link_whose_token_lapsed_unrenewed_is_detached_unauthorized() -> None:
    # The emulator's clock jumps past the token's expiry; the SDK (on real time) sees no
    # reason to renew, as a client that failed to renew would not.
    skew = [0.0]
    emulator = _emulator(clock=lambda: time.time() + skew[0])
    try:
        errors: list[BaseException] = []
        received: list[str] = []
        consumer = EventHubConsumerClient(
            emulator.endpoint,
            "test",
            "$Default",
            Credential(lambda: token(lifetime=600)),
            use_tls=False,
            **FAST,
        )
        thread = threading.Thread(
            target=consumer.receive,
            kwargs={
                "on_event": lambda context, event: received.append(event.body_as_str()),
                "partition_id": "0",
                "starting_position": "-1",
                "on_error": lambda context, error: errors.append(error),
            },
            daemon=True,
        )
        thread.start()
        with _producer(emulator, Credential(lambda: token())) as producer:
            producer.send_batch([EventData("before")], partition_id="0")
        deadline = time.monotonic() + 20
        while not received and time.monotonic() < deadline:
            time.sleep(0.1)
        assert received == ["before"]
        skew[0] = 700.0
        while not emulator.token_counts()["refused"] and time.monotonic() < deadline:
            time.sleep(0.1)
        consumer.close()
        thread.join(10)
        counts = emulator.token_counts()
        # Detached, the receiver attached again with a token the emulator's clock calls expired.
        assert counts["links_expired"] == 1, counts
        assert counts["refused"].get("jwt", 0) >= 1, counts
        assert not errors or "unauthorized" in f"{errors[0]!r}".lower()
    finally:
        emulator.stop()
