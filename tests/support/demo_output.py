"""What ``pysparksources demo --batches 2`` must print (the README's main job)."""

from __future__ import annotations


def check_two_batch_demo(stdout: str) -> None:
    """Two batches of 1500 rows per query line, lag from LagListener, a short exact summary."""
    lines = stdout.splitlines()
    produced = [line for line in lines if line.startswith("pyrate -> pyeventhub")]
    consumed = [line for line in lines if line.startswith("pyeventhub -> pyfile")]

    def rows(line: str) -> int:
        return int(line.split(":")[1].split()[0])

    # --batches 2: exactly two batches written, each (the first included) with rows.
    assert [rows(line) for line in produced] == [1500, 1500], stdout
    assert consumed and all(rows(line) > 0 for line in consumed), stdout
    assert sum(rows(line) for line in consumed) == 3000
    assert all("latency" in line and "lag" in line for line in produced + consumed)
    # Lag comes from pysparksources.monitoring.LagListener: rows for pyrate, events and
    # seconds behind the newest enqueued time for pyeventhub.
    assert all(line.endswith(" rows") for line in produced), stdout
    assert all(" events, >= " in line and "behind the newest" in line for line in consumed)
    summary = stdout.split("\nSummary\n", 1)[1]
    assert "rows in           3000 (pyrate, 2 batches)" in summary
    assert (
        f"rows out          3000 (Spark's parquet reader; the reader took {len(consumed)}"
        in summary
    )
    assert summary.count(" ms, p95 ") == 2
    assert "lag at the end    0 events" in summary
    assert "exactly once      yes: values 0..2999, each exactly once" in summary
    assert len(summary.splitlines()) <= 10
