"""``discovery.json``, notification discovery's record in the source log folder, read back with
every type checked: a damaged or hostile record is a CheckpointError naming the file, never a
raw Python error and never a silent reset (tests/files/source/test_notifications_discovery.py
shows it through a running source)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from pysparksources.errors import CheckpointError
from pysparksources.files.source.notifications.discovery_record import (
    DiscoveryRecord,
    parse_record,
    read_record,
    write_record,
)
from pysparksources.files.storage.filesystem import resolve
from support.json_values import SCALARS, jsonish

WHERE = "file:///log/discovery.json"
NOW_MS = 1_800_000_000_000
JSONISH = jsonish(10)
KEYS = ("startedMs", "existingListed", "lastBackfillMs")


@st.composite
def records(draw: st.DrawFn) -> bytes:
    """Records near the real ones (the right keys, any values), any JSON, any bytes."""
    choice = draw(st.integers(0, 2))
    if choice == 0:
        record = draw(st.dictionaries(st.sampled_from([*KEYS, "other"]), SCALARS | JSONISH))
        return json.dumps(record).encode()
    if choice == 1:
        return json.dumps(draw(JSONISH)).encode()
    return draw(st.binary(max_size=64))


@given(records())
@example(b'{"startedMs": 1700000000000, "lastBackfillMs": "x"}')
@example(b'{"startedMs": true}')
@example(b'{"startedMs": 1e400}')
@example(b"[" * 5000)
@example(b'{"startedMs": ' + b"9" * 5000 + b"}")
def test_fuzz_a_record_is_read_whole_or_refused_by_name(data: bytes) -> None:
    try:
        record = parse_record(data, WHERE, NOW_MS)
    except CheckpointError as error:
        assert WHERE in str(error) and "Delete the file" in str(error)
        assert len(str(error)) < 600
        return
    assert isinstance(record.started_ms, int) and 0 <= record.started_ms <= NOW_MS + 86_400_000
    assert isinstance(record.existing_listed, bool)
    assert record.last_backfill_ms is None or isinstance(record.last_backfill_ms, int)


def test_what_is_written_is_read_back(tmp_path: Path) -> None:
    location = resolve(str(tmp_path / "log" / "discovery.json"))
    now_ms = int(time.time() * 1000)
    assert read_record(location, now_ms) is None
    record = DiscoveryRecord(started_ms=now_ms - 5, existing_listed=True, last_backfill_ms=now_ms)
    write_record(location, record)
    assert read_record(location, now_ms) == record
    # Written whole through a temporary file: nothing else is left in the folder.
    assert [p.name for p in (tmp_path / "log").iterdir()] == ["discovery.json"]
    written: dict[str, Any] = json.loads((tmp_path / "log" / "discovery.json").read_text())
    assert written == {"startedMs": now_ms - 5, "existingListed": True, "lastBackfillMs": now_ms}
    # Records of earlier versions (no optional keys) and unknown keys are read.
    assert parse_record(b'{"startedMs": 5, "future": [1]}', WHERE, now_ms) == DiscoveryRecord(5)
