"""What Event Hubs refuses for good: a hub or consumer group that does not exist, a namespace
that does not resolve or where nothing listens; and SDK clients that give up on it at once.

azure-eventhub 5.15 retries every link error of a receiver *forever*: ``receive()`` counts its
retries per call, and a refused attach ends the call, so a receiver of a consumer group the
hub does not have re-attaches every second without ever calling ``on_error`` (a task then waits
receiverTimeout and blames missing events). Management requests and producers retry a
not-found reply, a refused connection or a host name that does not resolve for about 12 s
before they raise. The SDK's own retry policy lists ``amqp:not-found`` as not retryable, but
these loops do not consult it.

:func:`give_up_transport` is the SDK's pyamqp transport with one change: when the error is one of
:func:`gives_up`'s, the SDK error is raised where the SDK would retry, so its loops end at the
first refusal, the SDK error carrying the AMQP error (or the socket error) as ``__cause__``.
Clients take it through the SDK's ``amqp_transport`` keyword (see ``_connection``). Every
decision goes by AMQP condition and exception type, never by the service's wording, which is
not documented (and differs between the service and the emulators); so a not-found counts
only once a new link confirms it (:data:`CONFIRM`), which the callers see to.
"""

from __future__ import annotations

import functools
import socket
from collections.abc import Iterator
from typing import Any, Literal

__all__ = ["CONFIRM", "Refusal", "give_up_transport", "gives_up", "refusal", "resolver_error"]

Refusal = Literal["not-found", "refused", "unresolved"]

NOT_FOUND = "amqp:not-found"
# How many times amqp:not-found must come, each on a new link, before it counts as "does not
# exist". The service also sends it for passing trouble: Microsoft's .NET client reads it as
# "not found" only when the description says "The messaging entity ... could not be found"
# (Azure.Messaging.EventHubs, AmqpError.cs) and as a communication problem otherwise. Going
# by the condition alone, a second refusal on a new link is the confirmation.
CONFIRM = 2
# getaddrinfo's answers that the name does not exist (as opposed to EAI_AGAIN, a resolver
# that did not answer, worth a retry). EAI_NODATA is not defined everywhere.
_NO_SUCH_NAME = {socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME)}


def _chain(error: BaseException) -> Iterator[BaseException]:
    """``error`` and what caused it: ``__cause__``, ``__context__`` and pyamqp's
    ``inner_error`` (the socket error under an AMQP connection error)."""
    seen: set[int] = set()
    stack: list[Any] = [error]
    while stack:
        item = stack.pop()
        if not isinstance(item, BaseException) or id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        stack.extend((getattr(item, "inner_error", None), item.__context__, item.__cause__))


def _condition(error: BaseException) -> str | None:
    """The AMQP condition of a pyamqp error (``amqp:not-found``), else None."""
    condition = getattr(error, "condition", None)
    value = getattr(condition, "value", condition)
    if isinstance(value, bytes):
        return value.decode("ascii", "replace")
    return value if isinstance(value, str) else None


def refusal(error: BaseException) -> Refusal | None:
    """What ``error`` (an SDK error, or anything raised through one) says does not exist.

    ``not-found``: a link or a connection failed with ``amqp:not-found`` (a refused attach, a
    404 management reply: the hub or the consumer group is not there, or passing trouble:
    see :data:`CONFIRM`); a delivery refused with it is not one. ``refused``: a connection
    was refused. ``unresolved``: the host name did not resolve. None for anything else.
    """
    for item in _chain(error):
        if _condition(item) == NOT_FOUND and _link_or_connection_error(item):
            return "not-found"
        if isinstance(item, ConnectionRefusedError):
            return "refused"
        if isinstance(item, socket.gaierror):
            return "unresolved"
    # An SDK error whose cause was dropped still carries the condition it was built from:
    # EventHubError.error is the part after "amqp:" ("not-found").
    from azure.eventhub.exceptions import ConnectError, ConnectionLostError

    for item in _chain(error):
        if isinstance(item, (ConnectError, ConnectionLostError)) and item.error == "not-found":
            return "not-found"
    return None


def _link_or_connection_error(error: BaseException) -> bool:
    from azure.eventhub._pyamqp.error import AMQPConnectionError, AMQPLinkError

    return isinstance(error, (AMQPConnectionError, AMQPLinkError))


def resolver_error(error: BaseException) -> socket.gaierror | None:
    """The resolver's error under ``error``, if a host name did not resolve."""
    return next((item for item in _chain(error) if isinstance(item, socket.gaierror)), None)


def gives_up(error: BaseException, first_contact: bool) -> bool:
    """Whether a client stops retrying at ``error`` (a pyamqp error, as the SDK sees it).

    Always at ``amqp:not-found``. With ``first_contact`` (the first calls of a query, before
    the service ever answered) also at a refused connection and a name the resolver says does
    not exist: later in a query those are an emulator restarting or a resolver hiccup, which
    the SDK's retries ride out.
    """
    found = refusal(error)
    if found == "not-found":
        return True
    if not first_contact:
        return False
    if found == "refused":
        return True
    resolver = resolver_error(error)
    return resolver is not None and resolver.errno in _NO_SUCH_NAME


@functools.cache
def give_up_transport(first_contact: bool) -> type:
    """The SDK's pyamqp transport, raising instead of retrying where :func:`gives_up` says."""
    from azure.eventhub._transport._pyamqp_transport import PyamqpTransport

    class GiveUpTransport(PyamqpTransport):  # type: ignore[misc]
        """PyamqpTransport whose ``_handle_exception`` raises the errors not worth a retry.

        Every retry loop of the SDK (receivers, producers, management requests) passes the
        error it caught through ``_handle_exception`` and retries with what it returns; the
        SDK's own version already raises for some errors, so callers expect a raise there.
        """

        @staticmethod
        def _handle_exception(
            exception: BaseException, closable: Any, *, is_consumer: bool = False
        ) -> BaseException:
            error: BaseException = PyamqpTransport._handle_exception(  # type: ignore[no-untyped-call]
                exception, closable, is_consumer=is_consumer
            )
            if gives_up(exception, first_contact):
                raise error from exception
            return error

    GiveUpTransport.__name__ = "FirstContactTransport" if first_contact else "GiveUpTransport"
    return GiveUpTransport
