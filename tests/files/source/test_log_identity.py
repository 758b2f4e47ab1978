"""The source log's identity and cleanSource across restarts, driven in-process (no JVM).

Spark passes ``initialOffset()`` as the start of a fresh checkpoint and the offset from its WAL
after a restart; these tests call the reader exactly that way (see test_log_identity_spark.py
for the same through real queries).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from pysparksources._core.compat import ReadMaxFiles
from pysparksources.errors import CheckpointError
from pysparksources.files.planning import FilePartition
from pysparksources.files.reader import FileStreamReader
from pysparksources.files.source.source_log import LogEntry, SourceLog
from pysparksources.files.storage.filesystem import resolve
from support.pyfile_source import stream_reader

SCHEMA = StructType([StructField("id", LongType()), StructField("name", StringType())])
BASE = 1_700_000_000.0


def land(src: Path, name: str, mtime: float) -> Path:
    src.mkdir(parents=True, exist_ok=True)
    path = src / name
    path.write_text("1,a\n")
    os.utime(path, (mtime, mtime))
    return path


def reader(src: Path, log: Path, **extra: str) -> FileStreamReader:
    options = {"path": str(src), "format": "csv", "sourceLogLocation": str(log), **extra}
    return stream_reader(options, SCHEMA)


def planned(r: FileStreamReader, start: dict[str, Any], end: dict[str, Any]) -> list[str]:
    parts = [p for p in r.partitions(start, end) if isinstance(p, FilePartition)]
    return sorted(Path(s.path).name for p in parts for s in p.splits)


def test_fresh_checkpoint_on_a_used_log_is_refused_and_restarts_work(tmp_path: Path) -> None:
    src, log = tmp_path / "in", tmp_path / "log"
    for i in range(3):
        land(src, f"f{i}.csv", BASE + i)
    one = ReadMaxFiles(1)

    # Batch 0 reaches the log, then the run dies before Spark's WAL holds its offset: the
    # checkpoint is still fresh and the log unclaimed, so the next run may start from scratch.
    r = reader(src, log)
    initial = r.initialOffset()
    assert initial == {"logOffset": -1}
    lost = r.latestOffset(initial, one)
    assert lost["logOffset"] == 0 and (log / "identity.json").exists()
    assert not (log / "claimed.json").exists()
    r.stop()

    r = reader(src, log)
    end = r.latestOffset(r.initialOffset(), one)
    assert end == {"logId": lost["logId"], "logOffset": 1}  # batches 0 and 1 in one offset
    assert planned(r, r.initialOffset(), end) == ["f0.csv", "f1.csv"]
    assert (log / "claimed.json").exists()  # Spark planned it, so its offset is in a WAL
    assert json.dumps(end) == json.dumps({"logId": end["logId"], "logOffset": 1})  # key order
    r.commit(end)
    r.stop()

    # (a) A fresh checkpoint on this log would read batches 0..1 again: refused at once.
    r = reader(src, log)
    with pytest.raises(CheckpointError) as refused:
        r.latestOffset(r.initialOffset(), one)
    message = str(refused.value)
    assert message.startswith("pyfile: sourceLogLocation ")
    assert "sourceLogLocation" in message and str(log) in message
    assert "new, empty sourceLogLocation" in message and "delete that folder" in message
    r.stop()

    # A restart hands back the WAL's offset: accepted. The replayed batch plans the same files.
    r = reader(src, log)
    assert planned(r, r.initialOffset(), end) == ["f0.csv", "f1.csv"]
    nxt = r.latestOffset(end, one)
    assert nxt == {"logId": end["logId"], "logOffset": 2}
    r.stop()

    # (b) A checkpoint of this log pointed at another used log is refused, naming both ids.
    other_src, other_log = tmp_path / "in2", tmp_path / "log2"
    land(other_src, "g.csv", BASE)
    o = reader(other_src, other_log)
    other_end = o.latestOffset(o.initialOffset(), one)
    o.partitions(o.initialOffset(), other_end)
    o.stop()
    o = reader(other_src, other_log)
    with pytest.raises(CheckpointError, match="belong to source log") as mismatch:
        o.latestOffset(end, one)
    assert end["logId"] in str(mismatch.value) and other_end["logId"] in str(mismatch.value)
    o.stop()
    # ... and so is one pointed at an empty (or deleted) log.
    empty = reader(src, tmp_path / "empty-log")
    with pytest.raises(CheckpointError, match="holds no source log"):
        empty.latestOffset(end, one)
    empty.stop()


def test_logs_and_offsets_from_before_ids_keep_working(tmp_path: Path) -> None:
    src, log = tmp_path / "in", tmp_path / "log"
    land(src, "a.csv", BASE)
    late = land(src, "b.csv", BASE + 1)
    old = SourceLog(resolve(str(log)))  # the layout older versions wrote: no identity.json
    old.acquire(60)
    old.add(0, [LogEntry(str(src / "a.csv"), int(BASE * 1000), 0, 4)], [])
    old.release()

    r = reader(src, log)
    with pytest.raises(CheckpointError, match="fresh checkpoint"):
        r.latestOffset(r.initialOffset(), ReadMaxFiles(5))  # cannot tell: refused
    r.stop()

    r = reader(src, log, cleanSource="delete")
    legacy = {"logOffset": 0}  # what an older checkpoint's WAL holds
    assert planned(r, {"logOffset": -1}, legacy) == ["a.csv"]
    nxt = r.latestOffset(legacy, ReadMaxFiles(5))
    assert nxt["logOffset"] == 1 and "logId" in nxt  # adopted: offsets carry the id from now on
    r.commit(legacy)  # the old run's last batch, committed when this run builds its first
    assert planned(r, legacy, nxt) == [late.name]
    assert r.latestOffset(nxt, ReadMaxFiles(5)) == nxt
    r.stop()
    assert not (src / "a.csv").exists() and late.exists()


@pytest.mark.parametrize("mode", ["delete", "archive"])
def test_clean_source_covers_every_batch_after_restarts(tmp_path: Path, mode: str) -> None:
    src, log, archive = tmp_path / "in", tmp_path / "log", tmp_path / "archive"
    files = [land(src, f"f{i}.csv", BASE + i) for i in range(6)]
    options = {"cleanSource": mode, "sourceArchiveDir": str(archive)}
    one = ReadMaxFiles(1)

    # Run 1: batches 0..2; Spark commits 0 and 1 during the run, 2 only in the next run.
    r = reader(src, log, **options)
    offsets = [r.initialOffset()]
    for _ in range(3):
        offsets.append(r.latestOffset(offsets[-1], one))
        r.partitions(offsets[-2], offsets[-1])
        if len(offsets) > 2:
            r.commit(offsets[-2])
    r.stop()
    # Run 2 writes batch 3 to the log and dies before Spark's WAL holds its offset.
    r = reader(src, log, **options)
    r.latestOffset(offsets[-1], one)
    r.stop()
    # Run 3: Spark's batch 3 spans log batches 3 and 4; commit(2) of run 1's last batch.
    r = reader(src, log, **options)
    spanning = r.latestOffset(offsets[-1], one)
    assert spanning["logOffset"] == 4
    assert planned(r, offsets[-1], spanning) == ["f3.csv", "f4.csv"]
    r.commit(offsets[-1])
    r.stop()
    # Run 4 commits the spanning batch first thing: every file of it is cleaned, not just f4.
    r = reader(src, log, **options)
    last = r.latestOffset(spanning, one)
    r.commit(spanning)
    r.stop()
    assert last["logOffset"] == 5
    assert [f.exists() for f in files] == [False] * 5 + [True]
    if mode == "archive":
        archived = sorted(p.name for p in archive.rglob("*.csv"))
        assert archived == [f"f{i}.csv" for i in range(5)]
    assert json.loads((log / "cleaned.json").read_text()) == {"cleanedThrough": 4}


@pytest.mark.parametrize("planted", ["outside/secret.csv", "in/../outside/secret.csv"])
def test_a_log_entry_outside_the_source_path_is_never_read_nor_cleaned(
    tmp_path: Path, planted: str
) -> None:
    """The log is read back: an edited entry must not point reads or cleanSource elsewhere."""
    src, log = tmp_path / "in", tmp_path / "log"
    land(src, "a.csv", BASE)
    secret = land(tmp_path / "outside", "secret.csv", BASE)
    r = reader(src, log, cleanSource="delete")
    one = ReadMaxFiles(1)
    end = r.latestOffset(r.initialOffset(), one)
    r.stop()
    batch = log / "0"
    entry = json.loads(batch.read_text().splitlines()[1])
    entry["path"] = str(tmp_path / planted)
    batch.write_text("v1\n" + json.dumps(entry) + "\n")

    r = reader(src, log, cleanSource="delete")
    with pytest.raises(CheckpointError) as caught:
        r.partitions(r.initialOffset(), end)
    message = str(caught.value)
    assert "source log batch 0 in" in message and "secret.csv" in message
    assert "not a file below the source path" in message
    r.commit(end)  # cleanSource of batch 0: refused the same way, logged, nothing deleted
    r.stop()
    assert secret.exists() and (src / "a.csv").exists()
