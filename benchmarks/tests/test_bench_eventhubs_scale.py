"""``bench eventhubs-scale``'s pure pieces: partition shares, receiver figures, worker memory."""

from __future__ import annotations

from typing import Any

from benchmarks.eventhubs_scale import _memory_for, receiver_figures, shares


def test_shares_deal_every_partition_and_event_once() -> None:
    dealt = shares(32, 1_000_003, 2)
    assert [sorted(map(int, share)) for share in dealt] == [
        list(range(0, 32, 2)),
        list(range(1, 32, 2)),
    ]
    assert sum(sum(share.values()) for share in dealt) == 1_000_003
    assert dealt[0]["0"] == 31_251 and dealt[1]["3"] == 31_250
    # More processes than partitions: one partition each, no empty process.
    assert [list(share) for share in shares(2, 10, 4)] == [["0"], ["1"]]


def _line(executor: str, pid: int, partition: str, reuse: str, events: int) -> dict[str, Any]:
    return {"executorId": executor, "pid": pid, "partition": partition, "reuse": reuse,
            "events": events}  # fmt: skip


def test_receiver_figures_count_per_executor_and_worker() -> None:
    lines = [
        _line("0", 10, "0", "miss", 5),
        _line("0", 10, "1", "miss", 5),
        _line("0", 10, "0", "hit", 5),
        _line("0", 11, "2", "miss", 5),
        _line("1", 20, "3", "miss", 7),
        _line("1", 20, "3", "skip", 7),
    ]
    assert receiver_figures(lines) == {
        "0": {"tasks": 4, "events": 20, "receivers_opened": 3, "receivers_reused": 1,
              "python_workers": 2, "max_partitions_per_worker": 2},
        "1": {"tasks": 2, "events": 14, "receivers_opened": 1, "receivers_reused": 1,
              "python_workers": 1, "max_partitions_per_worker": 1},
    }  # fmt: skip


def test_a_worker_has_room_for_its_executor() -> None:
    assert _memory_for("1g") == "2g"
    assert _memory_for("512m") == "2g"
    assert _memory_for("3g") == "4g"
    assert _memory_for("2560m") == "4g"
