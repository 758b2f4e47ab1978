"""SDK clients whose management calls and producer links open without the SDK's 50 ms naps.

azure-eventhub (5.15, read in its source) opens every management call (partition ids,
partition properties) on a new connection and waits for it with ``while not client_ready():
time.sleep(0.05)``. Each ``client_ready()`` reads one frame (the socket read blocks up to
0.2 s, so it does not spin), and a management call needs about eight of them (open, begin, the
CBS links and put-token, the ``$management`` links): ~0.4 s per call against a server that
answers in 2 ms, twice in a query's first ``latestOffset`` (ids, then properties): 0.85 of its
0.9 s, measured against pysparksources-emulator. A producer's first send waits the same way
(~0.45 s per link). Receivers do not: their links are ready at the first look.

:func:`prompt` makes a client's management and send handlers finish the handshake inside
``client_ready()`` itself, polling again after 1 ms instead of 50 ms, so the SDK's loop never
naps: a management call then takes ~15 ms against the emulator. Nothing else changes: the same
frames, the same errors, raised from the same calls.

The hook is the SDK's transport object, an attribute of its clients (no private module is
imported: see ``tests/core/test_no_private_imports.py``). If a release renames it, :func:`prompt`
leaves the client as it is and it works as before, only slower; ``tests/eventhubs`` checks
that the hook still takes.
"""

from __future__ import annotations

import functools
import logging
import time
from typing import Any, TypeVar

__all__ = ["is_prompt", "prompt"]

log = logging.getLogger(__name__)
C = TypeVar("C")

_QUICK_POLLS = 200  # a handshake takes ~8; past this many, poll at the SDK's own pace
_QUICK_NAP_S = 0.001
_SDK_NAP_S = 0.05
_HOOK = "_amqp_transport"  # the SDK client's transport (PyamqpTransport): static factories
_FACTORIES = ("create_mgmt_client", "create_send_client")


def prompt(client: C) -> C:
    """``client`` (an SDK consumer or producer client), its handshakes made prompt; unchanged
    when the SDK has no hook for it."""
    transport = getattr(client, _HOOK, None)
    if not isinstance(transport, type) or not all(hasattr(transport, f) for f in _FACTORIES):
        log.debug("azure-eventhub has no transport hook here: handshakes keep the SDK's pace")
        return client
    faster = _prompt_transport(transport)
    setattr(client, _HOOK, faster)
    # A producer client builds its all-partitions producer in its constructor, with the
    # transport it had then: that one's handler (create_batch's link) must be prompt too.
    for built in (getattr(client, "_producers", None) or {}).values():
        if getattr(built, _HOOK, None) is transport:
            setattr(built, _HOOK, faster)
    return client


def is_prompt(client: Any) -> bool:
    """Whether :func:`prompt` took on ``client`` (for tests: an SDK release may move the hook)."""
    return getattr(getattr(client, _HOOK, None), "prompt_handshakes", False) is True


@functools.cache
def _prompt_transport(base: type) -> type:
    """A subclass of the SDK's transport whose handler factories return prompt handlers."""

    def wrapped(name: str) -> staticmethod[..., Any]:
        factory = getattr(base, name)

        def make(*args: Any, **kwargs: Any) -> Any:
            return _prompt_handler(factory(*args, **kwargs))

        return staticmethod(make)

    namespace: dict[str, Any] = {name: wrapped(name) for name in _FACTORIES}
    namespace["prompt_handshakes"] = True
    return type(f"Prompt{base.__name__}", (base,), namespace)


def _prompt_handler(handler: Any) -> Any:
    """``handler.client_ready()`` that returns only once the handler is ready (or raises, as
    the SDK's own call does: a refused or lost connection, the CBS timeout)."""
    step = getattr(handler, "client_ready", None)
    if step is None:
        return handler

    def client_ready() -> bool:
        polls = 0
        while not step():
            polls += 1
            time.sleep(_QUICK_NAP_S if polls < _QUICK_POLLS else _SDK_NAP_S)
        return True

    handler.client_ready = client_ready
    return handler
