"""A source log belongs to one checkpoint: real queries on a classic session and over Connect.

Spark hands the source ``initialOffset()`` as the start of a fresh checkpoint and the offset
from its WAL after a restart (and, when the last batch did not commit, replays it through
``partitions(start, end)`` without asking for offsets first): all three paths run here.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from support.pyfile_source import ids_in, stream, write_parquet
from support.streams import progress, run_available_now

pytestmark = pytest.mark.spark


def failure(df: Any, checkpoint: Path) -> str:
    query = (
        df.writeStream.format("noop")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination(120)
    except Exception as error:
        return str(error)
    query.stop()
    raise AssertionError("the query did not fail")


@pytest.mark.slow
def test_a_source_log_belongs_to_one_checkpoint(session: Any, tmp_path: Path) -> None:
    src, other_src = tmp_path / "in", tmp_path / "other-in"
    log_a, log_b, out = tmp_path / "log-a", tmp_path / "log-b", tmp_path / "out"
    base = time.time() - 100
    for i in range(2):
        write_parquet(src / f"f{i}.parquet", range(i * 10, i * 10 + 10), base + i)
    write_parquet(other_src / "g.parquet", range(100, 103), base)

    # A fresh checkpoint: Spark starts from initialOffset(); every offset names log A.
    batches = progress(
        run_available_now(stream(session, src, log_a, maxFilesPerTrigger=1), out, tmp_path / "ck1")
    )
    ends = [b["sources"][0]["endOffset"] for b in batches if b["numInputRows"]]
    assert [e["logOffset"] for e in ends] == [0, 1]
    assert len({e["logId"] for e in ends}) == 1 and len(ends[0]["logId"]) == 32
    assert ids_in(session, out) == list(range(20))

    # (a) Another fresh checkpoint on log A would read its batches again: refused at start.
    message = failure(stream(session, src, log_a), tmp_path / "ck2")
    assert "sourceLogLocation" in message and str(log_a) in message
    assert "new, empty sourceLogLocation" in message and "delete that folder" in message

    # (b) Checkpoint 1 pointed at log B, which belongs to another checkpoint: refused.
    run_available_now(stream(session, other_src, log_b), tmp_path / "out-b", tmp_path / "ck3")
    message = failure(stream(session, src, log_b), tmp_path / "ck1")
    assert "belong to source log" in message and ends[0]["logId"] in message

    # A restart on log A from the WAL's offsets, with the last batch uncommitted: Spark
    # replays it from its offsets, then reads what landed since. Every row exactly once.
    last = max(int(p.name) for p in (tmp_path / "ck1" / "commits").iterdir() if p.name.isdigit())
    for name in (str(last), f".{last}.crc"):
        (tmp_path / "ck1" / "commits" / name).unlink()
    write_parquet(src / "late.parquet", range(20, 25), base + 5)
    batches = progress(
        run_available_now(stream(session, src, log_a, maxFilesPerTrigger=1), out, tmp_path / "ck1")
    )
    assert batches[0]["batchId"] == last  # the replayed batch
    assert ids_in(session, out) == list(range(25))
    assert all(b["sources"][0]["endOffset"]["logId"] == ends[0]["logId"] for b in batches)
