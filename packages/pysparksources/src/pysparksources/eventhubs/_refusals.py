"""What Event Hubs refuses for good: a hub or consumer group that does not exist, a namespace
that does not resolve or where nothing listens; told from the SDK's public errors only.

An :class:`azure.eventhub.exceptions.EventHubError` carries the AMQP condition it was built
from in its documented ``error`` attribute, the part after ``amqp:`` (``"not-found"``). A refused
link (a receiver's or sender's attach) raises ``ConnectionLostError``, a 404 management reply
``ConnectError``; a delivery refused with the same condition (``EventDataSendError``) is passing
trouble, not a missing entity. A connection that could not be made keeps the socket's error in
the standard ``__cause__``/``__context__`` chain: ``ConnectionRefusedError`` (nothing listens),
``socket.gaierror`` (the host name did not resolve).

azure-eventhub retries all of them: management requests and producers for about 12 s with its
defaults, a receiver *forever* (``receive()`` counts retries per call, a refused attach ends the
call, so ``on_error`` never comes). So the query's first calls use clients built with
:data:`GIVE_UP_AT_ONCE`, the SDK's documented retry keywords set to no retry: they raise at the
first error, which :func:`refusal` classifies; afterwards the query goes on with clients built
with the SDK's defaults, which ride out an emulator restart. Every decision goes by condition
and exception type, never by the service's wording, which is not documented (and differs between
the service and the emulators); so a not-found counts only once a new link or request confirms
it (:data:`CONFIRM`), which the callers see to.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "CONFIRM",
    "GIVE_UP_AT_ONCE",
    "AuthRefusal",
    "Refusal",
    "auth_refusal",
    "condition",
    "no_such_name",
    "refusal",
    "resolver_error",
]

Refusal = Literal["not-found", "refused", "unresolved"]

# SDK client keywords (documented on EventHubConsumerClient and EventHubProducerClient) for a
# client that raises at its first error: no retry, and no backoff sleep before raising it.
GIVE_UP_AT_ONCE: dict[str, Any] = {"retry_total": 0, "retry_backoff_factor": 0.0}
# How many times amqp:not-found must come, each on a new link, before it counts as "does not
# exist". The service also sends it for passing trouble: Microsoft's .NET client reads it as
# "not found" only when the description says "The messaging entity ... could not be found"
# (Azure.Messaging.EventHubs, AmqpError.cs) and as a communication problem otherwise. Going
# by the condition alone, a second refusal on a new link is the confirmation.
CONFIRM = 2
NOT_FOUND = "not-found"  # EventHubError.error: the AMQP condition without "amqp:"
# getaddrinfo's answers that the name does not exist (as opposed to EAI_AGAIN, a resolver
# that did not answer, worth a retry). EAI_NODATA is not defined everywhere.
_NO_SUCH_NAME = {socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME)}


def _chain(error: BaseException) -> Iterator[BaseException]:
    """``error`` and what caused it, through ``__cause__``, ``__context__`` and the SDK's
    documented ``EventHubError.details`` (where it keeps the error it wrapped)."""
    seen: set[int] = set()
    stack: list[BaseException | None] = [error]
    while stack:
        item = stack.pop()
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        details = getattr(item, "details", None)
        stack.extend(
            (
                item.__context__,
                item.__cause__,
                details if isinstance(details, BaseException) else None,
            )
        )


def _refused_link(error: BaseException) -> bool:
    """An SDK error saying a link, connection or management request met amqp:not-found."""
    from azure.eventhub.exceptions import ConnectError, ConnectionLostError

    return isinstance(error, (ConnectError, ConnectionLostError)) and error.error == NOT_FOUND


def refusal(error: BaseException) -> Refusal | None:
    """What ``error`` (an SDK error, or anything raised through one) says does not exist.

    ``not-found``: a link or a management request was refused with ``amqp:not-found`` (the
    hub or the consumer group is not there, or passing trouble: see :data:`CONFIRM`).
    ``refused``: a connection was refused. ``unresolved``: the host name did not resolve (for
    good or not: see :func:`no_such_name`). None for anything else.
    """
    for item in _chain(error):
        if _refused_link(item):
            return "not-found"
        if isinstance(item, ConnectionRefusedError):
            return "refused"
        if isinstance(item, socket.gaierror):
            return "unresolved"
    return None


def condition(error: BaseException) -> str | None:
    """The AMQP error condition ``error`` carries (``com.microsoft:server-busy``), if any.

    The SDK's documented ``EventHubError.error`` drops the condition's prefix (``server-busy``),
    which tells ``amqp:`` from ``com.microsoft:`` no more; the pyamqp error it wraps (in
    ``details`` and the ``__cause__`` chain) keeps the whole name. The short one is the
    fallback.
    """
    short = None
    for item in _chain(error):
        found = getattr(item, "condition", None)
        value = getattr(found, "value", found)
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        if isinstance(value, str) and value:
            return value
        named = getattr(item, "error", None)
        if short is None and isinstance(named, str):
            short = named
    return short


def resolver_error(error: BaseException) -> socket.gaierror | None:
    """The resolver's error under ``error``, if a host name did not resolve."""
    return next((item for item in _chain(error) if isinstance(item, socket.gaierror)), None)


def no_such_name(error: BaseException) -> bool:
    """Whether the resolver answered that the host name does not exist (not merely that it
    could not answer, which is worth the SDK's retries)."""
    resolver = resolver_error(error)
    return resolver is not None and resolver.errno in _NO_SUCH_NAME


@dataclass(frozen=True)
class AuthRefusal:
    """Authentication failed for good: ``option`` is the one to fix, ``reason`` what was said.

    ``by_service``: Event Hubs refused the token (put-token 401); else the identity provider
    (Entra ID) refused to issue one.
    """

    option: str
    reason: str
    by_service: bool


# Entra ID's documented error codes (AADSTS<n>, stable across wordings) -> the option to fix.
_ENTRA_CODES = {
    "AADSTS7000215": "clientSecret",  # invalid client secret
    "AADSTS7000222": "clientSecret",  # the secret expired
    "AADSTS700016": "clientId",  # no such application in the tenant
    "AADSTS90002": "tenantId",  # no such tenant
    "AADSTS900023": "tenantId",  # not a tenant id or name
}
# What MSAL says when the tenant's OpenID configuration cannot be had (an unknown tenant,
# or an authority that is not one).
_NO_AUTHORITY = "Unable to get authority configuration"


def auth_refusal(error: BaseException) -> AuthRefusal | None:
    """What ``error`` says about authentication, when it is decisive: Event Hubs refused the
    token (``AuthenticationError``), or azure-identity's ``ClientAuthenticationError`` names a
    known Entra ID error. None otherwise (an authority that did not answer is retried)."""
    from azure.core.exceptions import ClientAuthenticationError
    from azure.eventhub.exceptions import AuthenticationError

    for item in _chain(error):
        if isinstance(item, ClientAuthenticationError):
            text = str(item.message if hasattr(item, "message") else item)
            reason = text.splitlines()[0].strip() if text.strip() else type(item).__name__
            for code, option in _ENTRA_CODES.items():
                if re.search(rf"\b{code}\b", text):
                    return AuthRefusal(option, reason, by_service=False)
            if _NO_AUTHORITY in text:
                return AuthRefusal("tenantId", reason, by_service=False)
    for item in _chain(error):
        if isinstance(item, AuthenticationError):
            lines = [line.strip() for line in str(item).splitlines() if line.strip()]
            reason = " ".join(lines[:2]) or type(item).__name__  # "... failed. Status code: 401"
            return AuthRefusal("auth", reason, by_service=True)
    return None
