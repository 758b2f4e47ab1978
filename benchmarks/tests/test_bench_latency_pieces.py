"""The latency benchmark's bookkeeping: percentiles and seeing a sink's batches become visible."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks._latency_pieces import ManifestWatcher, percentile, read_manifest


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.5) == 50
    assert percentile(values, 0.95) == 95
    assert percentile([7.0], 0.95) == 7
    assert percentile([], 0.5) == 0.0


def _manifest(path: Path, files: list[str]) -> None:
    entries = [json.dumps({"path": f, "size": 1, "action": "add"}) for f in files]
    path.write_text("\n".join(["v1", *entries]) + "\n")


def test_manifest_paths_come_back_as_local_paths(tmp_path: Path) -> None:
    _manifest(tmp_path / "0", ["file:///data/out/part%20one.parquet", "/data/out/b.parquet"])
    assert read_manifest(tmp_path / "0") == ["/data/out/part one.parquet", "/data/out/b.parquet"]
    (tmp_path / "1").write_text("v2\n")
    with pytest.raises(ValueError, match="not a v1"):
        read_manifest(tmp_path / "1")


def test_watcher_reports_each_file_once_across_compactions(tmp_path: Path) -> None:
    metadata = tmp_path / "_spark_metadata"
    metadata.mkdir()
    seen: list[str] = []
    watcher = ManifestWatcher(tmp_path, lambda path, at: seen.append(path))
    watcher.poll()
    assert seen == []
    _manifest(metadata / "0", ["file:///o/a"])
    (metadata / ".1.tmp").write_text("partial")
    watcher.poll()
    _manifest(metadata / "1", ["file:///o/b"])
    _manifest(metadata / "2.compact", ["file:///o/a", "file:///o/b", "file:///o/c"])
    watcher.poll()
    watcher.poll()
    assert seen == ["/o/a", "/o/b", "/o/c"]
