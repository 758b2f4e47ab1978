"""What ``pysparksources demo`` prints (the README's main job): checked on a real run (the wheel
test) and on the samples the documentation shows (tests/core/test_cli_demo_docs.py)."""

from __future__ import annotations

import re

ROWS_PER_BATCH = 1500  # the demo's; --batches N writes N batches of it
DEFAULT_BATCHES = 8  # `pysparksources demo` without --batches


def check_demo(stdout: str, batches: int, output: str | None = None) -> None:
    """``batches`` batches of 1500 rows per query line, lag from LagListener, a short exact
    summary; ``output``: the --output folder the run was given (None: it prints no path)."""
    total = batches * ROWS_PER_BATCH
    lines = stdout.splitlines()
    produced = [line for line in lines if line.startswith("pyrate -> pyeventhub")]
    consumed = [line for line in lines if line.startswith("pyeventhub -> pyfile")]

    def rows(line: str) -> int:
        return int(line.split(":")[1].split()[0])

    # --batches N: exactly N batches written, each (the first included) with rows.
    assert [rows(line) for line in produced] == [ROWS_PER_BATCH] * batches, stdout
    assert consumed and all(rows(line) > 0 for line in consumed), stdout
    assert sum(rows(line) for line in consumed) == total
    assert all("latency" in line and "lag" in line for line in produced + consumed)
    # Lag comes from pysparksources.monitoring.LagListener: rows for pyrate; events for
    # pyeventhub, with how far behind the newest event in words a newcomer reads (no "?").
    assert all(line.endswith(" rows") for line in produced), stdout
    behind = re.compile(
        r" lag +\d+ events, (caught up|time behind not known yet|\d+\.\d(-\d+\.\d)? s behind)$"
    )
    assert all(behind.search(line) for line in consumed), stdout
    assert consumed[-1].endswith(" 0 events, caught up"), stdout
    assert "?" not in "\n".join(produced + consumed)
    assert "lag: rows or events not read yet." in stdout  # the legend of that column
    head = stdout.split("\npyrate -> pyeventhub", 1)[0]
    if output is None:  # the temporary folder is deleted at the end: its path is not shown
        assert "parquet output in a temporary folder, deleted at the end" in head, head
        assert "/pysparksources-demo-" not in stdout
    else:
        assert f"parquet output in {output} (kept)" in head, head
    summary = stdout.split("\nSummary\n", 1)[1]
    assert f"rows in           {total} (pyrate, {batches} batches)" in summary
    assert (
        f"rows out          {total} (Spark's parquet reader; the reader took {len(consumed)}"
        in summary
    )
    assert summary.count(" ms, p95 ") == 2
    assert "lag at the end    0 events" in summary
    assert f"exactly once      yes: values 0..{total - 1}, each exactly once" in summary
    if output is not None:
        assert f"output            {output} (parquet" in summary
    assert len(summary.splitlines()) <= 10


def check_two_batch_demo(stdout: str, output: str | None = None) -> None:
    """``pysparksources demo --batches 2``."""
    check_demo(stdout, 2, output)
