"""Claims-based security: check the tokens a client puts on ``$cbs``.

With no keys configured every SAS token is accepted, so tests and demos can use any connection
string. With keys, a SAS token must name a known policy (``skn``), carry a valid
HMAC-SHA256 signature of ``<url-encoded audience>\\n<expiry>`` and not be expired. A JWT
(type ``jwt``, from a ``TokenCredential``) is verified against the configured token authority
(:mod:`._jwt`); without one it is accepted unverified when no keys are configured, as before.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass
from urllib.parse import unquote_plus, urlsplit

from pysparksources_emulator._jwt import JwtAuthority, JwtError

__all__ = ["TokenCheck", "audience_path", "make_sas_token", "verify_token"]


@dataclass(frozen=True)
class TokenCheck:
    """Outcome of a put-token: an HTTP-like status and the audience path it grants."""

    status: int
    description: str
    path: str = ""
    expires_at: float | None = None


def audience_path(audience: str) -> str:
    """``sb://host:port/hub/consumergroups/cg`` -> ``hub/consumergroups/cg`` (lower case)."""
    if "://" in audience:
        audience = urlsplit(audience).path
    return audience.strip("/").lower()


def _fields(token: str) -> dict[str, str]:
    prefix = "SharedAccessSignature "
    if not token.startswith(prefix):
        return {}
    out: dict[str, str] = {}
    for part in token[len(prefix) :].split("&"):
        name, _, value = part.partition("=")
        out[name] = value
    return out


def verify_token(
    token: object,
    token_type: str,
    audience: str,
    keys: dict[str, str],
    now: float,
    authority: JwtAuthority | None = None,
) -> TokenCheck:
    """Check one put-token request; the audience is the one named in the request."""
    if token_type == "jwt" and authority is not None:
        if not isinstance(token, str):
            return TokenCheck(400, "The token is not a string.")
        try:
            claims = authority.verify(token, now)
        except JwtError as error:
            return TokenCheck(401, str(error))
        # An Entra ID token authorizes its identity on the whole namespace (roles decide the
        # rest); the grant covers the entity the put-token named, until the token expires.
        return TokenCheck(202, "Accepted", audience_path(audience), float(claims["exp"]))
    if not keys:
        return TokenCheck(202, "Accepted", "", None)
    if not isinstance(token, str):
        return TokenCheck(400, "The token is not a string.")
    if token_type == "jwt":
        return TokenCheck(401, "This emulator accepts only SAS tokens when keys are configured.")
    fields = _fields(token)
    if not {"sr", "sig", "se", "skn"} <= fields.keys():
        return TokenCheck(401, "Malformed SharedAccessSignature token.")
    key = keys.get(fields["skn"])
    if key is None:
        return TokenCheck(401, f"Unknown SharedAccessKeyName '{fields['skn']}'.")
    signed = f"{fields['sr']}\n{fields['se']}".encode()
    expected = base64.b64encode(hmac.new(key.encode(), signed, hashlib.sha256).digest()).decode()
    if not hmac.compare_digest(expected, unquote_plus(fields["sig"])):
        return TokenCheck(401, "InvalidSignature: the token has an invalid signature.")
    try:
        expiry = float(fields["se"])
    except ValueError:
        return TokenCheck(401, "The token has an invalid expiry.")
    if expiry < now:
        return TokenCheck(401, "ExpiredToken: the token has expired.")
    granted = audience_path(unquote_plus(fields["sr"]))
    wanted = audience_path(audience)
    if granted and not (wanted == granted or wanted.startswith(granted + "/")):
        return TokenCheck(401, f"The token's audience '{granted}' does not cover '{wanted}'.")
    return TokenCheck(202, "Accepted", granted, expiry)


def make_sas_token(audience: str, key_name: str, key: str, expiry: int) -> str:
    """Build a SAS token (used by tests and by clients of the fault API)."""
    from urllib.parse import quote_plus

    resource = quote_plus(audience)
    signed = f"{resource}\n{expiry}".encode()
    sig = base64.b64encode(hmac.new(key.encode(), signed, hashlib.sha256).digest()).decode()
    return f"SharedAccessSignature sr={resource}&sig={quote_plus(sig)}&se={expiry}&skn={key_name}"
