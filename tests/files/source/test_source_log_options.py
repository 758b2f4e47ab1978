"""The source log's compact interval and cleanup delay (no JVM): Spark's FileStreamSourceLog
rules for sourceLogCompactInterval, sourceLogCleanupDelay and sourceLogDeletion."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from pysparksources._core.compat import ReadMaxFiles
from pysparksources._core.option_table import Use
from pysparksources.errors import OptionError
from pysparksources.files.options import parse_options
from pysparksources.files.source.source_log import LogEntry, SourceLog, derive_interval
from pysparksources.files.storage.filesystem import resolve
from support.pyfile_source import stream_reader

SCHEMA = StructType([StructField("id", LongType()), StructField("name", StringType())])
HOUR_AGO = time.time() - 3600


def write(log: SourceLog, batches: range, history: list[LogEntry]) -> None:
    for batch in batches:
        entries = [LogEntry(f"/f{batch}", batch, batch, 7)]
        log.add(batch, entries, history)
        history.extend(entries)


def names(folder: Path) -> list[str]:
    return sorted((p.name for p in folder.iterdir() if p.name[0].isdigit()), key=_order)


def _order(name: str) -> int:
    return int(name.split(".")[0])


def age(folder: Path, when: float = HOUR_AGO) -> None:
    """Make every log file look written at ``when`` (Spark compares modification times)."""
    for path in folder.iterdir():
        os.utime(path, (when, when))


def opened(folder: Path, **options: Any) -> SourceLog:
    log = SourceLog(resolve(str(folder)), **options)
    log.acquire(60)
    return log


def test_compacts_every_interval_and_keeps_young_files(tmp_path: Path) -> None:
    folder = tmp_path / "log"
    log = opened(folder, compact_interval=3)
    history: list[LogEntry] = []
    write(log, range(8), history)
    # Spark's default delay (10 minutes): nothing superseded is old enough to go yet.
    assert names(folder) == ["0", "1", "2.compact", "3", "4", "5.compact", "6", "7"]
    assert (folder / "5.compact").read_text().count("\n") == 1 + 6  # v1 + batches 0..5
    fresh = SourceLog(resolve(str(folder)), compact_interval=3)
    assert [e.path for e in fresh.restore()] == [f"/f{i}" for i in range(8)]
    assert fresh.get(1) == [LogEntry("/f1", 1, 1, 7)]
    log.release()


def test_cleanup_delay_deletes_only_old_superseded_files(tmp_path: Path) -> None:
    folder = tmp_path / "log"
    log = opened(folder, compact_interval=3)
    history: list[LogEntry] = []
    write(log, range(5), history)  # 0 1 2.compact 3 4
    age(folder)
    write(log, range(5, 7), history)  # 5.compact: 0..4 are old enough, deleted
    assert names(folder) == ["5.compact", "6"]
    write(log, range(7, 9), history)  # 8.compact: 5 and 6 are young, kept
    assert names(folder) == ["5.compact", "6", "7", "8.compact"]
    age(folder, time.time() - 5)  # 5 s old: still young against 10 minutes ...
    assert log.delete_superseded(8) == []
    log.cleanup_delay_ms = 4000  # ... but old against 4 s, and the compact file itself stays
    assert log.delete_superseded(8) == [5, 6, 7]
    assert names(folder) == ["8.compact"]
    fresh = SourceLog(resolve(str(folder)), compact_interval=3)
    assert [e.path for e in fresh.restore()] == [f"/f{i}" for i in range(9)]
    log.release()


def test_zero_delay_deletes_at_once_and_deletion_false_keeps_all(tmp_path: Path) -> None:
    eager = opened(tmp_path / "eager", compact_interval=4, cleanup_delay_ms=0)
    write(eager, range(10), [])
    assert names(tmp_path / "eager") == ["7.compact", "8", "9"]
    eager.release()
    keep = opened(tmp_path / "keep", compact_interval=4, cleanup_delay_ms=0, deletion=False)
    write(keep, range(10), [])
    assert len(names(tmp_path / "keep")) == 10
    keep.release()


@pytest.mark.parametrize(
    ("wanted", "compacts", "expected"),
    [
        (5, [], 5),  # a new log: the option
        (3, [9, 19], 10),  # two compact files: their gap
        (3, [4, 9, 19], 10),  # the newest two
        (5, [11], 6),  # one: the smallest divisor of 12 at least 5 (Spark's example)
        (10, [19], 10),  # the option divides 20: kept
        (30, [19], 20),  # larger than the batches so far: 20
        (7, [19], 10),
        (13, [19], 20),  # no divisor of 20 between 13 and 10: 20 itself
        (1, [2], 1),
    ],
)
def test_interval_of_an_existing_log(wanted: int, compacts: list[int], expected: int) -> None:
    assert derive_interval(wanted, compacts) == expected


def test_an_existing_log_keeps_its_interval(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "log"
    log = opened(folder, compact_interval=3, deletion=False)
    history: list[LogEntry] = []
    write(log, range(7), history)  # 2.compact, 5.compact
    log.release()
    with caplog.at_level(logging.WARNING, logger="pysparksources.files.source.source_log"):
        again = opened(folder, compact_interval=4, deletion=False)
        assert again.restore()[-1].path == "/f6"
        assert again.compact_interval == 3
    assert "compacting every 3 batches, not every sourceLogCompactInterval=4" in caplog.text
    write(again, range(7, 9), history)
    assert names(folder)[-3:] == ["6", "7", "8.compact"]
    again.release()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="pysparksources.files.source.source_log"):
        same = SourceLog(resolve(str(folder)), compact_interval=3)
        assert same.compact_interval == 3
    assert not caplog.text  # the option agrees: no warning


def test_a_log_without_compact_files_takes_the_option(tmp_path: Path) -> None:
    """Batches written with interval 10 before any compaction: the new interval applies, and the
    compact file still holds every earlier batch (the caller passes the whole history)."""
    folder = tmp_path / "log"
    log = opened(folder)
    history: list[LogEntry] = []
    write(log, range(5), history)
    log.release()
    again = opened(folder, compact_interval=3)
    history = again.restore()
    write(again, range(5, 6), history)
    assert names(folder) == ["0", "1", "2", "3", "4", "5.compact"]
    assert [e.path for e in SourceLog(resolve(str(folder))).restore()] == [
        f"/f{i}" for i in range(6)
    ]
    again.release()


def test_the_reader_uses_the_options(tmp_path: Path) -> None:
    src, folder = tmp_path / "in", tmp_path / "log"
    src.mkdir()
    for i in range(5):
        path = src / f"f{i}.csv"
        path.write_text(f"{i},a\n")
        os.utime(path, (HOUR_AGO + i, HOUR_AGO + i))
    options = {
        "path": str(src),
        "format": "csv",
        "sourceLogLocation": str(folder),
        "sourceLogCompactInterval": "2",
        "sourceLogCleanupDelay": "0",
    }
    reader = stream_reader(options, SCHEMA)
    offset: Any = {"logOffset": -1}
    for _ in range(5):
        end = reader.latestOffset(offset, ReadMaxFiles(1))
        reader.commit(end)
        offset = end
    reader.stop()
    assert names(folder) == ["3.compact", "4"]


@pytest.mark.parametrize(
    ("option", "value", "accepted"),
    [
        ("sourceLogCompactInterval", "0", "expected an integer between 1 and"),
        ("sourceLogCompactInterval", "-3", "expected an integer between 1 and"),
        ("sourceLogCompactInterval", "ten", "expected an integer between 1 and"),
        ("sourceLogCleanupDelay", "-1s", "expected a duration such as 10s"),
        ("sourceLogCleanupDelay", "soon", "or a number of milliseconds"),
        ("sourceLogDeletion", "maybe", "expected true or false"),
    ],
)
def test_bad_values_are_refused(tmp_path: Path, option: str, value: str, accepted: str) -> None:
    with pytest.raises(OptionError) as caught:
        options = {"path": str(tmp_path), "sourceLogLocation": str(tmp_path / "log")}
        parse_options({**options, option: value}, Use.STREAM_READ)
    message = str(caught.value)
    assert message.startswith(f"pyfile: invalid value '{value}' for option '{option}'"), message
    assert accepted in message


def test_defaults_are_sparks_and_a_bare_delay_is_milliseconds(tmp_path: Path) -> None:
    config = parse_options({"path": str(tmp_path)}, Use.BATCH_READ)
    assert (config.log_compact_interval, config.log_cleanup_delay_ms) == (10, 600_000)
    assert config.log_deletion
    config = parse_options(
        {"path": str(tmp_path), "sourceLogCleanupDelay": "1500", "sourceLogDeletion": "false"},
        Use.BATCH_READ,
    )
    assert (config.log_cleanup_delay_ms, config.log_deletion) == (1500, False)
