"""Entra ID (JWT) tokens on ``$cbs``: verified against one configured token authority.

Event Hubs takes a put-token of type ``jwt`` from any ``TokenCredential`` (azure-identity asks
Entra ID for scope ``https://eventhubs.azure.net//.default``) and checks the token's RS256
signature with its issuer's signing keys, its issuer, its audience and its lifetime. The
emulator does the same against a *test* authority the user configures (its issuer and its
public keys, as a JWKS document or a PEM public key), with the standard library only: RS256
verification is one modular exponentiation and a byte comparison (RFC 8017, RSASSA-PKCS1-v1_5),
so the emulator keeps no runtime dependency. What it does not check: the role assignment
(Azure Event Hubs Data Sender/Receiver), which needs Azure's RBAC.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_AUDIENCES", "JwtAuthority", "JwtError"]

# What ``aud`` may hold: Entra ID's v1 tokens (the kind the Event Hubs resource receives) carry
# the resource URI, the SDK's scope without "/.default", which Event Hubs accepts with and
# without its trailing slash. Other forms (a namespace URI, an application id) can be added
# with ``audiences``.
DEFAULT_AUDIENCES = ("https://eventhubs.azure.net/", "https://eventhubs.azure.net")
# DER of the DigestInfo prefix for SHA-256 (RFC 8017 section 9.2, note 1).
_SHA256_PREFIX = bytes.fromhex("3031300d060960864801650304020105000420")


class JwtError(ValueError):
    """A token the authority did not issue, or not for this service, or not now."""


@dataclass(frozen=True)
class _RsaKey:
    n: int
    e: int

    @property
    def size(self) -> int:
        return (self.n.bit_length() + 7) // 8


def _b64url(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise JwtError("MalformedToken: a part of the token is not base64url.") from None


def _int(text: str) -> int:
    return int.from_bytes(_b64url(text), "big")


@dataclass(frozen=True)
class JwtAuthority:
    """The token authority the emulator trusts: issuers, signing keys, accepted audiences.

    ``keys`` maps a key id (a JWK's ``kid``; ``""`` for a key without one) to an RSA public
    key; build it with :meth:`from_jwks` or :meth:`from_pem`. ``clock_skew`` is the leeway, in
    seconds, allowed on ``exp`` and ``nbf``.
    """

    issuers: tuple[str, ...]
    keys: Mapping[str, _RsaKey] = field(repr=False)
    audiences: tuple[str, ...] = DEFAULT_AUDIENCES
    clock_skew: float = 0.0

    def __post_init__(self) -> None:
        if not self.issuers:
            raise ValueError("a JWT authority needs at least one issuer")
        if not self.keys:
            raise ValueError("a JWT authority needs at least one signing key")

    @classmethod
    def from_jwks(
        cls, jwks: Mapping[str, Any] | str | Path, issuers: Iterable[str] | str, **kwargs: Any
    ) -> JwtAuthority:
        """From a JWKS document (a dict, its JSON text, or a file holding it)."""
        if isinstance(jwks, Path):
            jwks = jwks.read_text()
        document = json.loads(jwks) if isinstance(jwks, str) else jwks
        keys = {
            str(jwk.get("kid", "")): _RsaKey(_int(jwk["n"]), _int(jwk["e"]))
            for jwk in document.get("keys", [])
            if jwk.get("kty") == "RSA" and jwk.get("use", "sig") == "sig"
        }
        return cls(_issuers(issuers), keys, **kwargs)

    @classmethod
    def from_pem(
        cls, pem: str | bytes | Path, issuers: Iterable[str] | str, **kwargs: Any
    ) -> JwtAuthority:
        """From a PEM RSA public key (``BEGIN PUBLIC KEY`` or ``BEGIN RSA PUBLIC KEY``): one
        key, used for tokens whatever their ``kid``."""
        if isinstance(pem, Path):
            pem = pem.read_bytes()
        text = pem.decode() if isinstance(pem, bytes) else pem
        lines = [line.strip() for line in text.strip().splitlines()]
        if not lines or not lines[0].startswith("-----BEGIN") or "PUBLIC KEY" not in lines[0]:
            raise ValueError("expected a PEM public key (-----BEGIN PUBLIC KEY-----)")
        der = base64.b64decode("".join(line for line in lines if not line.startswith("-----")))
        return cls(_issuers(issuers), {"": _rsa_from_der(der)}, **kwargs)

    def verify(self, token: str, now: float) -> dict[str, Any]:
        """The token's claims; :class:`JwtError` (its text a put-token's status description)
        when the signature, issuer, audience or lifetime is not right."""
        parts = token.split(".")
        if len(parts) != 3:
            raise JwtError("MalformedToken: the token is not a JWT (header.payload.signature).")
        try:
            header = json.loads(_b64url(parts[0]))
            claims = json.loads(_b64url(parts[1]))
        except ValueError:
            raise JwtError("MalformedToken: the token's header or payload is not JSON.") from None
        if not isinstance(header, dict) or not isinstance(claims, dict):
            raise JwtError("MalformedToken: the token's header or payload is not an object.")
        if header.get("alg") != "RS256":
            raise JwtError(f"InvalidSignature: unsupported algorithm {header.get('alg')!r}.")
        key = self.keys.get(str(header.get("kid", "")))
        if key is None and len(self.keys) == 1 and "" in self.keys:
            key = self.keys[""]
        if key is None:
            raise JwtError("InvalidSignature: the token's signing key is not the authority's.")
        signed = f"{parts[0]}.{parts[1]}".encode()
        if not _rs256_valid(key, signed, _b64url(parts[2])):
            raise JwtError("InvalidSignature: the token's signature is invalid.")
        issuer = claims.get("iss")
        if issuer not in self.issuers:
            raise JwtError(f"InvalidIssuer: token issuer '{issuer}' is not trusted.")
        audiences = claims.get("aud")
        found = [audiences] if isinstance(audiences, str) else list(audiences or [])
        if not any(a in self.audiences for a in found):
            raise JwtError(f"InvalidAudience: token audience '{audiences}' is not Event Hubs.")
        try:
            expires = float(claims["exp"])
            not_before = float(claims.get("nbf", 0))
        except (KeyError, TypeError, ValueError):
            raise JwtError("MalformedToken: the token has no valid 'exp'.") from None
        if now >= expires + self.clock_skew:
            raise JwtError(f"ExpiredToken: the token expired at {int(expires)}.")
        if now < not_before - self.clock_skew:
            raise JwtError(f"InvalidToken: the token is not valid before {int(not_before)}.")
        return claims


def _issuers(issuers: Iterable[str] | str) -> tuple[str, ...]:
    return (issuers,) if isinstance(issuers, str) else tuple(issuers)


def _rs256_valid(key: _RsaKey, signed: bytes, signature: bytes) -> bool:
    """RSASSA-PKCS1-v1_5 with SHA-256: rebuild the expected encoded message and compare it whole
    (never parse the decrypted block: parsing is where forgeries slip through)."""
    size = key.size
    if len(signature) != size:
        return False
    s = int.from_bytes(signature, "big")
    if s >= key.n:
        return False
    encoded = pow(s, key.e, key.n).to_bytes(size, "big")
    digest_info = _SHA256_PREFIX + hashlib.sha256(signed).digest()
    padding = size - len(digest_info) - 3
    if padding < 8:
        return False
    expected = b"\x00\x01" + b"\xff" * padding + b"\x00" + digest_info
    return hmac.compare_digest(encoded, expected)


# -- a DER reader for RSA public keys (SubjectPublicKeyInfo or PKCS#1 RSAPublicKey) -------
_RSA_OID = bytes.fromhex("2a864886f70d010101")


def _tlv(data: bytes, pos: int) -> tuple[int, bytes, int]:
    """(tag, content, next position) of the DER element at ``pos``."""
    if pos + 2 > len(data):
        raise ValueError("truncated DER")
    tag, length = data[pos], data[pos + 1]
    pos += 2
    if length & 0x80:
        count = length & 0x7F
        length = int.from_bytes(data[pos : pos + count], "big")
        pos += count
    if pos + length > len(data):
        raise ValueError("truncated DER")
    return tag, data[pos : pos + length], pos + length


def _rsa_from_der(der: bytes) -> _RsaKey:
    tag, body, _ = _tlv(der, 0)
    if tag != 0x30:
        raise ValueError("not a DER public key")
    first_tag, first, after = _tlv(body, 0)
    if first_tag == 0x30:  # SubjectPublicKeyInfo: algorithm, then a BIT STRING holding PKCS#1
        _, oid, _ = _tlv(first, 0)
        if oid != _RSA_OID:
            raise ValueError("not an RSA public key")
        bits_tag, bits, _ = _tlv(body, after)
        if bits_tag != 0x03 or not bits:
            raise ValueError("not a DER public key")
        return _rsa_from_der(bits[1:])
    if first_tag != 0x02:
        raise ValueError("not a DER public key")
    e_tag, e, _ = _tlv(body, after)
    if e_tag != 0x02:
        raise ValueError("not a DER public key")
    return _RsaKey(int.from_bytes(first, "big"), int.from_bytes(e, "big"))
