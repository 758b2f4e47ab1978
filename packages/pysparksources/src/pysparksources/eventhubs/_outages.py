"""How a read task rides out an outage of its partition, and what it says when it cannot.

One partition's links can fail while the others flow: the service refuses the attach
(``com.microsoft:server-busy``, ``amqp:resource-limit-exceeded``, ``amqp:internal-error``),
detaches the link mid-read, or keeps it attached and delivers nothing. azure-eventhub 5.15
hides the first two behind retries that never end (a refused attach ends its internal
receive call, which counts retries per call: see ``_refusals``), so receivers are built with
no SDK retry (:data:`RECEIVER_CLIENT`) and every failure reaches the task, which resumes on a
new link where the last one stopped (the receiver drops what it already passed: nothing is
read twice, nothing skipped).

The budget is time, ``receiverTimeout``, counted from the partition's last event (or from the
task's start): a partition may deliver nothing for that long, whatever the reason, before
the task fails. A flapping link that delivers between failures never spends it. Between
links the task pauses :data:`FIRST_PAUSE_S`, doubling up to :data:`MAX_PAUSE_S`: a refused
attach reaches the task about a second after it was sent (the SDK's keep-alive thread), so
a 60 s budget makes a few dozen attempts, not thousands. When the budget is spent the task
fails with one line naming the hub, the partition, the consumer group and the last failure's
AMQP condition; Spark retries the task where it allows (``spark.task.maxFailures``, 1 in local
mode), then fails the query, whose checkpoint still holds the batch: a restart reads it again,
whole.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from pysparksources.errors import ServiceTimeoutError
from pysparksources.eventhubs import NAME
from pysparksources.eventhubs._refusals import GIVE_UP_AT_ONCE, condition, refusal
from pysparksources.eventhubs.config import SourceConfig

__all__ = ["FIRST_PAUSE_S", "MAX_PAUSE_S", "RECEIVER_CLIENT", "OutageBudget"]

log = logging.getLogger(__name__)
# The SDK keywords of a receiver's client: no retry, so the task sees every failed link.
RECEIVER_CLIENT: dict[str, Any] = GIVE_UP_AT_ONCE
FIRST_PAUSE_S = 0.2
MAX_PAUSE_S = 5.0


def _reason(error: BaseException) -> str:
    """What a failed link says, for the log and the final error: the AMQP condition and the
    SDK's exception type, never the service's text (it may quote the link's address)."""
    kind = type(error).__name__
    found = condition(error)
    if found is not None:
        return f"{found} ({kind})"
    if refusal(error) == "refused":
        return f"connection refused ({kind})"
    return kind


class OutageBudget:
    """One read task's patience with its partition: until when it waits, how long it pauses
    before a new link, and the error once the partition stayed silent past receiverTimeout."""

    def __init__(
        self,
        config: SourceConfig,
        partition_id: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._config = config
        self._partition_id = partition_id
        self._clock = clock
        self.deadline: float = clock() + config.receiver_timeout_s
        self.failures = 0  # failed links since the partition's last event
        self._reason: str | None = None

    def until(self) -> float:
        """When waiting for the partition's next event must end (``time.monotonic()``)."""
        return self.deadline

    def progressed(self) -> None:
        """Events arrived: an outage, if there was one, is over."""
        self.deadline = self._clock() + self._config.receiver_timeout_s
        self.failures = 0
        self._reason = None

    def retry(self, error: BaseException, first: int, until: int) -> float:
        """Count a failed link; the pause before the next one.

        Raises the error naming the partition and ``error``'s condition when the pause would
        reach past the budget (sequence numbers ``first``..``until - 1`` were waited for).
        """
        self.failures += 1
        self._reason = _reason(error)
        pause = min(FIRST_PAUSE_S * 2.0 ** (self.failures - 1), MAX_PAUSE_S)
        left = self.deadline - self._clock()
        if pause >= left:
            raise self.exhausted(first, until) from None
        log.warning(
            "%s: receiver of partition %s of %s (consumer group %s) failed: %s; reconnecting "
            "at sequence number %d in %.1fs (%.0fs of receiverTimeout left)",
            NAME,
            self._partition_id,
            self._config.connection.describe(),
            self._config.consumer_group,
            self._reason,
            first,
            pause,
            left,
        )
        return pause

    def exhausted(self, first: int, until: int, note: str = "") -> ServiceTimeoutError:
        """The task's error: the partition delivered nothing for receiverTimeout.

        ``note`` adds what a consumer group check could not tell (``_receivers``).
        """
        cfg = self._config
        if self._reason is None:
            why = "its receiver link stayed attached but the service delivered nothing"
        else:
            times = "once" if self.failures == 1 else f"{self.failures} times in a row"
            why = f"its receiver link failed {times}, last with {self._reason}"
        return ServiceTimeoutError(
            NAME,
            f"partition {self._partition_id} of {cfg.connection.describe()} (consumer group "
            f"'{cfg.consumer_group}') delivered no event within receiverTimeout "
            f"({cfg.receiver_timeout_s:g}s) while reading sequence numbers {first}..{until - 1}: "
            f"{why}{note}; once the partition is served again, restart the query: it resumes "
            "from its checkpoint, this batch included",
        )
