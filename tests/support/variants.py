"""Which tests run over Spark Connect as well as on the classic session.

A test that takes the ``session`` fixture runs twice, classic and Connect. Connect changes what
happens in the client: where option and schema errors arrive, how a failed query reports,
registration from the client, listeners (they run client-side), values collected and converted
in the client's time zone. It does not change what the sources and sinks do: their code runs
in the server's Python workers either way. So every test of where an error reaches the caller,
of secrets, registration, listeners and time zones runs both, as does at least one end-to-end
stream per source and sink; a test that only works a source's semantics harder (parity
matrices, restarts, knobs, how bad events are routed) runs classic only, marked with
:data:`CLASSIC_ONLY`.
"""

from __future__ import annotations

from typing import Any

import pytest

CLASSIC_ONLY = pytest.mark.parametrize("session", ["classic"], indirect=True)

# A module's own ``session`` fixture with these params keeps the classic run in the fast tier
# and moves the Connect run to the slow one (where its half adds time but little that the fast
# tier's other Connect tests do not show); CLASSIC_ONLY still narrows it to classic.
SESSIONS_CONNECT_SLOW = ["classic", pytest.param("connect", marks=pytest.mark.slow)]


def session_of(request: pytest.FixtureRequest) -> Any:
    """The session a ``session`` parameter names: the classic one or the Connect one."""
    return request.getfixturevalue("spark" if request.param == "classic" else "connect_spark")
